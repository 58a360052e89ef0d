"""Membership is checked on every read and write of a label (issue 36 item 11): a member removed from
a project, or whose account was deactivated, reads and writes none of their labels there — not through
``/api/labels/`` (list, detail, history, PATCH, POST), the queue API, the whole-article view or the
"My labels" and article pages. Before, a removed member could still PATCH their label (200; the
researcher saw the change) and list their labels with the article titles.

Runs on the test database (PostgreSQL in CI) and again on the embedded SQLite (marker ``backend``)."""
from __future__ import annotations

import pytest

from annotation.models import ArticleCompletion, Assignment, Label, LabelChange, Membership
from annotation.services.projects import people
from tests import labels
from tests.annotation.services.review.test_queue import build_queue, set_qc

pytestmark = pytest.mark.backend


@pytest.fixture
def world(users, project):
    """anna labelled the first pair of her queue (aligned) and was served the second."""
    set_qc(project)
    work, _ = build_queue(project, 3, title="Secret title of the flood")
    anna = users["anna"]
    assert labels.next_item(anna, project) == work[0]
    label, _ = labels.submit(anna, project, work[0].pk, value="aligned", seconds=2.0)
    assert labels.next_item(anna, project) == work[1]
    article = work[0].article
    return {"p": project.pk, "label": label.pk, "pair": work[0].pk, "next": work[1].pk, "article": article.pk}


def snapshot() -> tuple:
    return (list(Label.objects.values_list("pk", "pair_id", "annotator_id", "value", "comment").order_by("pk")),
            LabelChange.objects.count(), ArticleCompletion.objects.count(),
            sorted(Assignment.objects.values_list("pair_id", "annotator_id", "status")))


def api_calls(w: dict) -> list[tuple[str, str, dict | None]]:
    """Every API endpoint that reads or writes a label: (method, url, body)."""
    labels_url, queue = "/api/labels/", f"/api/projects/{w['p']}/queue/"
    article = f"/api/articles/{w['article']}/alignment/"
    return [
        ("get", f"{labels_url}{w['label']}/", None),
        ("get", f"{labels_url}{w['label']}/history/", None),
        ("patch", f"{labels_url}{w['label']}/", {"value": "not-aligned"}),
        ("post", labels_url, {"pair": w["pair"], "value": "not-aligned", "change": True}),
        ("post", labels_url, {"pair": w["next"], "value": "aligned"}),
        ("get", f"{queue}next/", None),
        ("post", f"{queue}submit/", {"pair": w["next"], "value": "aligned", "seconds": 2.0}),
        ("post", f"{queue}skip/", {"pair": w["next"]}),
        ("post", f"{queue}undo/", {}),
        ("get", f"{queue}context/{w['pair']}/", None),
        ("get", article, None),
        ("put", article, {"links": [], "removed": [{"complex": 0, "simple": 0}]}),
        ("post", article + "completion/", {"empty": True}),
        ("delete", article + "completion/", None),
    ]


def walk(api, client, user, w: dict, refused: set[int], page_refused: set[int]) -> None:
    before = snapshot()
    anna = api(user)
    for method, url, body in api_calls(w):
        response = getattr(anna, method)(url, body, format="json") if body is not None else getattr(anna, method)(url)
        assert response.status_code in refused, (method, url, response.status_code, response.content[:300])
        assert b"Secret title" not in response.content, (method, url)
    for url in ("/api/labels/", "/api/labels/?mine=1", f"/api/labels/?mine=1&project={w['p']}"):
        response = anna.get(url)
        assert response.status_code in refused | {200}, (url, response.status_code)
        if response.status_code == 200:
            assert response.json()["results"] == [] if "results" in response.json() else response.json() == []
    for url in (f"/projects/{w['p']}/my-labels/", f"/articles/{w['article']}/align/"):
        response = client.get(url)
        assert response.status_code in page_refused, (url, response.status_code)
        assert b"Secret title" not in response.content, url
    assert snapshot() == before


def test_a_removed_member_reads_and_writes_none_of_their_labels(api, client, users, project, world):
    anna = users["anna"]
    client.force_login(anna)
    assert api(anna).get(f"/api/labels/{world['label']}/").status_code == 200  # while a member
    membership = Membership.objects.get(project=project, user=anna)
    assert api(users["rita"]).delete(f"/api/projects/{project.pk}/members/{membership.pk}/").status_code == 204
    anna.refresh_from_db()
    client.force_login(anna)  # removal ends her sessions; a fresh one must not help
    walk(api, client, anna, world, refused={403, 404}, page_refused={404})
    # the researcher still sees the label as it was
    assert api(users["rita"]).get(f"/api/labels/{world['label']}/").json()["value"] == "aligned"


def test_a_deactivated_member_reads_and_writes_none_of_their_labels(api, client, users, project, world):
    anna = users["anna"]
    client.force_login(anna)
    people.set_active(anna, False, by=users["admin"])
    anna.refresh_from_db()
    walk(api, client, anna, world, refused={401, 403, 404}, page_refused={302, 403, 404})
