"""Blind annotation over the API and pages: an annotator of a project that does not show predictions
sees no runs and only the pairs given to them; no annotator can tell a hidden test question apart
(no ``origin``, no ``is_test_question``); researchers see everything."""
from __future__ import annotations

import json

import pytest

from annotation.models import Adjudication, AlignmentRun, Assignment, Label, Status, indices_key
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(project, users):
    article = factories.make_article(project, "Bees", {"adv": [["Bees make honey.", "They live in hives.", "Queens."]],
                                                        "ele": [["Bees make honey.", "Hives.", "A queen."]]})
    c, s = article.documents.order_by("rank")
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    work = factories.make_pair(run, article=article, complex_document=c, simple_document=s, complex_key=indices_key([0]),
                               simple_key=indices_key([0]), score=0.9, predicted_label="aligned")
    test = factories.make_pair(None, article=article, complex_document=c, simple_document=s,
                               complex_key=indices_key([1]), simple_key=indices_key([1]), origin="import")
    Adjudication.objects.create(pair=test, value="aligned")  # gold: a hidden test question
    manual = factories.make_pair(None, article=article, complex_document=c, simple_document=s,
                                 complex_key=indices_key([2]), simple_key=indices_key([2]), origin="manual")
    unseen = factories.make_pair(run, article=article, complex_document=c, simple_document=s,
                                 complex_key=indices_key([0]), simple_key=indices_key([1]), score=0.2,
                                 predicted_label="not-aligned")
    Assignment.objects.create(pair=work, annotator=users["anna"])
    Assignment.objects.create(pair=test, annotator=users["anna"], is_test=True)
    Label.objects.create(pair=test, annotator=users["anna"], value="aligned", is_test_question=True)
    Label.objects.create(pair=manual, annotator=users["anna"], value="aligned", source="article")  # whole-article view
    return {"run": run, "work": work, "test": test, "manual": manual, "unseen": unseen}


def _show_predictions(project) -> None:
    project.config = {**(project.config or {}), "show_predictions": True}
    project.save()


def _ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return sorted(p["id"] for p in response.json()["results"])


def test_a_blind_annotator_lists_only_the_pairs_given_to_them(api, users, world, project):
    anna = api(users["anna"])
    assert _ids(anna.get(f"/api/pairs/?project={project.pk}")) == sorted(
        [world["work"].pk, world["test"].pk, world["manual"].pk])
    assert anna.get(f"/api/pairs/{world['unseen'].pk}/").status_code == 404
    assert anna.get(f"/api/pairs/?run={world['run'].pk}").status_code == 403
    # researchers, and annotators of a project that shows predictions, see every pair
    everything = sorted(p.pk for p in world.values() if not isinstance(p, AlignmentRun))
    assert _ids(api(users["rita"]).get(f"/api/pairs/?project={project.pk}")) == everything
    _show_predictions(project)
    assert _ids(anna.get(f"/api/pairs/?project={project.pk}")) == everything


def test_no_annotator_sees_a_pairs_origin(api, users, world, project):
    _show_predictions(project)  # even where they may see the model's predictions
    for pair in ("test", "manual", "work"):
        assert api(users["anna"]).get(f"/api/pairs/{world[pair].pk}/").json()["origin"] is None
    assert api(users["rita"]).get(f"/api/pairs/{world['test'].pk}/").json()["origin"] == "import"
    assert api(users["admin"]).get(f"/api/pairs/{world['manual'].pk}/").json()["origin"] == "manual"


def test_an_annotator_cannot_tell_which_of_their_labels_answered_a_test_question(api, users, world, project):
    mine = api(users["anna"]).get("/api/labels/?mine=1").json()["results"]
    assert len(mine) == 2 and {label["is_test_question"] for label in mine} == {None}
    detail = api(users["anna"]).get(f"/api/labels/{mine[0]['id']}/").json()
    assert detail["is_test_question"] is None
    for_rita = {lab["pair"]: lab["is_test_question"] for lab in api(users["rita"]).get("/api/labels/").json()["results"]}
    assert for_rita == {world["test"].pk: True, world["manual"].pk: False}


def test_a_blind_annotator_sees_no_runs(api, users, world, project, client):
    anna = api(users["anna"])
    assert anna.get(f"/api/runs/?project={project.pk}").json()["results"] == []
    assert anna.get(f"/api/runs/{world['run'].pk}/").status_code == 403
    assert [r["id"] for r in api(users["rita"]).get(f"/api/runs/?project={project.pk}").json()["results"]] == [
        world["run"].pk]
    client.force_login(users["anna"])
    assert 'id="runs"' not in client.get(f"/projects/{project.pk}/").content.decode()
    assert client.get(f"/projects/{project.pk}/runs/{world['run'].pk}/").status_code == 403
    _show_predictions(project)
    assert [r["id"] for r in anna.get(f"/api/runs/?project={project.pk}").json()["results"]] == [world["run"].pk]
    assert 'id="runs"' in client.get(f"/projects/{project.pk}/").content.decode()
    assert client.get(f"/projects/{project.pk}/runs/{world['run'].pk}/").status_code == 200


def test_a_researchers_project_page_lists_the_runs(users, world, project, client):
    client.force_login(users["rita"])
    assert 'id="runs"' in client.get(f"/projects/{project.pk}/").content.decode()


@pytest.mark.parametrize(("test_every", "gold"), [(1, 3), (2, 4), (3, 1), (3, 10), (5, 4), (4, 2)])
def test_the_queue_progress_does_not_give_a_test_question_away(api, users, project, test_every, gold):
    """"N done · M left": serving a hidden test question must not move "left" differently from
    serving real work, so done + left stays the same all the way through."""
    from tests.annotation.services.review.test_queue import build_queue, set_qc

    set_qc(project, test_every=test_every)
    work, tests = build_queue(project, 11, gold=gold)
    anna = api(users["anna"])
    state = anna.get(f"/api/projects/{project.pk}/queue/next/").json()
    totals, served = [], []
    while not state["done"]:
        totals.append(state["progress"]["total"])
        served.append(state["item"]["pair"])
        state = anna.post(f"/api/projects/{project.pk}/queue/submit/",
                          {"pair": state["item"]["pair"], "value": "aligned", "seconds": 1}, format="json").json()
    assert state["progress"]["remaining"] == 0
    assert any(pk in {g.pk for g in tests} for pk in served)  # test questions were served...
    assert set(totals) == {len(served)}, totals  # ...and the count said so from the start


# --- Blind means blind (issue 19 item 9): no payload an annotator reaches names a run, method, score or origin

REVEALING = {"run", "runs", "method", "score", "predicted_label", "features", "predictions", "origin", "prediction",
             "why", "model_links"}


def revealing_values(payload, path=""):
    """Every (path, value) under a revealing key whose value is not empty."""
    found = []
    if isinstance(payload, dict):
        for key, value in payload.items():
            if key in REVEALING and value not in (None, "", [], {}):
                found.append((f"{path}.{key}", value))
            found.extend(revealing_values(value, f"{path}.{key}"))
    elif isinstance(payload, list):
        for i, value in enumerate(payload):
            found.extend(revealing_values(value, f"{path}[{i}]"))
    return found


def alignment(client, world):
    pair = world["work"]
    return client.get(f"/api/articles/{pair.article_id}/alignment/?complex={pair.complex_document_id}"
                      f"&simple={pair.simple_document_id}")


def test_the_article_alignment_shows_a_blind_annotator_no_run(api, users, world):
    response = alignment(api(users["anna"]), world)
    assert response.status_code == 200
    assert response.json()["run"] is None and response.json()["runs"] == []
    assert revealing_values(response.json()) == []
    assert "jaccard" not in json.dumps(response.json())


def test_saving_the_alignment_answers_without_the_run_too(api, users, world):
    pair = world["work"]
    response = api(users["anna"]).put(
        f"/api/articles/{pair.article_id}/alignment/?complex={pair.complex_document_id}&simple={pair.simple_document_id}",
        {"links": [{"complex": [0], "simple": [0], "label": "aligned"}], "seconds": 5}, format="json")
    assert response.status_code == 200, response.content
    assert revealing_values(response.json()) == []


def test_researchers_and_seeing_annotators_get_the_run(api, users, world, project):
    run = world["run"]
    assert alignment(api(users["rita"]), world).json()["run"] == {"id": run.pk, "method": "jaccard"}
    _show_predictions(project)
    assert alignment(api(users["anna"]), world).json()["run"] == {"id": run.pk, "method": "jaccard"}


def test_no_pair_payload_a_blind_annotator_reaches_reveals_the_model(api, users, world, project):
    anna = api(users["anna"])
    listing = anna.get(f"/api/pairs/?project={project.pk}").json()["results"]
    assert listing and revealing_values(listing) == []
    for name in ("work", "test", "manual"):
        assert revealing_values(anna.get(f"/api/pairs/{world[name].pk}/").json()) == []
    labels = anna.get("/api/labels/?mine=1").json()["results"]
    assert labels and revealing_values(labels) == []
    article = world["work"].article_id
    assert revealing_values(anna.get(f"/api/articles/{article}/").json()) == []
    assert revealing_values(anna.get(f"/api/articles/?project={project.pk}").json()) == []


def test_the_queue_item_of_a_blind_annotator_reveals_nothing(api, users, project):
    from tests.annotation.services.review.test_queue import build_queue

    build_queue(project, 2)
    state = api(users["anna"]).get(f"/api/projects/{project.pk}/queue/next/").json()
    assert state["item"] is not None and revealing_values(state) == []
