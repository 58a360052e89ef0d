from __future__ import annotations

import pytest

from annotation.models import Adjudication, Membership

from .helpers import all_pairs, run

pytestmark = pytest.mark.django_db


def by_ids(rows):
    return {(r["article"], r["complex_level"], r["simple_level"], tuple(r["complex_ids"]), tuple(r["simple_ids"])): r
            for r in rows}


def test_stored_gold_is_exported_with_its_provenance_and_votes(newsela, settings, tmp_path):
    _, root = run(newsela["project"], settings, tmp_path, derived=False, label_policy="stored")
    rows = by_ids(all_pairs(root))
    assert rows[("Bees", "0", "1", (0,), (0,))]["provenance"] == "adjudicated"
    assert rows[("Bees", "0", "1", (2,), (1,))]["provenance"] == "imported"
    single = rows[("Bees", "1", "2", (0,), (0,))]
    assert single["provenance"] == "single" and single["vote_count"] == 1
    assert rows[("Bees", "0", "1", (1,), (0,))]["label"] == "not-aligned"
    # the majority pair has no stored gold: the stored policy leaves it out
    assert ("Bees", "0", "1", (1,), (1,)) not in rows


def test_the_majority_policy_adds_pairs_with_a_majority_of_counted_votes(newsela, settings, tmp_path):
    _, root = run(newsela["project"], settings, tmp_path, derived=False, label_policy="majority")
    row = by_ids(all_pairs(root))[("Bees", "0", "1", (1,), (1,))]
    assert (row["label"], row["provenance"], row["vote_count"]) == ("partial", "majority", 3)
    assert sorted(v["value"] for v in row["votes"]) == ["aligned", "partial", "partial"]
    assert not Adjudication.objects.filter(pair=newsela["pairs"]["c1m1"]).exists()  # nothing written


def test_votes_of_excluded_annotators_do_not_count(newsela, settings, tmp_path, users):
    Membership.objects.filter(user__username="bea").update(excluded_at="2026-01-01T00:00:00Z")
    _, root = run(newsela["project"], settings, tmp_path, derived=False, label_policy="majority")
    # partial vs aligned is now a tie: no gold; Bees 0→1 is exhaustive (legacy imported gold), so it is
    # listed as undecided (issue 27 §2), never as a label
    row = by_ids(all_pairs(root))[("Bees", "0", "1", (1,), (1,))]
    assert (row["label"], row["class"], row["provenance"]) == ("undecided", "undecided", "tie")


def test_majority_or_single_gives_single_vote_pairs_their_vote(newsela, settings, tmp_path):
    from .conftest import make_pair, vote

    lone = make_pair(newsela["owls"], "0", "1", [1], [1])
    vote(lone, "dan", "partial")
    _, root = run(newsela["project"], settings, tmp_path, derived=False, label_policy="majority-or-single")
    row = by_ids(all_pairs(root))[("Owls", "0", "1", (1,), (1,))]
    assert (row["label"], row["provenance"]) == ("partial", "single")


def test_users_can_keep_only_some_provenances(newsela, settings, tmp_path):
    _, root = run(newsela["project"], settings, tmp_path, provenance=["adjudicated"], label_policy="majority")
    assert {r["provenance"] for r in all_pairs(root)} == {"adjudicated"}


def test_annotators_are_pseudonymous_unless_names_are_asked_for(newsela, settings, tmp_path, users):
    _, root = run(newsela["project"], settings, tmp_path, derived=False)
    row = by_ids(all_pairs(root))[("Bees", "0", "1", (0,), (0,))]
    assert row["reviewer"] == f"a{users['rita'].pk}"
    _, root = run(newsela["project"], settings, tmp_path / "named", derived=False, annotator_names=True)
    assert by_ids(all_pairs(root))[("Bees", "0", "1", (0,), (0,))]["reviewer"] == "rita"


def test_a_likert_project_cannot_export_gold(users, settings, tmp_path):
    from annotation.services.export import ExportError
    from tests import factories

    project = factories.make_project("Ratings", scheme="likert-human-eval")
    with pytest.raises(ExportError, match="categorical label scheme"):
        run(project, settings, tmp_path)


def test_auto_export_takes_the_model_versions_predictions(auto_run, settings, tmp_path):
    _, root = run(auto_run["project"], settings, tmp_path, kind="auto", model_version=auto_run["model_version"].pk)
    rows = by_ids(all_pairs(root))
    assert {r["provenance"] for r in rows.values()} <= {"model", "derived"}
    assert rows[("Bees", "0", "1", (1,), (1,))]["label"] == "partial"
    assert ("Bees", "0", "1", (2,), (0,)) not in rows  # not-aligned predictions are left out by default
    derived = rows[("Bees", "0", "2", (0,), (0,))]
    assert derived["derived"] and derived["provenance"] == "derived" and derived["score"] == 0.9


def test_an_auto_export_needs_a_model_version_or_runs():
    from annotation.services.export import ExportError, ExportOptions

    with pytest.raises(ExportError, match="needs a model_version or runs"):
        ExportOptions.parse({"kind": "auto"})


def test_the_default_policy_keeps_the_annotators_work(newsela, settings, tmp_path):
    """issue 18: the default export includes majority and single votes, not only stored gold."""
    from annotation.services.export import ExportOptions

    from .conftest import make_pair, vote

    assert ExportOptions.parse({}).label_policy == "majority-or-single"
    lone = make_pair(newsela["owls"], "0", "1", [1], [1])
    vote(lone, "dan", "partial")
    done, root = run(newsela["project"], settings, tmp_path, derived=False)
    rows = by_ids(all_pairs(root))
    assert rows[("Bees", "0", "1", (1,), (1,))]["provenance"] == "majority"
    assert rows[("Owls", "0", "1", (1,), (1,))]["provenance"] == "single"
    assert done.manifest["label_policy"] == "majority-or-single"


def test_the_preview_counts_each_policys_pairs_by_where_they_come_from(newsela, settings):
    from annotation.services import export

    from .conftest import make_pair, vote

    lone = make_pair(newsela["owls"], "0", "1", [1], [1])
    vote(lone, "dan", "partial")
    preview = export.preview(newsela["project"], export.ExportOptions.parse({"derived": False, "drop_identical": False}))
    policies = preview["policies"]
    assert list(policies) == ["majority-or-single", "majority", "stored"]
    # stored gold: 5 adjudicated, 1 imported, 1 single (written by automatic gold)
    assert policies["stored"] == {"pairs": 7, "from": {"imported": 1, "adjudicated": 5, "majority": 0, "single": 1,
                                                       "tie": 0, "derived": 0}}
    assert policies["majority"]["pairs"] == 8 and policies["majority"]["from"]["majority"] == 1
    assert policies["majority-or-single"]["pairs"] == 9 and policies["majority-or-single"]["from"]["single"] == 2
    # the chosen policy's own counts agree with its row, and with what an export writes
    assert preview["label_policy"] == "majority-or-single" and preview["pairs"] == 9
    for policy, row in policies.items():
        one = export.preview(newsela["project"], export.ExportOptions.parse({"derived": False, "drop_identical": False,
                                                                   "label_policy": policy}))
        assert one["pairs"] == row["pairs"], policy


def test_the_preview_breakdown_derives_and_filters_per_policy(newsela, settings, tmp_path):
    from annotation.services import export

    for policy in ("stored", "majority", "majority-or-single"):
        preview = export.preview(newsela["project"], export.ExportOptions.parse({"label_policy": policy}))
        done, _ = run(newsela["project"], settings, tmp_path / policy, label_policy=policy, formats=["jsonl"])
        assert preview["policies"][policy]["pairs"] == preview["pairs"] == done.pair_count, policy
    assert preview["policies"]["majority-or-single"]["from"]["derived"] > 0


def test_an_auto_preview_has_no_policy_table(auto_run):
    from annotation.services import export

    preview = export.preview(auto_run["project"], export.ExportOptions.parse({"kind": "auto", "runs": [auto_run["run"].pk]}))
    assert preview["policies"] is None and preview["label_policy"] is None


def test_the_preview_is_kept_per_state_of_the_data_and_equals_a_fresh_computation_after_a_change(
        newsela, django_assert_max_num_queries):
    """Issue 37: at a million pairs the preview read every pair (20 s) on each call; it is now kept per
    state of what it reads, and a label, a split or new gold moves that state."""
    from annotation.services import export

    from .conftest import make_pair, vote

    project, options = newsela["project"], export.ExportOptions.parse({"derived": False, "drop_identical": False})

    def fresh() -> dict:
        return {**export.compute_preview(project, options), "seconds": None}

    first = export.preview(project, options)
    with django_assert_max_num_queries(13):  # the state's 13 marks (12, and the highest prediction id), no pair read
        again = export.preview(project, options)
    assert {**again, "seconds": None} == {**first, "seconds": None} == fresh()
    lone = make_pair(newsela["owls"], "0", "1", [1], [1])
    vote(lone, "dan", "partial")
    changed = export.preview(project, options)
    assert changed["pairs"] == first["pairs"] + 1 and {**changed, "seconds": None} == fresh()
    export.splits.set_split(newsela["owls"], "test")
    assert {**export.preview(project, options), "seconds": None} == fresh()
    assert export.preview(project, options)["split_articles"]["test"] >= 1
