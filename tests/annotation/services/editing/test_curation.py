"""Curation of two annotators' article alignments: agree / disagree / only-one classification, and
deciding a link writes adjudicated gold on its 1:1 pair with history and an audit event. (The document
workflow's to do / in progress / complete states: ``test_workflow.py``.)"""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, AdjudicationChange, AuditEvent, CandidatePair, Membership
from annotation.services.editing import article_alignment as aa
from annotation.services.editing import completion as ac
from annotation.services.editing import curation
from tests import factories

COMPLEX = [["C0 the river flooded the town.", "C1 residents left their homes."], ["C2 rain fell for days.", "C3 roads closed."]]
SIMPLE = [["S0 the river flooded the town.", "S1 people left."], ["S2 it rained and roads closed."]]


@pytest.fixture
def article(project, users):
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    Membership.objects.create(project=project, user=factories.make_user("bea"), role="annotator")
    return factories.make_article(project, "Flood", {"adv": COMPLEX, "int": SIMPLE})


@pytest.fixture
def docs(article):
    return aa.resolve_documents(article, None, None)


@pytest.fixture
def two(users, article, docs):
    """anna: C0→S0 aligned, C1→S1 aligned, C2→S2 partial. bea: C0→S0 aligned, C1→S1 partial,
    C3→S2 aligned, and C2→S2 explicitly not aligned (she removed it)."""
    from django.contrib.auth import get_user_model

    anna, bea = users["anna"], get_user_model().objects.get(username="bea")
    aa.save_links(anna, article, *docs, None, [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1},
                                               {"complex": 2, "simple": 2, "label": "partial"}])
    aa.save_links(bea, article, *docs, None, [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1, "label": "partial"},
                                              {"complex": 3, "simple": 2}], removed=[{"complex": 2, "simple": 2}])
    return anna, bea


def by_link(state: dict) -> dict[tuple[int, int], dict]:
    return {(r["complex"], r["simple"]): r for r in state["rows"]}


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("aligned", "aligned", "agree"), ("partial", "partial", "agree"), ("aligned", "partial", "disagree"),
    ("aligned", "not", "disagree"), ("not", "partial", "disagree"), ("aligned", None, "only_a"), (None, "partial", "only_b"),
    (None, None, None)])
def test_category_of_two_judgements(a, b, expected):
    assert curation.category(a, b) == expected


def test_links_are_classified_agree_disagree_and_only_one(article, docs, two):
    anna, bea = two
    state = curation.curation_state(article, *docs, anna, bea)
    rows = by_link(state)
    assert {k: (r["category"], r["a"], r["b"]) for k, r in rows.items()} == {
        (0, 0): ("agree", "aligned", "aligned"),
        (1, 1): ("disagree", "aligned", "partial"),     # same link, different label
        (2, 2): ("disagree", "partial", "not"),         # bea said not aligned
        (3, 2): ("only_b", None, "aligned"),            # anna said nothing about it
    }
    assert state["counts"] == {"agree": 1, "disagree": 2, "only_a": 0, "only_b": 1, "gold_only": 0, "decided": 0}
    assert [p["username"] for p in state["annotators"]] == ["anna", "bea"]
    assert state["a"] == {"username": "anna", "complete": False}


def test_a_complete_annotator_says_not_aligned_about_every_link_she_did_not_make(article, docs, two):
    anna, bea = two
    ac.mark_complete(anna, article, *docs)
    assert by_link(curation.curation_state(article, *docs, anna, bea))[(3, 2)]["category"] == "disagree"


def test_only_annotators_who_aligned_the_pair_can_be_compared(article, docs, two, users):
    with pytest.raises(curation.CurationError, match="'rita' has not aligned this pair of versions"):
        curation.resolve_annotator(article, *docs, "rita", "a")


def test_deciding_writes_adjudicated_gold_on_the_1to1_pair_with_history_and_audit(article, docs, two, users):
    anna, bea = two
    rita = users["rita"]
    saved = curation.decide_links(article, *docs, anna, bea, [
        {"complex": 1, "simple": 1, "decision": "b"},        # B's: partial
        {"complex": 2, "simple": 2, "decision": "a"},        # A's: partial
        {"complex": 3, "simple": 2, "decision": "a"},        # A said nothing: her version has no link
        {"complex": 0, "simple": 1, "decision": "aligned"},  # a link neither made
    ], rita)
    assert saved == {"decided": 4, "changed": 4}
    gold = {(g.pair.complex_key, g.pair.simple_key): (g.value, g.provenance, g.reviewer_id)
            for g in Adjudication.objects.select_related("pair")}
    assert gold == {("1", "1"): ("partial", "adjudicated", rita.pk), ("2", "2"): ("partial", "adjudicated", rita.pk),
                    ("3", "2"): ("not-aligned", "adjudicated", rita.pk), ("0", "1"): ("aligned", "adjudicated", rita.pk)}
    assert CandidatePair.objects.get(complex_key="0", simple_key="1").origin == "manual"
    change = AdjudicationChange.objects.get(pair__complex_key="1", pair__simple_key="1")
    assert (change.action, change.new_value, change.changed_by) == ("decide", "partial", rita)
    assert f"accepted B (a{bea.pk})" in change.new_note and "bea" not in change.new_note  # exports copy notes
    event = AuditEvent.objects.get(action="gold.curate")
    assert (event.actor, event.details["decided"], event.details["a"], event.details["b"]) == (rita, 4, "anna", "bea")

    # deciding again changes the gold, history keeps both; the state shows the gold and counts it decided
    curation.decide_links(article, *docs, anna, bea, [{"complex": 1, "simple": 1, "decision": "a"}], rita)
    assert [c.action for c in AdjudicationChange.objects.filter(pair__complex_key="1", pair__simple_key="1")] == \
        ["decide", "change"]
    state = curation.curation_state(article, *docs, anna, bea)
    rows = by_link(state)
    assert rows[(1, 1)]["gold"]["label"] == "aligned"
    assert rows[(0, 1)]["category"] == "gold_only"
    assert state["counts"]["decided"] == 4  # (3,2) decided "not" is still a row of bea's link


def test_bad_decisions_write_nothing(article, docs, two, users):
    anna, bea = two
    with pytest.raises(curation.CurationError) as caught:
        curation.decide_links(article, *docs, anna, bea, [{"complex": 0, "simple": 0, "decision": "a"},
                                                          {"complex": 9, "simple": 0, "decision": "maybe"}], users["rita"])
    assert len(caught.value.messages) == 2
    assert not Adjudication.objects.exists() and not AuditEvent.objects.filter(action="gold.curate").exists()


def test_the_gold_column_is_the_one_precedence_rules_value(article, docs, two):
    # issue 27 §1: bea's label refines imported "aligned-or-partial" gold; issue 34 (was: a tie left the imported
    # gold standing): a tie on imported gold is undecided, as the export writes it
    anna, bea = two
    for c, s in (("3", "2"), ("1", "1")):
        pair = CandidatePair.objects.get(article=article, complex_key=c, simple_key=s)
        Adjudication.objects.create(pair=pair, value="aligned-or-partial", provenance=Adjudication.IMPORTED)
    rows = by_link(curation.curation_state(article, *docs, anna, bea))
    assert (rows[(3, 2)]["gold"]["value"], rows[(3, 2)]["gold"]["provenance"]) == ("aligned", "single")
    assert (rows[(1, 1)]["gold"]["value"], rows[(1, 1)]["gold"]["provenance"]) == ("undecided", "tie")
