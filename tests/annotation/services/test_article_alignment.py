"""Whole-article alignment: links saved as labels, idempotently; what each role starts from."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, CandidatePair, Label, LabelScheme, PairSentence, Status, indices_key
from annotation.services import article_alignment as aa
from annotation.services import qc
from tests import factories

COMPLEX = [["C0 the river flooded the town.", "C1 residents left their homes."], ["C2 rain fell for days.", "C3 roads closed."]]
SIMPLE = [["S0 the river flooded the town.", "S1 people left."], ["S2 it rained and roads closed."]]


@pytest.fixture
def article(project):
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    return factories.make_article(project, "Flood", {"adv": COMPLEX, "int": SIMPLE})


@pytest.fixture
def docs(article):
    return aa.resolve_documents(article, None, None)


@pytest.fixture
def run(article, docs):
    """A succeeded run predicting C0→S0 (aligned), C1→S1 (aligned), C2+C3→S2 (partial)."""
    run = AlignmentRun.objects.create(project=article.project, method="jaccard", status=Status.SUCCEEDED)
    c, s = docs
    for ci, si, label in (([0], [0], "aligned"), ([1], [1], "aligned"), ([2, 3], [2], "partial")):
        factories.make_pair(run, article=article, complex_document=c, simple_document=s, complex_key=indices_key(ci),
                                     simple_key=indices_key(si), predicted_label=label, score=0.9, origin="model")
    return run


def labels_of(user) -> dict[tuple[str, str, int | None], str]:
    return {(lab.pair.complex_key, lab.pair.simple_key, lab.pair.run_id): lab.value
            for lab in Label.objects.filter(annotator=user).select_related("pair")}


def test_the_default_documents_are_the_first_adjacent_levels_and_the_run_the_latest_succeeded(article, docs, run):
    assert [d.level for d in docs] == ["adv", "int"]
    AlignmentRun.objects.create(project=article.project, method="candidates", status=Status.SUCCEEDED)
    AlignmentRun.objects.create(project=article.project, method="sbert", status=Status.FAILED)
    assert aa.resolve_run(article.project, None) == run


def test_a_document_of_another_article_is_refused_with_the_valid_choices(article, project):
    other = factories.make_article(project, "Other", {"adv": [["x."]], "int": [["y."]]})
    stranger = other.documents.first()
    with pytest.raises(aa.AlignmentInputError, match=f"document {stranger.pk} is not a version of this article"):
        aa.resolve_documents(article, stranger.pk, None)


def test_saving_links_creates_manual_pairs_labelled_by_the_annotator(users, article, docs, run):
    anna = users["anna"]
    saved = aa.save_links(anna, article, *docs, run, [{"complex": [0], "simple": [0], "label": "aligned"},
                                                    {"complex": [1], "simple": [1], "label": "partial"}])
    assert saved["links"] == 2 and saved["pairs_created"] == 2
    manual = CandidatePair.objects.filter(origin="manual")
    assert sorted(manual.values_list("complex_key", "simple_key")) == [("0", "0"), ("1", "1")]
    mine = labels_of(anna)
    assert mine[("0", "0", None)] == "aligned" and mine[("1", "1", None)] == "partial"


def test_model_pairs_the_annotator_removed_are_labelled_not_aligned(users, article, docs, run):
    anna = users["anna"]
    saved = aa.save_links(anna, article, *docs, run, [{"complex": [0], "simple": [0]}])
    assert saved["not_aligned"] == 2
    mine = labels_of(anna)
    assert mine[("1", "1", run.pk)] == "not-aligned" and mine[("2,3", "2", run.pk)] == "not-aligned"
    assert ("0", "0", run.pk) not in mine  # kept: the manual pair holds the label


def test_an_n_to_m_link_is_one_pair_with_every_sentence_and_contained_model_pairs_are_left_alone(users, article, docs, run):
    anna = users["anna"]
    aa.save_links(anna, article, *docs, run, [{"complex": [0, 1], "simple": [0, 1], "label": "aligned"}])
    pair = CandidatePair.objects.get(complex_key="0,1", simple_key="0,1")
    assert sorted(PairSentence.objects.filter(pair=pair).values_list("side", "sentence__index")) == [
        ("complex", 0), ("complex", 1), ("simple", 0), ("simple", 1)]
    mine = labels_of(anna)
    assert ("0", "0", run.pk) not in mine and ("1", "1", run.pk) not in mine
    assert mine[("2,3", "2", run.pk)] == "not-aligned"


def test_saving_the_same_links_twice_writes_nothing_new(users, article, docs, run):
    anna = users["anna"]
    links = [{"complex": [0], "simple": [0]}, {"complex": [2, 3], "simple": [2], "label": "partial"}]
    aa.save_links(anna, article, *docs, run, links)
    before = (CandidatePair.objects.count(), PairSentence.objects.count(), list(Label.objects.values_list("pk", "value", "updated_at")))
    again = aa.save_links(anna, article, *docs, run, links)
    assert again == {"links": 2, "pairs_created": 0, "labels_written": 0, "not_aligned": 0}
    assert (CandidatePair.objects.count(), PairSentence.objects.count(), list(Label.objects.values_list("pk", "value", "updated_at"))) == before


def test_a_link_removed_since_the_last_save_is_labelled_not_aligned_and_no_longer_shown(users, article, docs, run):
    anna = users["anna"]
    aa.save_links(anna, article, *docs, run, [{"complex": [0, 1], "simple": [0]}])
    aa.save_links(anna, article, *docs, run, [{"complex": [0], "simple": [0]}])
    assert labels_of(anna)[("0,1", "0", None)] == "not-aligned"
    view = aa.load_alignment(anna, article, *docs, run)
    assert view["source"] == "own"
    assert view["links"] == [{"complex": [0], "simple": [0], "label": "aligned"}]


def test_a_model_pair_marked_not_aligned_earlier_takes_the_label_of_the_link_that_now_contains_it(users, article, docs, run):
    anna = users["anna"]
    aa.save_links(anna, article, *docs, run, [])
    assert set(labels_of(anna).values()) == {"not-aligned"}
    aa.save_links(anna, article, *docs, run, [{"complex": [0], "simple": [0]}, {"complex": [1, 2, 3], "simple": [1, 2], "label": "partial"}])
    mine = labels_of(anna)
    assert (mine[("0", "0", run.pk)], mine[("1", "1", run.pk)], mine[("2,3", "2", run.pk)]) == ("aligned", "partial", "partial")
    assert aa.load_alignment(anna, article, *docs, run)["links"] == [
        {"complex": [0], "simple": [0], "label": "aligned"}, {"complex": [1, 2, 3], "simple": [1, 2], "label": "partial"}]


def test_a_blind_annotator_starts_from_an_empty_alignment(users, article, docs, run):
    view = aa.load_alignment(users["anna"], article, *docs, run)
    assert view["source"] == "empty" and view["links"] == [] and view["model_links"] == [] and view["runs"] == []


def test_annotators_see_the_models_links_when_the_project_shows_predictions(users, article, docs, run):
    article.project.config["show_predictions"] = True
    article.project.save()
    view = aa.load_alignment(users["anna"], article, *docs, run)
    assert view["source"] == "model"
    assert view["links"] == [{"complex": [0], "simple": [0], "label": "aligned"}, {"complex": [1], "simple": [1], "label": "aligned"},
                             {"complex": [2, 3], "simple": [2], "label": "partial"}]


def test_researchers_always_see_the_models_links_and_the_sentences_by_paragraph(users, article, docs, run):
    view = aa.load_alignment(users["rita"], article, *docs, run)
    assert view["source"] == "model" and len(view["links"]) == 3
    assert [[s["index"] for s in p["sentences"]] for p in view["complex"]["paragraphs"]] == [[0, 1], [2, 3]]
    assert view["simple"]["sentence_count"] == 3


def test_overlapping_links_and_indices_out_of_range_are_refused_with_every_problem(users, article, docs, run):
    with pytest.raises(aa.AlignmentInputError) as err:
        aa.save_links(users["anna"], article, *docs, run, [{"complex": [0], "simple": [0]}, {"complex": [0, 9], "simple": [1]},
                                                         {"complex": [1], "simple": [2], "label": "maybe"}])
    text = " | ".join(err.value.messages)
    assert "links 1 and 2 overlap: both contain complex sentence 0" in text
    assert "complex sentence 9 is out of range (the complex document has 4 sentences, 0–3)" in text
    assert "label 'maybe' is not one of: aligned, partial" in text
    assert not Label.objects.exists() and not CandidatePair.objects.filter(origin="manual").exists()


def test_a_save_faster_than_the_projects_minimum_is_refused_and_writes_nothing(users, article, docs, run):
    article.project.config["qc"] = {"min_seconds": 10}
    article.project.save()
    with pytest.raises(qc.LabelTooFast):
        aa.save_links(users["anna"], article, *docs, run, [{"complex": [0], "simple": [0]}], seconds=3)
    assert not Label.objects.exists()
    aa.save_links(users["anna"], article, *docs, run, [{"complex": [0], "simple": [0]}], seconds=42)
    assert Label.objects.filter(annotator=users["anna"], seconds=42).count() == 3


def test_the_projects_scheme_values_are_used_for_aligned_partial_and_not(users, article, docs, run):
    article.project.label_scheme = LabelScheme.objects.get(slug="wivico-validity")
    article.project.save()
    aa.save_links(users["anna"], article, *docs, run, [{"complex": [2, 3], "simple": [2], "label": "partial"}])
    assert set(labels_of(users["anna"]).values()) == {"partially-valid", "non-valid"}


def test_a_likert_project_cannot_use_the_whole_article_view(users, article, docs, run):
    article.project.label_scheme = LabelScheme.objects.get(slug="likert-human-eval")
    article.project.save()
    with pytest.raises(aa.AlignmentInputError, match="needs a categorical scheme"):
        aa.save_links(users["anna"], article, *docs, run, [])


def test_groups_sharing_a_sentence_merge_into_one_link():
    assert aa.components([((0,), (0,), "aligned"), ((1,), (0,), "aligned"), ((3,), (2,), "partial")]) == [
        aa.Link((0, 1), (0,), "aligned"), aa.Link((3,), (2,), "partial")]
