"""Issue 27 §1–3 in the exported files: one precedence rule, nothing claims more than was labelled,
identical pairs stay in gold."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Adjudication, ArticleCompletion
from annotation.services import export
from tests import factories

from .conftest import gold, make_pair, vote
from .helpers import all_pairs, run

pytestmark = pytest.mark.django_db

SPARSE = {"gold_import": {"meaning": "sparse", "test_questions": False}}


@pytest.fixture
def onestop(crowd):
    """"Exercise" (sparse imported gold): C0→S0 imported aligned-or-partial, nobody voted; C1→S1
    imported aligned-or-partial that anna labelled partial; C2→S2 identical, anna said aligned.
    "Rubbish", complete for anna and bea: C0→S0 anna partial, bea aligned (a tie); C1→S1 both aligned."""
    project = crowd
    exercise = factories.make_article(project, "Exercise", {
        "adv": [["Regular exercise improves health.", "Doctors recommend it daily.", "Walking counts too."]],
        "ele": [["Exercise is good for you.", "Doctors say do it every day.", "Walking counts too."]],
    })
    exercise.meta = SPARSE
    exercise.save()
    gold(make_pair(exercise, "adv", "ele", [0], [0]), "aligned-or-partial", Adjudication.IMPORTED)
    refined = make_pair(exercise, "adv", "ele", [1], [1])
    gold(refined, "aligned-or-partial", Adjudication.IMPORTED)
    vote(refined, "anna", "partial")
    vote(make_pair(exercise, "adv", "ele", [2], [2]), "anna", "aligned")
    rubbish = factories.make_article(project, "Rubbish", {
        "adv": [["Plastic waste is drowning the oceans.", "Cities collect tonnes of it."]],
        "ele": [["The sea is full of plastic.", "Cities pick up a lot of it."]],
    })
    tie, agreed = make_pair(rubbish, "adv", "ele", [0], [0]), make_pair(rubbish, "adv", "ele", [1], [1])
    vote(tie, "anna", "partial"), vote(tie, "bea", "aligned")
    vote(agreed, "anna", "aligned"), vote(agreed, "bea", "aligned")
    docs = {d.level: d for d in rubbish.documents.all()}
    for name in ("anna", "bea"):
        ArticleCompletion.objects.create(article=rubbish, complex_document=docs["adv"], simple_document=docs["ele"],
                                         annotator=get_user_model().objects.get(username=name))
    return project


def tsv_rows(root) -> dict[tuple[str, str], str]:
    """(complex text, simple text) → label of every wiki-manual row."""
    rows = {}
    for path in sorted((root / "wiki-manual").glob("*.tsv")):
        for line in path.read_text().splitlines():
            label, _s_id, _c_id, simple, complex_, _gleu = line.split("\t")
            rows[(complex_, simple)] = label
    return rows


def jsonl_labels(root) -> dict[tuple[str, str], tuple[str, str, str]]:
    return {(r["complex"], r["simple"]): (r["label"], r["class"], r["provenance"]) for r in all_pairs(root)}


def test_an_imported_aligned_or_partial_link_is_never_written_as_aligned_in_the_tsv(onestop, settings, tmp_path):
    done, root = run(onestop, settings, tmp_path, derived=False, formats=["tsv", "jsonl"])
    rows = tsv_rows(root)
    assert ("Regular exercise improves health.", "Exercise is good for you.") not in rows
    assert jsonl_labels(root)[("Regular exercise improves health.", "Exercise is good for you.")] == (
        "aligned-or-partial", "aligned-or-partial", "imported")  # the formats that can carry it, as stored
    assert done.manifest["left_out"] == {"tsv": {"aligned-or-partial": 1, "undecided": 1}}
    readme = (root / "README.txt").read_text()
    assert "tsv: aligned-or-partial 1" in readme and "tsv: undecided 1" in readme
    assert "adjudication" in readme and "never loses to imported gold" in readme  # the rule, stated


def test_an_annotators_label_refines_imported_gold_in_every_format(onestop, settings, tmp_path):
    _, root = run(onestop, settings, tmp_path, derived=False, formats=["tsv", "jsonl"])
    pair = ("Doctors recommend it daily.", "Doctors say do it every day.")
    assert tsv_rows(root)[pair] == "partialAligned"
    assert jsonl_labels(root)[pair] == ("partial", "partial", "single")


def test_a_tie_inside_a_complete_article_is_undecided_never_not_aligned(onestop, settings, tmp_path):
    _, root = run(onestop, settings, tmp_path, derived=False, formats=["tsv", "jsonl", "articles"])
    tie = ("Plastic waste is drowning the oceans.", "The sea is full of plastic.")
    rows = tsv_rows(root)
    assert tie not in rows  # no row: neither aligned nor notAligned
    assert rows[("Cities collect tonnes of it.", "Cities pick up a lot of it.")] == "aligned"
    assert rows[("Plastic waste is drowning the oceans.", "Cities pick up a lot of it.")] == "notAligned"
    assert jsonl_labels(root)[tie] == ("undecided", "undecided", "tie")
    from .helpers import jsonl

    line = next(x for p in sorted((root / "articles").glob("*.jsonl")) for x in jsonl(p) if x["article"] == "Rubbish")
    assert line["gold"] == [[1, 1]]  # the tie is no gold link...
    assert {(tuple(p["complex"]), p["label"]) for p in line["pairs"]} == {((0,), "undecided"), ((1,), "aligned")}


def test_identical_pairs_stay_in_the_gold_files_and_leave_only_the_training_outputs(onestop, settings, tmp_path):
    done, root = run(onestop, settings, tmp_path, derived=False, formats=["tsv", "jsonl", "parallel"])
    same = ("Walking counts too.", "Walking counts too.")
    assert tsv_rows(root)[same] == "aligned" and same in jsonl_labels(root)
    parallel = "".join(p.read_text() for p in (root / "parallel").glob("*.src"))
    assert "Walking counts too." not in parallel and "Doctors recommend it daily." in parallel
    assert done.manifest["dropped_training"] == {"identical": 1} and "identical" not in done.manifest["dropped"]


def test_the_preview_shows_what_each_filter_removes_and_what_the_tsv_leaves_out(onestop, settings, tmp_path):
    preview = export.preview(onestop, export.ExportOptions.parse({"derived": False}))
    assert preview["dropped_training"] == {"identical": 1} and preview["dropped"] == {}
    assert preview["left_out"] == {"tsv": {"aligned-or-partial": 1, "undecided": 1}}
    done, _ = run(onestop, settings, tmp_path, derived=False)
    assert preview["pairs"] == done.pair_count


def test_the_stored_policy_keeps_imported_gold_and_the_preview_says_where_each_policys_pairs_come_from(onestop):
    policies = export.preview(onestop, export.ExportOptions.parse({"derived": False}))["policies"]
    assert policies["stored"]["from"]["imported"] == 2 and policies["stored"]["pairs"] == 2
    # the refined link is the annotator's under the widest policy, imported gold under "majority"
    assert policies["majority-or-single"]["from"]["imported"] == 1
    assert policies["majority"]["from"]["imported"] == 2
