"""FRES: formula per language, textstat-0.7.13 counting, textstat's own numbers on the repository's
reference texts (tests/data/metrics/fres_textstat.json, see its README), and the optional shared reference."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workers.engine.simplicity.readability import count_text, fres, fres_from_counts, syllables

REFERENCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "bench" / "metrics" / "readability_cases.json"
TEXTSTAT = Path(__file__).resolve().parents[2] / "data" / "metrics" / "fres_textstat.json"


def test_it_applies_each_languages_coefficients():
    assert fres_from_counts(10, 1, 15, "en") == pytest.approx(206.835 - 1.015 * 10 - 84.6 * 1.5)
    assert fres_from_counts(10, 1, 15, "fr") == pytest.approx(207 - 1.015 * 10 - 73.6 * 1.5)
    assert fres_from_counts(10, 1, 15, "de") == pytest.approx(180 - 10 - 58.5 * 1.5)  # Amstad
    assert fres_from_counts(10, 1, 15, "es") == pytest.approx(206.84 - 1.02 * 10 - 60 * 1.5)


def test_empty_text_scores_zero_and_unknown_languages_are_rejected():
    assert fres("") == 0.0
    with pytest.raises(ValueError, match="choose one of: de, en, es, fr"):
        fres("Hallo.", "xx")


def test_it_counts_words_sentences_and_syllables_like_textstat():
    c = count_text("The well-known cat sat. It purred happily on the mat.")
    assert c.words == 10  # "well-known" is one word
    assert c.sentences == 2
    assert syllables("beautiful cat") == 4  # CMUdict: beau-ti-ful + cat
    assert count_text("Yes. No. Maybe so.").sentences == 1  # fragments of ≤ 2 words are ignored


def test_shorter_plainer_sentences_read_easier():
    hard = "The administration's comprehensive reorganisation necessitated unprecedented intergovernmental coordination."
    easy = "The government changed a lot. Many offices had to work together."
    assert fres(easy) > fres(hard) + 50
    assert fres("Le chat dort sur le canapé.", "fr") > fres(
        "L'administration gouvernementale nécessitait une réorganisation extraordinairement compliquée.", "fr"
    )


@pytest.mark.parametrize("lang,key", [("en", "fres_en"), ("fr", "fres_fr")])
def test_it_matches_textstat_0_7_13_on_the_repositorys_reference_texts(lang, key):
    cases = json.loads(TEXTSTAT.read_text(encoding="utf-8"))[key]
    assert cases
    for case in cases:
        counts = count_text(case["text"], lang)
        assert (counts.words, counts.sentences, counts.syllables) == (
            case["words"], case["sentences"], case["syllables"]), case["text"]
        assert fres_from_counts(case["words"], case["sentences"], case["syllables"], lang) == pytest.approx(
            case["expected_fre"], abs=1e-6)
        assert fres(case["text"], lang) == pytest.approx(case["expected_fre"], abs=1e-6), case["text"]


@pytest.mark.skipif(not REFERENCE.exists(), reason=f"textstat reference values not found at {REFERENCE}")
def test_it_matches_textstat_0_7_13_with_cmudict_reference_values():
    data = json.loads(REFERENCE.read_text(encoding="utf-8"))
    for lang, key in (("en", "fre_cases"), ("en", "fre_edge_cases_en"), ("fr", "fre_cases_fr")):
        for case in data[key]:
            assert fres_from_counts(case["words"], case["sentences"], case["syllables"], lang) == pytest.approx(
                case["expected_fre"], abs=1e-6
            )
            assert abs(fres(case["text"], lang) - case["expected_fre"]) <= 0.01, case["text"]
