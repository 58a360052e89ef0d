"""A page of ``GET /api/pairs/`` built as plain rows (issue 37: the client reads a million pairs) answers
exactly what ``CandidatePairSerializer`` answers over prefetched objects, in every context."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, CandidatePair, Status, indices_key
from annotation.serializers import CandidatePairSerializer, pair_list_rows
from annotation.services.alignment import pair_rows
from annotation.services.alignment.run_saving import link_sentences
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def pairs(project):
    article = factories.make_article(project, "Bees", {
        "adv": [["Bees are in decline.", "Farmers worry."], ["A third sentence, in paragraph two."]],
        "ele": [["Bees are fewer.", "Farmers are sad."]]})
    other = factories.make_article(project, "Owls", {"adv": [["Owls hunt at night."]], "ele": [["Owls hunt."]]})
    first = AlignmentRun.objects.create(project=project, method="tfidf", status=Status.SUCCEEDED)
    second = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    made = []
    for art, c_ids, s_ids, run, extra in (
            (article, [0], [0], first, {"score": 0.9, "predicted_label": "aligned", "features": {"f": 1.5}}),
            (article, [2, 1], [1], second, {"score": None, "predicted_label": "", "origin": "import"}),
            (article, [0, 1], [0, 1], None, {"identical": True}),
            (other, [0], [0], first, {"score": 0.25, "predicted_label": "not-aligned"})):
        c, s = art.documents.order_by("rank")
        made.append(factories.make_pair(run, article=art, complex_document=c, simple_document=s,
                                        complex_key=indices_key(c_ids), simple_key=indices_key(s_ids), **extra))
    factories.make_pair(second, article=article, complex_document=made[0].complex_document,
                        simple_document=made[0].simple_document, complex_key=made[0].complex_key,
                        simple_key=made[0].simple_key, score=0.4, predicted_label="partial")
    link_sentences(CandidatePair.objects.all())
    return project, [first.pk, second.pk]


@pytest.mark.parametrize("context", [
    {}, {"run": "second"}, {"run": "first"}, {"blind_projects": "project"}, {"annotator_only_projects": "project"}])
def test_rows_equal_the_serializer_in_every_context(pairs, context):
    project, (first, second) = pairs
    ctx = {"blind_projects": set(), "annotator_only_projects": set(), "run": None}
    for key, value in context.items():
        ctx[key] = {"first": first, "second": second}[value] if key == "run" else {project.pk}
    page = list(pair_rows.list_rows(CandidatePair.objects.order_by("id")))  # what a list page reads
    objects = CandidatePair.objects.select_related("article").prefetch_related("members__sentence", "predictions__run")
    expected = CandidatePairSerializer(list(objects.order_by("id")), many=True, context=ctx).data
    got = pair_list_rows(page, {**ctx, **pair_rows.texts_and_predictions(page)})
    assert got == [dict(row) for row in expected]
    assert got[1]["complex_text"] == "Farmers worry. A third sentence, in paragraph two."  # document order


def test_the_pairs_list_answers_the_rows(pairs, api, users):
    project, _ = pairs
    data = api(users["rita"]).get(f"/api/pairs/?project={project.pk}&page_size=2").json()
    objects = CandidatePair.objects.select_related("article").prefetch_related("members__sentence", "predictions__run")
    expected = CandidatePairSerializer(list(objects.order_by("id")[:2]), many=True, context={
        "blind_projects": set(), "annotator_only_projects": set(), "run": None}).data
    assert data["results"] == [dict(row) for row in expected] and data["count"] == 4
