"""ACCESS control attributes (MUSS §3.2)."""
from __future__ import annotations

import math

import pytest

from workers.engine.simplicity.access import access_attributes, lexical_complexity
from workers.engine.simplicity.edits import replace_only_levenshtein_similarity


def test_ratios_are_simple_over_complex():
    c, s = "The physician administered the medication promptly.", "The doctor gave the medicine."
    attrs, skipped = access_attributes(c, s, parser=None)
    assert attrs["char_ratio"] == pytest.approx(len(s) / len(c))
    assert attrs["lev_sim"] == pytest.approx(replace_only_levenshtein_similarity(c, s))
    assert attrs["word_rank_ratio"] < 1  # commoner words in the simple side
    assert "dep_depth_ratio" in skipped and "dep_depth_ratio" not in attrs


def test_lexical_complexity_is_the_75th_percentile_of_log_ranks():
    assert lexical_complexity("house") < lexical_complexity("municipality")
    assert lexical_complexity("the of and") == pytest.approx(math.log(1 + 100_000))  # only stop words


def test_dependency_depth_ratio_with_the_french_parser_when_installed():
    from workers.engine.simplicity.parsing import load_parser

    nlp, why = load_parser("fr")
    if nlp is None:
        pytest.skip(f"French spaCy pipeline unavailable: {why}")
    attrs, skipped = access_attributes(
        "Le maire de la ville, qui avait été élu l'année dernière, a annoncé que le pont serait fermé.",
        "Le pont sera fermé.", language="fr", parser=nlp,
    )
    assert not skipped and 0 < attrs["dep_depth_ratio"] < 1
