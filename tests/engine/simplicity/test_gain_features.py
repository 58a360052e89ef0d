"""WIVICO gain features: structural, CEFR-like lexical, and syntactic ones on a hand-built parse."""
from __future__ import annotations

import pytest

from workers.engine.simplicity.bleu import sentence_bleu
from workers.engine.simplicity.gain_features import GainFeaturizer, cefr_weight, zipf_cefr_level
from workers.engine.simplicity.syntax import (
    dlt,
    idt,
    left_embeddedness,
    max_depth,
    noun_nesting,
    syntactic_features,
)

SRC = "The municipality inaugurated an extraordinarily expensive bridge."
TGT = "The town opened a costly bridge."


def test_structural_gains_are_target_minus_source():
    fz = GainFeaturizer("en", parser=None)
    f = fz.features(SRC, TGT)
    assert f["sl"] == len(TGT) - len(SRC)
    assert f["nw"] == 6 - 7
    assert f["bleu"] == pytest.approx(sentence_bleu(TGT, SRC))
    assert 0 < f["wer"] <= 1
    assert fz.features(TGT, SRC)["nw"] == -f["nw"]


def test_cefr_weights_grow_geometrically_and_rare_words_get_high_levels():
    assert [round(cefr_weight(x), 4) for x in (1, 2, 3)] == [0.15, 0.225, 0.3375]
    assert zipf_cefr_level("house") < zipf_cefr_level("municipality") <= 6
    fz = GainFeaturizer("en", parser=None)
    assert fz.features(SRC, TGT)["cefr"] < 0
    lex = GainFeaturizer("en", parser=None, cefr_lexicon={"municipality": 6, "town": 1})
    assert lex.cefr_score("the municipality") == pytest.approx(cefr_weight(6))


def test_features_needing_a_parser_are_reported_as_skipped_without_one():
    fz = GainFeaturizer("en", parser=None)
    assert "mdt" not in fz.feature_names and "nne" not in fz.feature_names
    assert set(fz.skipped) == {"nne", "mdt", "idt", "dlt", "idt_dlt", "le", "nnd"}
    assert fz.matrix([(SRC, TGT), (TGT, SRC)]).shape == (2, len(fz.feature_names))


def _doc(words, heads, pos):
    pytest.importorskip("spacy", reason="spaCy not installed: syntactic features untestable")
    from spacy.tokens import Doc
    from spacy.vocab import Vocab

    deps = ["ROOT" if h == i else "dep" for i, h in enumerate(heads)]
    return Doc(Vocab(), words=words, heads=heads, deps=deps, pos=pos, sent_starts=[True] + [False] * (len(words) - 1))


def test_syntactic_measures_on_a_hand_built_tree():
    # "the big dog of the farmer barks": dog←the, dog←big, barks←dog, dog→farmer (nmod), farmer←of, farmer←the
    words = ["the", "big", "dog", "of", "the", "farmer", "barks"]
    heads = [2, 2, 6, 5, 5, 2, 6]
    pos = ["DET", "ADJ", "NOUN", "ADP", "DET", "NOUN", "VERB"]
    doc = _doc(words, heads, pos)
    assert max_depth(doc) == 3  # the/of → farmer → dog → barks
    assert left_embeddedness(doc) == 6  # six non-verb tokens before the root verb
    assert noun_nesting(doc) == 1  # farmer has one noun ancestor (dog)
    # open arcs after each token: the(1) big(2) dog(1: dog→barks + dog…farmer) ...
    arcs = [(0, 2), (1, 2), (2, 6), (3, 5), (4, 5), (2, 5)]
    boundaries = [sum(1 for a, b in arcs if a <= k < b) for k in range(7)]
    assert idt(doc) == pytest.approx(sum(boundaries) / 7)
    # heads with left dependents: dog (from "the": the big dog → 1 referent), farmer (of the farmer → 1),
    # barks (leftmost dependent dog: dog, farmer, barks → 3)
    assert dlt(doc) == pytest.approx((1 + 1 + 3) / 3)
    assert set(syntactic_features(doc)) == {"mdt", "idt", "dlt", "idt_dlt", "le", "nnd"}


def test_the_french_pipeline_adds_parser_features_when_installed():
    from workers.engine.simplicity.parsing import load_parser

    nlp, why = load_parser("fr")
    if nlp is None:
        pytest.skip(f"French spaCy pipeline unavailable: {why}")
    fz = GainFeaturizer("fr", parser=nlp)
    assert {"nne", "mdt", "idt", "dlt", "le", "nnd"} <= set(fz.feature_names)
    f = fz.features(
        "La municipalité de Lyon a inauguré hier un pont extraordinairement coûteux que les habitants attendaient depuis longtemps.",
        "Lyon a ouvert un pont.",
    )
    assert f["mdt"] < 0 and f["nw"] < 0
