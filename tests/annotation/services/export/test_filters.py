from __future__ import annotations

import pytest

from .conftest import gold, make_pair
from .helpers import all_pairs, run

pytestmark = pytest.mark.django_db


def keys(root):
    return {(r["article"], r["complex_level"], r["simple_level"], tuple(r["complex_ids"]), tuple(r["simple_ids"]))
            for r in all_pairs(root)}


def parallel_lines(root) -> list[str]:
    return [line for split in ("train", "test") for line in (root / "parallel" / f"{split}.src").read_text().splitlines()]


def test_identical_pairs_stay_in_gold_and_leave_the_training_outputs_unless_kept(newsela, settings, tmp_path):
    done, root = run(newsela["project"], settings, tmp_path, derived=False)
    assert ("Owls", "0", "1", (1,), (2,)) in keys(root)  # gold files keep identical pairs (issue 27 §3)
    assert "They live everywhere." not in parallel_lines(root)
    assert done.manifest["dropped"] == {} and done.manifest["dropped_training"] == {"identical": 1}
    assert done.manifest["filters"]["training_only"] == ["identical"]
    _, root = run(newsela["project"], settings, tmp_path / "keep", derived=False, drop_identical=False)
    assert "They live everywhere." in parallel_lines(root)


def test_identical_means_equal_after_case_and_space_normalisation(newsela, settings, tmp_path):
    owls = newsela["owls"]
    from annotation.models import Sentence

    Sentence.objects.filter(document__article=owls, document__level="1", index=2).update(text="  they LIVE everywhere. ")
    done, _ = run(newsela["project"], settings, tmp_path, derived=False)
    assert done.manifest["dropped_training"] == {"identical": 1}


def test_identical_is_the_engines_definition_so_punctuation_and_unicode_forms_do_not_count(newsela, settings, tmp_path):
    from annotation.models import Sentence
    from workers.engine.text import is_identical

    owls = newsela["owls"]
    Sentence.objects.filter(document__article=owls, document__level="1", index=2).update(text="They live ＥＶＥＲＹWHERE!")
    assert is_identical("They live everywhere.", "They live ＥＶＥＲＹWHERE!")  # what the stored flag says too
    done, _ = run(newsela["project"], settings, tmp_path, derived=False)
    assert done.manifest["dropped_training"] == {"identical": 1}
    Sentence.objects.filter(document__article=owls, document__level="1", index=2).update(text="They live somewhere.")
    done, _ = run(newsela["project"], settings, tmp_path / "different", derived=False)
    assert "identical" not in done.manifest["dropped_training"]


def test_labels_filter_by_value_or_by_class(newsela, settings, tmp_path):
    _, root = run(newsela["project"], settings, tmp_path, labels=["not-aligned"], derived=False)
    assert {r["label"] for r in all_pairs(root)} == {"not-aligned"}
    _, root = run(newsela["project"], settings, tmp_path / "cls", labels=["aligned", "partial"], label_policy="majority")
    assert {r["class"] for r in all_pairs(root)} == {"aligned", "partial"}


def test_thresholds_compare_stored_scores_and_drop_pairs_without_them(newsela, settings, tmp_path):
    done, root = run(newsela["project"], settings, tmp_path, label_policy="majority", derived=False,
                     thresholds=[{"key": "gain_prob", "op": "gte", "value": 0.5}])
    assert keys(root) == {("Bees", "1", "2", (1,), (1,))}
    assert done.manifest["dropped"] == {"threshold": 7}
    _, root = run(newsela["project"], settings, tmp_path / "t", label_policy="majority", derived=False,
                  thresholds=[{"key": "sum4simp_T", "op": "gt", "value": 0.5}, {"key": "gain_prob", "op": "lt", "value": 0.5}])
    assert keys(root) == {("Bees", "0", "1", (1,), (1,))}
    _, root = run(newsela["project"], settings, tmp_path / "s", derived=False,
                  thresholds=[{"key": "score", "op": "gt", "value": 0.85}])
    assert keys(root) == {("Bees", "0", "1", (0,), (0,))}


def test_the_bleu_band_keeps_pairs_with_moderate_overlap_only(newsela, settings, tmp_path):
    from annotation.services.export.metrics import bleu

    bees = newsela["bees"]
    copied = make_pair(bees, "0", "2", [1], [1])  # "The dance is called the waggle dance." / "It is the waggle dance."
    gold(copied, "aligned")
    done, root = run(newsela["project"], settings, tmp_path, derived=False, bleu_band=True)
    kept = {r["id"]: r for r in all_pairs(root)}
    for r in kept.values():
        assert 0.1 <= bleu(r["simple"], r["complex"]) <= 0.9
    assert f"p{copied.pk}" in kept
    assert done.manifest["dropped"]["bleu_band"] >= 1 and done.manifest["filters"]["bleu_band"] == [0.1, 0.9]


def test_level_pairs_can_be_chosen_or_excluded(newsela, settings, tmp_path):
    _, root = run(newsela["project"], settings, tmp_path, exclude_adjacent=True)
    assert {(c, s) for _, c, s, _, _ in keys(root)} == {("0", "2")}
    _, root = run(newsela["project"], settings, tmp_path / "x", exclude_level_pairs=[["0", "1"]])
    assert {(c, s) for _, c, s, _, _ in keys(root)} == {("1", "2"), ("0", "2")}
    _, root = run(newsela["project"], settings, tmp_path / "only", level_pairs=[["1", "2"]])
    assert {(c, s) for _, c, s, _, _ in keys(root)} == {("1", "2")}


def test_pairs_with_a_sentence_of_an_evaluation_set_are_dropped(newsela, settings, tmp_path):
    eval_file = tmp_path / "turk.txt"
    eval_file.write_text("honey bees communicate the location of flowers by DANCING.\n")
    done, root = run(newsela["project"], settings, tmp_path / "out", derived=False, dedup=[{"path": str(eval_file)}])
    assert not [r for r in all_pairs(root) if "Honey bees" in r["complex"]]
    assert done.manifest["dropped"]["evaluation_set"] == 1
    assert done.manifest["filters"]["evaluation_sets"][0]["sentences"] == 1


def test_dedup_against_another_projects_test_split_and_one_side_only(newsela, settings, tmp_path, users):
    from annotation.models import Split
    from tests import factories

    other = factories.make_project("Turk", rita="researcher")
    article = factories.make_article(other, "t1", {"orig": [["Bees dance."]], "simp": [["Bees dance!"]]})
    Split.objects.create(article=article, name="test")
    done, root = run(newsela["project"], settings, tmp_path, derived=False,
                     dedup=[{"project": "Turk", "splits": ["test"]}], dedup_side="complex")
    assert "evaluation_set" not in done.manifest["dropped"]  # "Bees dance." is a simple sentence here
    done, root = run(newsela["project"], settings, tmp_path / "both", derived=False, dedup=[{"project": other.pk}])
    assert done.manifest["dropped"]["evaluation_set"] == 1


def test_server_paths_are_refused_outside_the_command_line():
    from annotation.services.export import ExportError, ExportOptions

    with pytest.raises(ExportError, match="only be named on the command line"):
        ExportOptions.parse({"dedup": [{"path": "/etc/passwd"}]})


@pytest.mark.parametrize("options,message", [
    ({"formats": ["csv"]}, "unknown formats 'csv'"),
    ({"thresholds": [{"key": "x y", "op": "gt", "value": 1}]}, "attribute name"),
    ({"thresholds": [{"key": "gain_prob", "op": "above", "value": 1}]}, "op must be one of"),
    ({"bleu_band": [0.9, 0.1]}, "bleu_band must be"),
    ({"label_policy": "vibes"}, "unknown label_policy 'vibes'; choose one of"),
    ({"colour": 1}, "colour: unknown option"),
])
def test_bad_options_are_refused_naming_the_valid_values(options, message):
    from annotation.services.export import ExportError, ExportOptions

    with pytest.raises(ExportError, match=message):
        ExportOptions.parse(options)
