"""The pivot-translation BLEU + FRES selectors."""
from __future__ import annotations

from workers.engine.simplicity.bleu import sentence_bleu
from workers.engine.simplicity.pivot import pivot_select, select_pairs
from workers.engine.simplicity.readability import fres

COMPLEX = "The committee unanimously ratified the comprehensive environmental legislation yesterday afternoon."
SIMPLE = "The committee approved the environmental law yesterday afternoon."


def test_it_keeps_a_close_and_much_easier_paraphrase():
    d = pivot_select(COMPLEX, SIMPLE)
    assert d.keep and d.reason == "kept" and not d.swapped
    assert d.bleu == sentence_bleu(SIMPLE, COMPLEX) >= 15
    assert d.fres_gain == fres(SIMPLE) - fres(COMPLEX) >= 10


def test_it_orients_pairs_by_readability_unless_told_not_to():
    d = pivot_select(SIMPLE, COMPLEX)
    assert d.keep and d.swapped and d.complex == COMPLEX
    strict = pivot_select(SIMPLE, COMPLEX, orient=False)
    assert not strict.keep and strict.reason == "low_fres_gain"


def test_it_drops_identical_unrelated_and_equally_hard_pairs():
    kept, counts = select_pairs([
        (COMPLEX, COMPLEX),
        (COMPLEX, "Bananas are yellow."),
        (SIMPLE, SIMPLE.replace("law", "bill")),
        (COMPLEX, SIMPLE),
    ])
    assert counts == {"kept": 1, "identical": 1, "low_bleu": 1, "low_fres_gain": 1}
    assert [k.simple for k in kept] == [SIMPLE]
    _, strict = select_pairs([(COMPLEX, SIMPLE)], h_fres=1000)
    assert strict["low_fres_gain"] == 1
