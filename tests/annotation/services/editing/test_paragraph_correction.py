"""Paragraph links corrected by researchers (or annotators: proposals, or applied directly when the project
says so), and the sentence candidates regenerated from them."""
from __future__ import annotations

import pytest

from annotation.models import (
    Adjudication,
    CandidatePair,
    Job,
    Label,
    ParagraphAlignment,
    ParagraphProposal,
    Status,
)
from annotation.services.alignment import paragraph_alignment as pa
from annotation.services.editing import paragraph_correction as pc
from annotation.services.editing.article_alignment import AlignmentInputError, resolve_documents
from tests import factories

COMPLEX = [
    ["The city council approved a new budget for public parks on Monday.", "The plan adds funding for playgrounds and trees."],
    ["Meanwhile, the local football team won its third championship in a row.", "Fans celebrated in the streets until midnight."],
    ["Scientists at the university discovered a new species of frog in the rainforest.", "The tiny frog is bright orange.",
     "It lives only on one mountain."],
]
SIMPLE = [
    ["The city council approved a new budget for parks.", "It pays for playgrounds and trees."],
    ["The football team won the championship again.", "Fans celebrated until midnight."],
    ["Scientists discovered a new kind of frog.", "The frog is bright orange."],
]


@pytest.fixture
def article(project):
    return factories.make_article(project, "News", {"adv": COMPLEX, "int": SIMPLE})


@pytest.fixture
def docs(article):
    return resolve_documents(article, None, None)


def active_links(docs) -> set[tuple[int, int]]:
    return set(pa.stored_links(*docs).filter(active=True).values_list("complex_paragraph__index", "simple_paragraph__index"))


def candidates(project, docs) -> set[tuple[str, str]]:
    run = pa.candidate_run(project, create=False)
    return set(CandidatePair.objects.filter(predictions__run=run, complex_document=docs[0], simple_document=docs[1])
               .values_list("complex_key", "simple_key"))


def test_automatic_links_are_computed_inline_with_a_lexical_similarity_without_storing_them(article, docs):
    state = pc.paragraph_state(article, *docs)
    assert state["origin"] == "computed" and state["similarity"] == "charngram"
    assert ([(link["complex"], link["simple"], link["source"]) for link in state["links"]]
            == [(0, 0, "auto"), (1, 1, "auto"), (2, 2, "auto")])
    assert not ParagraphAlignment.objects.exists()


def test_a_neural_project_similarity_still_computes_inline_with_a_lexical_one(article, docs):
    article.project.config = {"paragraph_alignment": {"similarity": "sbert"}}
    article.project.save()
    assert pc.paragraph_state(article, *docs)["similarity"] == "charngram"


def test_saving_stores_added_links_as_manual_and_removed_automatic_ones_as_inactive(users, article, docs):
    saved = pc.save_paragraph_links(users["rita"], article, *docs, [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1},
                                                                   {"complex": 2, "simple": 1}])
    assert (saved["added"], saved["removed"], saved["restored"]) == (1, 1, 0)
    rows = {(r.complex_paragraph.index, r.simple_paragraph.index): r for r in pa.stored_links(*docs)}
    assert rows[(2, 1)].source == "manual" and rows[(2, 1)].created_by == users["rita"] and rows[(2, 1)].active
    assert rows[(2, 2)].source == "auto" and not rows[(2, 2)].active
    assert rows[(0, 0)].source == "auto" and rows[(0, 0)].active
    state = pc.paragraph_state(article, *docs)
    assert state["origin"] == "stored"
    assert {(link["complex"], link["simple"]): link["active"] for link in state["links"]} == {
        (0, 0): True, (1, 1): True, (2, 1): True, (2, 2): False}


def test_saving_the_same_links_twice_changes_nothing_and_a_removed_link_can_come_back(users, article, docs):
    links = [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1}]
    pc.save_paragraph_links(users["rita"], article, *docs, links)
    before = list(ParagraphAlignment.objects.order_by("pk").values_list("pk", "active", "source"))
    again = pc.save_paragraph_links(users["rita"], article, *docs, links)
    assert (again["added"], again["removed"], again["restored"]) == (0, 0, 0)
    assert list(ParagraphAlignment.objects.order_by("pk").values_list("pk", "active", "source")) == before
    back = pc.save_paragraph_links(users["rita"], article, *docs, links + [{"complex": 2, "simple": 2}])
    assert back["restored"] == 1 and active_links(docs) == {(0, 0), (1, 1), (2, 2)}


def test_candidates_are_every_sentence_pair_within_the_aligned_paragraphs(users, article, docs):
    saved = pc.save_paragraph_links(users["rita"], article, *docs, [{"complex": 0, "simple": 0}, {"complex": 2, "simple": 2},
                                                                   {"complex": 2, "simple": 1}])
    # complex ¶0 = sentences 0-1, ¶2 = 4-6; simple ¶0 = 0-1, ¶1 = 2-3, ¶2 = 4-5
    expected = {(str(c), str(s)) for c in (0, 1) for s in (0, 1)} | {(str(c), str(s)) for c in (4, 5, 6) for s in (2, 3, 4, 5)}
    assert candidates(article.project, docs) == expected
    assert saved["candidates"]["pairs"] == saved["candidates"]["created"] == 4 + 12
    run = pa.candidate_run(article.project)
    assert run.method == "candidates" and run.status == Status.SUCCEEDED and run.pair_count == 16
    assert set(CandidatePair.objects.filter(predictions__run=run).values_list("origin", flat=True)) == {"candidate"}
    assert CandidatePair.objects.get(predictions__run=run, complex_key="4", simple_key="2").members.count() == 2


def test_resaving_replaces_the_candidates_without_duplicates_and_keeps_labelled_ones(users, article, docs):
    pc.save_paragraph_links(users["rita"], article, *docs, [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1}])
    run = pa.candidate_run(article.project)
    labelled = CandidatePair.objects.get(predictions__run=run, complex_key="2", simple_key="2")
    Label.objects.create(pair=labelled, annotator=users["anna"], value="aligned")
    gold = CandidatePair.objects.get(predictions__run=run, complex_key="3", simple_key="3")
    Adjudication.objects.create(pair=gold, value="aligned", provenance=Adjudication.IMPORTED)
    again = pc.save_paragraph_links(users["rita"], article, *docs, [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1}])
    assert (again["candidates"]["created"], again["candidates"]["deleted"]) == (0, 0)
    assert CandidatePair.objects.filter(predictions__run=run).count() == 8
    changed = pc.save_paragraph_links(users["rita"], article, *docs, [{"complex": 0, "simple": 0}, {"complex": 2, "simple": 2}])
    assert changed["candidates"] == {"run": run.pk, "pairs": 4 + 6, "created": 6, "deleted": 2, "kept_labelled": 2}
    assert candidates(article.project, docs) == ({(str(c), str(s)) for c in (0, 1) for s in (0, 1)}
                                                 | {(str(c), str(s)) for c in (4, 5, 6) for s in (4, 5)} | {("2", "2"), ("3", "3")})


def test_selected_candidates_take_the_top_complex_sentences_within_aligned_paragraphs(users, article, docs):
    article.project.config = {"candidates": "selected", "candidate_selection": {"measures": ["charngram", "tfidf"], "k": 1}}
    article.project.save()
    saved = pc.save_paragraph_links(users["rita"], article, *docs, [{"complex": 0, "simple": 0}, {"complex": 2, "simple": 2}])
    found = {(int(c), int(s)) for c, s in candidates(article.project, docs)}
    assert found == {(0, 0), (1, 1), (4, 4), (5, 5)}  # top-1 of both measures agree; ¶1 has no link
    assert saved["candidates"]["pairs"] == 4
    features = CandidatePair.objects.get(predictions__run=pa.candidate_run(article.project), complex_key="5", simple_key="5").features
    assert set(features) == {"charngram", "tfidf"}


def test_a_neural_candidate_measure_queues_the_regeneration_as_a_job(users, article, docs, django_capture_on_commit_callbacks):
    article.project.config = {"candidates": "selected", "candidate_selection": {"measures": ["charngram", "sbert"]}}
    article.project.save()
    saved = pc.save_paragraph_links(users["rita"], article, *docs, [{"complex": 0, "simple": 0}])
    job = Job.objects.get(pk=saved["candidates"]["job"])
    assert job.kind == "regenerate-candidates" and job.params == {"article": article.pk, "complex": docs[0].pk, "simple": docs[1].pk}
    assert candidates(article.project, docs) == set()


def test_paragraph_indices_that_do_not_exist_are_refused(users, article, docs):
    with pytest.raises(AlignmentInputError) as err:
        pc.save_paragraph_links(users["rita"], article, *docs, [{"complex": 7, "simple": 0}, {"complex": 0, "simple": "one"}])
    assert err.value.messages == ["link 1: complex paragraph 7 does not exist (the complex document has paragraphs 0–2)",
                                  "link 2: simple paragraph must be an integer index, got 'one'"]
    assert not ParagraphAlignment.objects.exists()


def test_an_annotators_correction_applies_directly_when_the_project_says_so(users, article, docs):
    article.project.config = {"paragraph_corrections": "direct"}
    article.project.save()
    saved = pc.save_paragraph_links(users["anna"], article, *docs, [{"complex": 0, "simple": 0}])
    assert saved["applied"] is True and saved["removed"] == 2
    assert active_links(docs) == {(0, 0)} and len(candidates(article.project, docs)) == 4
    assert not ParagraphProposal.objects.exists()


def test_who_applies_directly(users, project):
    assert pc.applies_directly(users["rita"], project) and pc.applies_directly(users["admin"], project)
    assert not pc.applies_directly(users["anna"], project)
    project.config = {"paragraph_corrections": "sometimes"}
    with pytest.raises(ValueError, match="not one of: proposals, direct"):
        pc.applies_directly(users["anna"], project)
