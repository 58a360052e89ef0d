"""The sum4simp aligner (Algorithm 1) with a hand-checkable encoder, and once with MiniLM."""
from __future__ import annotations

import pytest

from tests.engine.simplicity._fakes import BagOfWordsEncoder
from workers.engine.methods import get_aligner
from workers.engine.methods.sum4simp import Sum4SimpAligner, sum4simp_align
from workers.engine.types import ArticlePair, Document

# Bag-of-words cosines: target "a b c d" vs "c d y" = 2/(2·√3) ≈ 0.577 (also vs "a b x");
# stitched "c d y a b x" = 4/(2·√6) ≈ 0.816; adding "q r s" → 4/(2·√9) ≈ 0.667.
DOC = ["c d y.", "q r s.", "a b x.", "m n o p."]
SUMMARY = ["a b c d.", "m n o p.", "zz yy."]
PARAMS = {"s_max": 0.9, "s_min": 0.5, "s_add": 0.7, "l_max": 3}


def test_it_stitches_source_sentences_in_document_order_until_similarity_drops():
    pairs = sum4simp_align(DOC, SUMMARY, BagOfWordsEncoder(), **PARAMS)
    by_target = {p.simple: p for p in pairs}
    stitched = by_target[(0,)]
    assert stitched.complex == (0, 2)  # document order, "q r s" rejected (0.667 ≤ S_add)
    assert stitched.score == pytest.approx(4 / (2 * 6**0.5), abs=1e-6)
    assert stitched.label == "partial"  # below S_max
    exact = by_target[(1,)]
    assert exact.complex == (3,) and exact.label == "aligned" and exact.score == pytest.approx(1.0)
    assert (2,) not in by_target  # max similarity 0 < S_min


def test_l_max_caps_the_number_of_stitched_sentences():
    pairs = sum4simp_align(DOC, SUMMARY, BagOfWordsEncoder(), **{**PARAMS, "l_max": 1})
    assert {p.simple: len(p.complex) for p in pairs}[(0,)] == 1
    with pytest.raises(ValueError, match="s_min ≤ s_add ≤ s_max"):
        sum4simp_align(DOC, SUMMARY, BagOfWordsEncoder(), s_max=0.5, s_min=0.6, s_add=0.55)


def test_the_registered_method_aligns_article_pairs_and_checks_its_config():
    ap = ArticlePair("a1", Document(((DOC[0], DOC[1]), (DOC[2], DOC[3]))), Document((tuple(SUMMARY),)))
    calls = []
    aligner = Sum4SimpAligner(config=PARAMS, encoder=BagOfWordsEncoder())
    [res] = aligner.align([ap], progress=lambda f, m: calls.append(f))
    assert res.id == "a1" and {p.simple for p in res.pairs} == {(0,), (1,)}
    assert calls[-1] == 1.0
    with pytest.raises(ValueError, match="valid: .*s_add"):
        get_aligner("sum4simp", {"s_maxx": 1})


@pytest.mark.slow
def test_with_minilm_a_summary_sentence_finds_its_two_source_sentences():
    doc = [
        "The city council met on Tuesday evening to discuss the budget.",
        "After a long debate, the council voted to build a new public library downtown.",
        "The library will cost twelve million dollars and open in 2026.",
        "Local sports teams celebrated their championship win last weekend.",
    ]
    summary = ["The council voted for a new twelve million dollar library."]
    [res] = get_aligner("sum4simp").align([ArticlePair("x", Document((tuple(doc),)), Document((tuple(summary),)))])
    assert res.pairs, "no alignment found"
    assert 1 in res.pairs[0].complex and 3 not in res.pairs[0].complex


def test_the_filter_measures_a_stitched_pair_against_the_average_source_sentence(tmp_path):
    from workers.engine.simplicity.pairs import TextPair
    from workers.engine.simplicity.sum4simp_filter import Sum4SimpFilter

    path = tmp_path / "filter.json"
    Sum4SimpFilter.fit([TextPair("a b c d e f.", "a b c."), TextPair("m n o p q.", "m n o.")]).save(path)
    ap = ArticlePair("a1", Document((tuple(DOC),)), Document((tuple(SUMMARY),)))
    aligner = Sum4SimpAligner(config={**PARAMS, "filter": str(path), "keep_filtered": True}, encoder=BagOfWordsEncoder())
    by_target = {p.simple: p for p in aligner.align([ap])[0].pairs}
    stitched = by_target[(0,)]
    assert stitched.complex == (0, 2)  # "c d y." + "a b x.": two 3-word sentences for the 4-word "a b c d."
    assert stitched.features["s4s_len"] == pytest.approx(4 / 3)  # not 4 / 6
    assert by_target[(1,)].features["s4s_len"] == pytest.approx(1.0)
