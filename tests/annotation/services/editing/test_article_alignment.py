"""Whole-article alignment: links saved as labels (only what the annotator judged), idempotently; what
each role starts from; complete / reopen; the complete document pairs training reads."""
from __future__ import annotations

import pytest

from annotation.models import (
    AlignmentRun,
    ArticleCompletion,
    CandidatePair,
    Label,
    LabelChange,
    LabelScheme,
    PairSentence,
    Status,
    indices_key,
)
from annotation.services.editing import article_alignment as aa
from annotation.services.editing import completion as ac
from annotation.services.editing import links
from annotation.services.review import qc
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


def labels_of(user) -> dict[tuple[str, str], str]:
    return {(lab.pair.complex_key, lab.pair.simple_key): lab.value
            for lab in Label.objects.filter(annotator=user).select_related("pair")}


def writes() -> tuple:
    """Everything a save could write: pairs, their sentences, labels (with their times) and history."""
    return (CandidatePair.objects.count(), PairSentence.objects.count(),
            list(Label.objects.values_list("pk", "value", "updated_at")), LabelChange.objects.count())


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


def test_new_links_become_manual_1to1_pairs_labelled_per_link_with_the_article_as_source(users, article, docs, run):
    anna = users["anna"]
    saved = aa.save_links(anna, article, *docs, run, [{"complex": [0, 1], "simple": [1], "label": "aligned"},
                                                    {"complex": 2, "simple": 2, "label": "partial"}])
    assert saved == {"links": 3, "pairs_created": 2, "labels_written": 3, "not_aligned": 0, "version": saved["version"]}
    manual = CandidatePair.objects.filter(origin="manual")
    assert sorted(manual.values_list("complex_key", "simple_key")) == [("0", "1"), ("2", "2")]  # C1→S1 is predicted
    assert labels_of(anna) == {("0", "1"): "aligned", ("1", "1"): "aligned", ("2", "2"): "partial"}
    assert set(Label.objects.values_list("source", flat=True)) == {"article"}


def test_model_links_the_annotator_did_not_touch_get_no_label(users, article, docs, run):
    """A researcher sees the model's links but saves only one new link of their own: the model's
    three links were neither kept on screen nor reported removed, so nothing is said about them."""
    rita = users["rita"]
    saved = aa.save_links(rita, article, *docs, run, [{"complex": [1], "simple": [0]}])
    assert saved["labels_written"] == 1 and saved["not_aligned"] == 0
    assert labels_of(rita) == {("1", "0"): "aligned"}


def test_a_removed_model_link_gets_exactly_one_not_aligned_label_and_kept_ones_their_link_label(users, article, docs, run):
    rita = users["rita"]
    shown = aa.load_alignment(rita, article, *docs, run)
    assert shown["source"] == "model" and len(shown["links"]) == 4  # the predicted C2+C3→S2 is two links
    kept = [link for link in shown["links"] if link["complex"] != [1]]
    saved = aa.save_links(rita, article, *docs, run, kept, removed=[{"complex": [1], "simple": [1]}])
    assert saved["links"] == 3 and saved["labels_written"] == 4 and saved["not_aligned"] == 1
    assert labels_of(rita) == {("0", "0"): "aligned", ("1", "1"): "not-aligned", ("2", "2"): "partial",
                               ("3", "2"): "partial"}
    assert Label.objects.filter(value="not-aligned").count() == 1


def test_a_link_both_on_screen_and_removed_is_refused(users, article, docs, run):
    with pytest.raises(aa.AlignmentInputError, match="link C0 → S0 is both on screen and removed"):
        aa.save_links(users["rita"], article, *docs, run, [{"complex": [0], "simple": [0, 1]}],
                      removed=[{"complex": [0], "simple": [0]}])
    assert not Label.objects.exists()


def test_a_blind_annotator_removing_their_own_link_labels_only_that_link_not_aligned(users, article, docs, run):
    anna = users["anna"]
    aa.save_links(anna, article, *docs, run, [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1}])
    saved = aa.save_links(anna, article, *docs, run, [{"complex": 0, "simple": 0}], removed=[{"complex": 1, "simple": 1}])
    assert saved["not_aligned"] == 1 and labels_of(anna) == {("0", "0"): "aligned", ("1", "1"): "not-aligned"}


def test_a_predicted_n_to_m_pair_is_shown_as_its_links_and_saved_on_1to1_pairs(users, article, docs, run):
    anna = users["anna"]
    article.project.config["show_predictions"] = True
    article.project.save()
    view = aa.load_alignment(anna, article, *docs, run)
    assert [g["kind"] for g in view["groups"]] == ["1:1", "1:1", "fusion"]
    aa.save_links(anna, article, *docs, run, [{"complex": [3, 2], "simple": [2], "label": "aligned"}])
    assert labels_of(anna) == {("2", "2"): "aligned", ("3", "2"): "aligned"}
    assert not Label.objects.filter(pair__complex_key="2,3").exists()  # never one label for many links


def test_a_split_is_one_1to1_pair_per_link_with_its_sentences(users, article, docs, run):
    anna = users["anna"]
    aa.save_links(anna, article, *docs, run, [{"complex": 0, "simple": 0, "label": "partial"},
                                            {"complex": 0, "simple": 1, "label": "aligned"}])
    pair = CandidatePair.objects.get(complex_key="0", simple_key="1")
    assert pair.origin == "manual"
    assert sorted(PairSentence.objects.filter(pair=pair).values_list("side", "sentence__index")) == [
        ("complex", 0), ("simple", 1)]
    view = aa.load_alignment(anna, article, *docs, run)
    assert view["groups"] == [{"complex": [0], "simple": [0, 1], "kind": "split", "label": "mixed", "links": [
        {"complex": [0], "simple": [0], "label": "partial"}, {"complex": [0], "simple": [1], "label": "aligned"}]}]


def test_saving_the_same_links_twice_writes_nothing(users, article, docs, run):
    rita = users["rita"]
    links = [{"complex": [0], "simple": [0]}, {"complex": [2, 3], "simple": [2], "label": "partial"}]
    aa.save_links(rita, article, *docs, run, links, removed=[{"complex": [1], "simple": [1]}], seconds=30)
    before = writes()
    again = aa.save_links(rita, article, *docs, run, links, removed=[{"complex": [1], "simple": [1]}], seconds=30)
    assert (again["links"], again["pairs_created"], again["labels_written"], again["not_aligned"]) == (3, 0, 0, 0)
    assert writes() == before


def test_only_links_this_tab_removed_become_not_aligned_with_their_history(users, article, docs, run):
    anna = users["anna"]
    aa.save_links(anna, article, *docs, run, [{"complex": [0, 1], "simple": [0]}, {"complex": [3], "simple": [2]}])
    # a save that leaves C1→S0 off screen without listing it as removed says nothing about it
    saved = aa.save_links(anna, article, *docs, run, [{"complex": [0], "simple": [0]}])
    assert saved["labels_written"] == 0 and labels_of(anna)[("1", "0")] == "aligned"
    saved = aa.save_links(anna, article, *docs, run, [{"complex": [0], "simple": [0]}, {"complex": [3], "simple": [2]}],
                          removed=[{"complex": 1, "simple": 0}])
    assert saved["labels_written"] == 1 and saved["not_aligned"] == 1
    assert labels_of(anna) == {("1", "0"): "not-aligned", ("0", "0"): "aligned", ("3", "2"): "aligned"}
    change = LabelChange.objects.get()
    assert (change.old_value, change.new_value, change.source, change.changed_by) == ("aligned", "not-aligned", "article", anna)
    view = aa.load_alignment(anna, article, *docs, run)
    assert view["source"] == "own"
    assert view["links"] == [{"complex": [0], "simple": [0], "label": "aligned"}, {"complex": [3], "simple": [2], "label": "aligned"}]


def test_a_queue_label_on_an_n_to_m_pair_counts_for_each_link_unless_the_link_has_its_own(users, article, docs, run):
    rita = users["rita"]
    group = CandidatePair.objects.get(complex_key="2,3", simple_key="2")
    Label.objects.create(pair=group, annotator=rita, value="partial", source="queue")
    assert aa.own_links(rita, *docs, article.project.label_scheme) == [aa.Link(2, 2, "partial"), aa.Link(3, 2, "partial")]
    aa.save_links(rita, article, *docs, run, [], removed=[{"complex": 3, "simple": 2}])
    assert aa.own_links(rita, *docs, article.project.label_scheme) == [aa.Link(2, 2, "partial")]


def test_the_per_item_minimum_time_does_not_apply_and_the_time_is_shared_over_the_labels_written(users, article, docs, run):
    article.project.config["qc"] = {"min_seconds": 10}
    article.project.save()
    anna = users["anna"]
    aa.save_links(anna, article, *docs, run, [{"complex": [0], "simple": [0]}, {"complex": [1], "simple": [1]}], seconds=3)
    assert sorted(Label.objects.filter(annotator=anna).values_list("seconds", "source")) == [(1.5, "article"), (1.5, "article")]


@pytest.mark.parametrize("seconds", [-1, True, float("nan"), "ten"])
def test_a_bad_time_is_refused(users, article, docs, run, seconds):
    with pytest.raises(aa.AlignmentInputError, match="'seconds' must be a non-negative number"):
        aa.save_links(users["anna"], article, *docs, run, [{"complex": [0], "simple": [0]}], seconds=seconds)


def test_an_excluded_annotator_cannot_save(users, article, docs, run):
    qc.exclude(users["anna"], article.project, "test accuracy too low")
    with pytest.raises(qc.AnnotatorExcluded):
        aa.save_links(users["anna"], article, *docs, run, [{"complex": [0], "simple": [0]}])
    assert not Label.objects.exists() and not CandidatePair.objects.filter(origin="manual").exists()


def test_a_blind_annotator_starts_from_an_empty_alignment(users, article, docs, run):
    view = aa.load_alignment(users["anna"], article, *docs, run)
    assert view["source"] == "empty" and view["links"] == [] and view["model_links"] == [] and view["runs"] == []


def test_annotators_see_the_models_links_when_the_project_shows_predictions(users, article, docs, run):
    article.project.config["show_predictions"] = True
    article.project.save()
    view = aa.load_alignment(users["anna"], article, *docs, run)
    assert view["source"] == "model"
    assert view["links"] == [{"complex": [0], "simple": [0], "label": "aligned"}, {"complex": [1], "simple": [1], "label": "aligned"},
                             {"complex": [2], "simple": [2], "label": "partial"}, {"complex": [3], "simple": [2], "label": "partial"}]


def test_researchers_always_see_the_models_links_and_the_sentences_by_paragraph(users, article, docs, run):
    view = aa.load_alignment(users["rita"], article, *docs, run)
    assert view["source"] == "model" and len(view["links"]) == 4
    assert [[s["index"] for s in p["sentences"]] for p in view["complex"]["paragraphs"]] == [[0, 1], [2, 3]]
    assert view["simple"]["sentence_count"] == 3


def test_overlapping_links_with_their_own_labels_are_saved_and_read_back(users, article, docs, run):
    anna = users["anna"]
    links = [{"complex": 0, "simple": 0, "label": "aligned"}, {"complex": 0, "simple": 1, "label": "partial"},
             {"complex": 1, "simple": 1, "label": "aligned"}]
    aa.save_links(anna, article, *docs, run, links)
    view = aa.load_alignment(anna, article, *docs, run)
    assert view["links"] == [{"complex": [c], "simple": [s], "label": label} for c, s, label in
                             ((0, 0, "aligned"), (0, 1, "partial"), (1, 1, "aligned"))]
    assert [(g["kind"], g["label"]) for g in view["groups"]] == [("n:m", "mixed")]


def test_invalid_links_are_refused_with_every_problem(users, article, docs, run):
    with pytest.raises(aa.AlignmentInputError) as err:
        aa.save_links(users["anna"], article, *docs, run, [{"complex": [0], "simple": [1]}, {"complex": [0, 9], "simple": [1],
                                                         "label": "partial"}, {"complex": [1], "simple": [2], "label": "maybe"}])
    text = " | ".join(err.value.messages)
    assert "link C0 → S1 is given twice, as aligned and as partial" in text
    assert "complex sentence 9 is out of range (the complex document has 4 sentences, 0–3)" in text
    assert "label 'maybe' is not one of: aligned, partial" in text
    assert not Label.objects.exists() and not CandidatePair.objects.filter(origin="manual").exists()


def test_a_save_based_on_an_older_version_is_refused_with_what_changed(users, article, docs, run):
    anna = users["anna"]
    loaded = aa.load_alignment(anna, article, *docs, run)
    other_tab = aa.load_alignment(anna, article, *docs, run)
    aa.save_links(anna, article, *docs, run, [{"complex": 0, "simple": 0, "label": "partial"}], based_on=loaded["version"],
                  base=loaded["links"])
    before = writes()
    with pytest.raises(aa.AlignmentConflict) as err:
        aa.save_links(anna, article, *docs, run, [{"complex": 1, "simple": 1}], based_on=other_tab["version"],
                      base=other_tab["links"])
    assert writes() == before
    assert err.value.changes == {"added": [{"complex": [0], "simple": [0], "label": "partial"}], "removed": [],
                                 "relabelled": []}
    assert err.value.version == aa.load_alignment(anna, article, *docs, run)["version"] != other_tab["version"]
    # a stale tab cannot turn the partial back into aligned either
    with pytest.raises(aa.AlignmentConflict):
        aa.save_links(anna, article, *docs, run, [{"complex": 0, "simple": 0}], based_on=loaded["version"])
    assert labels_of(anna) == {("0", "0"): "partial"}


def test_the_projects_scheme_values_are_used_for_aligned_partial_and_not(users, article, docs, run):
    article.project.label_scheme = LabelScheme.objects.get(slug="wivico-validity")
    article.project.save()
    rita = users["rita"]
    aa.save_links(rita, article, *docs, run, [{"complex": [2, 3], "simple": [2], "label": "partial"}],
                  removed=[{"complex": [0], "simple": [0]}])
    assert labels_of(rita) == {("2", "2"): "partially-valid", ("3", "2"): "partially-valid", ("0", "0"): "non-valid"}


def test_a_likert_project_cannot_use_the_whole_article_view(users, article, docs, run):
    article.project.label_scheme = LabelScheme.objects.get(slug="likert-human-eval")
    article.project.save()
    with pytest.raises(aa.AlignmentInputError, match="needs a categorical scheme"):
        aa.save_links(users["anna"], article, *docs, run, [])


def test_groups_are_derived_from_links_sharing_a_sentence():
    found = links.groups([links.Link(0, 0), links.Link(1, 0), links.Link(3, 2, "partial")])
    assert [(g.complex, g.simple, g.kind, g.label) for g in found] == [((0, 1), (0,), "fusion", "aligned"),
                                                                      ((3,), (2,), "1:1", "partial")]


def test_marking_a_document_pair_complete_stores_who_when_and_the_time_and_reopening_removes_it(users, article, docs, run):
    anna = users["anna"]
    aa.save_links(anna, article, *docs, run, [{"complex": [0], "simple": [0]}])
    labels = writes()
    completion, created = ac.mark_complete(anna, article, *docs, seconds=95.5)
    assert created and (completion.annotator, completion.article, completion.seconds) == (anna, article, 95.5)
    assert (completion.complex_document, completion.simple_document) == docs and completion.completed_at is not None
    again, created = ac.mark_complete(anna, article, *docs, seconds=200)
    assert not created and again.pk == completion.pk and again.seconds == 95.5  # the first declaration holds
    assert writes() == labels  # completing writes no labels
    state = aa.load_alignment(anna, article, *docs, run)
    assert state["completion"] == {"annotator": "anna", "completed_at": completion.completed_at.isoformat(), "seconds": 95.5}
    assert ac.reopen(anna, *docs) is True and not ArticleCompletion.objects.exists()
    assert ac.reopen(anna, *docs) is False
    assert aa.load_alignment(anna, article, *docs, run)["completion"] is None
    assert writes() == labels  # reopening keeps the labels


def test_researchers_see_everyones_completions_annotators_only_their_own(users, article, docs, run):
    ac.mark_complete(users["anna"], article, *docs, allow_empty=True)
    ac.mark_complete(users["rita"], article, *docs, allow_empty=True)
    assert [c["annotator"] for c in aa.load_alignment(users["rita"], article, *docs, run)["completions"]] == ["anna", "rita"]
    assert [c["annotator"] for c in aa.load_alignment(users["anna"], article, *docs, run)["completions"]] == ["anna"]


def test_a_likert_project_cannot_be_marked_complete(users, article, docs):
    article.project.label_scheme = LabelScheme.objects.get(slug="likert-human-eval")
    article.project.save()
    with pytest.raises(aa.AlignmentInputError, match="needs a categorical scheme"):
        ac.mark_complete(users["anna"], article, *docs)


def test_training_reads_only_complete_document_pairs_with_the_annotators_links(users, article, docs, run, project):
    anna, rita = users["anna"], users["rita"]
    aa.save_links(anna, article, *docs, run, [{"complex": [0, 1], "simple": [0]}, {"complex": [3], "simple": [2], "label": "partial"}])
    aa.save_links(anna, article, *docs, run, [{"complex": [0], "simple": [0]}, {"complex": [3], "simple": [2], "label": "partial"}],
                  removed=[{"complex": 1, "simple": 0}])
    aa.save_links(rita, article, *docs, run, [{"complex": [1], "simple": [1]}])  # rita never completes
    assert ac.complete_article_pairs(project) == []
    ac.mark_complete(anna, article, *docs, seconds=60)
    [done] = ac.complete_article_pairs(project)
    assert (done.article_id, done.complex_document, done.simple_document, done.annotator) == (article.pk, *docs, "anna")
    assert done.links == [aa.Link(0, 0, "aligned"), aa.Link(3, 2, "partial")]
    assert [g.kind for g in done.groups] == ["1:1", "1:1"]
    assert done.seconds == 60
    ac.reopen(anna, *docs)
    assert ac.complete_article_pairs(project) == []
