"""Issue 27 §1: the one precedence rule — adjudication, then the annotators' labels (per policy),
then imported gold with its meaning; a tie is undecided."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, CandidatePair
from annotation.services.review import gold_reading, gold_rule

from .test_adjudication import crowd, make_pairs, vote  # noqa: F401 - crowd is a fixture

pytestmark = pytest.mark.django_db


def values(project, policy="majority-or-single", **kwargs):
    return {pid: (g.value, g.provenance) for pid, g in gold_reading.pair_gold(
        project, CandidatePair.objects.filter(article__project=project), policy=policy, **kwargs).items()}


def test_an_annotators_label_refines_imported_aligned_or_partial_gold(project, crowd):  # noqa: F811
    refined, untouched = make_pairs(project, 2)
    for pair in (refined, untouched):
        Adjudication.objects.create(pair=pair, value="aligned-or-partial", provenance=Adjudication.IMPORTED)
    vote(refined, crowd[0], "partial")
    assert values(project) == {refined.pk: ("partial", "single"), untouched.pk: ("aligned-or-partial", "imported")}
    assert values(project, "stored")[refined.pk] == ("aligned-or-partial", "imported")  # the votes alone left out


def test_the_annotators_majority_wins_over_imported_gold_and_adjudication_over_both(project, crowd):  # noqa: F811
    anna, bob, cleo = crowd
    voted, decided = make_pairs(project, 2)
    for pair in (voted, decided):
        Adjudication.objects.create(pair=pair, value="aligned", provenance=Adjudication.IMPORTED)
        vote(pair, anna, "not-aligned"), vote(pair, bob, "not-aligned")
    Adjudication.objects.filter(pair=decided).update(value="partial", provenance=Adjudication.ADJUDICATED)
    assert values(project, "majority") == {voted.pk: ("not-aligned", "majority"), decided.pk: ("partial", "adjudicated")}


def test_a_tie_is_undecided_even_on_imported_gold(project, crowd):  # noqa: F811
    """Issue 34 case 3 (was: imported gold decided the tie): a disagreement on an imported link is
    undecided and enters adjudication."""
    from annotation.services.review import adjudication

    anna, bob, _ = crowd
    tie, imported_tie = make_pairs(project, 2)
    Adjudication.objects.create(pair=imported_tie, value="aligned-or-partial", provenance=Adjudication.IMPORTED)
    for pair in (tie, imported_tie):
        vote(pair, anna, "aligned"), vote(pair, bob, "partial")
    assert values(project) == {}  # ties left out by default
    undecided = (gold_rule.UNDECIDED, gold_rule.TIE)
    assert values(project, ties=True) == {tie.pk: undecided, imported_tie.pk: undecided}
    assert values(project, "stored") == {imported_tie.pk: ("aligned-or-partial", "imported")}
    assert imported_tie.pk in adjudication.queue_pair_ids(project)
    assert gold_rule.resolve(None, ["aligned", "partial"], "majority").value == gold_rule.UNDECIDED
    assert gold_rule.resolve(None, ["aligned", "partial"], "stored") is None


def test_the_adjudication_page_shows_the_value_exports_read_beside_the_stored_gold(project, crowd):  # noqa: F811
    from annotation.services.review import adjudication

    [pair] = make_pairs(project, 1)
    Adjudication.objects.create(pair=pair, value="aligned-or-partial", provenance=Adjudication.IMPORTED)
    vote(pair, crowd[0], "partial")
    [item] = adjudication.queue_items(project, [pair.pk])
    assert item["gold"]["value"] == "aligned-or-partial"
    assert item["decided"] == {"value": "partial", "provenance": "single"}


def test_a_test_answer_is_scored_against_the_value_the_rule_gives(project, crowd):  # noqa: F811
    from annotation.services.review import qc

    anna, bob, cleo = crowd
    refined, unknown, tie = make_pairs(project, 3)
    for pair in (refined, unknown):
        Adjudication.objects.create(pair=pair, value="aligned-or-partial", provenance=Adjudication.IMPORTED)
    # an exported tie
    Adjudication.objects.create(pair=tie, value=gold_rule.UNDECIDED, provenance=Adjudication.IMPORTED)
    vote(tie, bob, "aligned", test=True)  # nothing to score it against: not counted
    vote(refined, anna, "partial")  # her (counted) label refines the imported link: the pair is partial
    vote(refined, bob, "aligned", test=True), vote(unknown, bob, "aligned", test=True)  # any link matches unknown kind
    vote(refined, cleo, "partial", test=True)
    scores = qc.test_accuracy(project)
    assert (scores[bob.pk].answers, scores[bob.pk].correct) == (2, 1)
    assert (scores[cleo.pk].answers, scores[cleo.pk].correct) == (1, 1)
