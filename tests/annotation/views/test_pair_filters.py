"""``/api/pairs/``: ordering by score and attributes, attribute and label filters, blind annotation."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, Assignment, CandidatePair, Project
from annotation.services.alignment import run_saving
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def pairs(project):
    """Four pairs of one run with known scores, labels and attributes (one lacks the attribute)."""
    article = factories.make_article(project, "Bees", {
        "adv": [["A0.", "A1.", "A2.", "A3."]], "ele": [["E0.", "E1.", "E2.", "E3."]]})
    c, s = article.documents.order_by("rank")
    run = AlignmentRun.objects.create(project=project, method="jaccard")
    rows = [  # (index, score, label, features)
        (0, 0.9, "aligned", {"gain_prob": 0.2, "pivot_keep": 1.0}),
        (1, 0.4, "partial", {"gain_prob": 0.95, "pivot_keep": 0.0}),
        (2, 0.7, "aligned", {"gain_prob": 0.6, "pivot_keep": 1.0}),
        (3, 0.1, "not-aligned", {"pivot_keep": 0.0}),
    ]
    made = {}
    for i, score, label, feats in rows:
        made[i] = factories.make_pair(run, article=article, complex_document=c, simple_document=s,
                                               complex_key=str(i), simple_key=str(i), score=score,
                                               predicted_label=label, features=feats)
    run_saving.link_sentences(CandidatePair.objects.filter(predictions__run=run))
    return made


def ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [p["id"] for p in response.json()["results"]]


def test_pairs_are_ordered_by_descending_score(api, users, pairs):
    got = ids(api(users["rita"]).get("/api/pairs/?ordering=-score"))
    assert got == [pairs[0].pk, pairs[2].pk, pairs[1].pk, pairs[3].pk]


def test_pairs_are_ordered_by_an_attribute_with_missing_values_last(api, users, pairs):
    client = api(users["rita"])
    assert ids(client.get("/api/pairs/?ordering=features__gain_prob")) == [pairs[0].pk, pairs[2].pk, pairs[1].pk, pairs[3].pk]
    assert ids(client.get("/api/pairs/?ordering=-features__gain_prob")) == [pairs[1].pk, pairs[2].pk, pairs[0].pk, pairs[3].pk]


def test_several_ordering_terms_apply_in_turn(api, users, pairs):
    got = ids(api(users["rita"]).get("/api/pairs/?ordering=-features__pivot_keep,score"))
    assert got == [pairs[2].pk, pairs[0].pk, pairs[3].pk, pairs[1].pk]


def test_attribute_bounds_filter_numerically(api, users, pairs):
    client = api(users["rita"])
    assert ids(client.get("/api/pairs/?f.gain_prob__gte=0.5&ordering=id")) == [pairs[1].pk, pairs[2].pk]
    assert ids(client.get("/api/pairs/?f.gain_prob__gte=0.5&f.gain_prob__lt=0.9")) == [pairs[2].pk]
    assert ids(client.get("/api/pairs/?f.pivot_keep=1")) == [pairs[0].pk, pairs[2].pk]
    assert ids(client.get("/api/pairs/?f.gain_prob__isnull=true")) == [pairs[3].pk]


def test_the_predicted_label_filter_accepts_one_or_several_labels(api, users, pairs):
    client = api(users["rita"])
    assert ids(client.get("/api/pairs/?label=aligned")) == [pairs[0].pk, pairs[2].pk]
    assert ids(client.get("/api/pairs/?label=partial,not-aligned")) == [pairs[1].pk, pairs[3].pk]


@pytest.mark.parametrize("query,param,message", [
    ("ordering=colour", "ordering", "cannot order by 'colour'"),
    ("ordering=features__bad-key", "ordering", "invalid attribute key 'bad-key'"),
    ("f.gain_prob__gte=high", "f.gain_prob__gte", "must be a float, got 'high'"),
    ("f.gain_prob__near=0.5", "f.gain_prob__near", "unknown operator 'near'"),
    ("f.gain_prob__gte=nan", "f.gain_prob__gte", "finite number"),
    ("f.gain_prob__isnull=maybe", "f.gain_prob__isnull", "true or false"),
    ("f.x;drop__gte=1", "f.x;drop__gte", "invalid attribute key"),
    ("label=", "label", "give a predicted label"),
])
def test_bad_filters_get_a_400_naming_the_parameter(api, users, pairs, query, param, message):
    response = api(users["rita"]).get(f"/api/pairs/?{query}")
    assert response.status_code == 400
    assert message in str(response.json()[param])


def test_annotators_cannot_sort_or_filter_by_predictions_in_a_blind_project(api, users, pairs, project):
    client = api(users["anna"])
    run = AlignmentRun.objects.get(project=project)
    for query in ("ordering=-score", "label=aligned", "f.gain_prob__gte=0.5", "ordering=features__gain_prob",
                  f"project={project.pk}&ordering=-score", f"run={run.pk}"):
        response = client.get(f"/api/pairs/?{query}")
        assert response.status_code == 403, query
        assert "blind annotation" in response.json()["detail"]
    # only the pairs she was given to label: which pairs exist is what the model proposed
    assert ids(client.get(f"/api/pairs/?project={project.pk}&ordering=id")) == []
    Assignment.objects.create(pair=pairs[1], annotator=users["anna"])
    plain = client.get(f"/api/pairs/?project={project.pk}&ordering=id")
    assert ids(plain) == [pairs[1].pk]
    first = plain.json()["results"][0]
    assert first["score"] is None and first["predicted_label"] == "" and first["features"] == {}
    assert first["origin"] is None
    assert client.get(f"/api/pairs/{pairs[2].pk}/").status_code == 404


def test_annotators_may_sort_by_score_when_the_project_shows_predictions(api, users, pairs, project):
    Project.objects.filter(pk=project.pk).update(config={"show_predictions": True})
    got = ids(api(users["anna"]).get("/api/pairs/?ordering=-score&label=aligned"))
    assert got == [pairs[0].pk, pairs[2].pk]


def test_a_blind_annotator_may_still_filter_projects_where_they_see_predictions(api, users, pairs, project):
    other = factories.make_project("Shown", anna="annotator")
    Project.objects.filter(pk=other.pk).update(config={"show_predictions": True})
    response = api(users["anna"]).get(f"/api/pairs/?project={other.pk}&ordering=-score")
    assert response.status_code == 200 and response.json()["count"] == 0
