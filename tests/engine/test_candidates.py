from __future__ import annotations

import pytest

from tests.engine.cases import long_case, reorder_case, structured_cases
from workers.engine.candidates import capture_rate, default_measures, select_candidates
from workers.engine.similarity import get_similarity


def test_candidates_are_the_union_of_each_measures_top_k():
    pair = reorder_case()
    measures = [get_similarity("tfidf"), get_similarity("charngram")]
    cand = select_candidates(pair, measures, k=1)
    for s in range(len(pair.simple)):
        proposed = {c for c, s2 in cand.pairs if s2 == s}
        tops = {int(m.similarity(pair.complex.sentences, pair.simple.sentences)[:, s].argmax())
                for m in measures}
        assert proposed == tops
    assert all(set(cand.scores[p]) == {"tfidf", "charngram"} for p in cand.pairs)


def test_more_neighbours_give_more_candidates():
    pair = long_case(60)
    m = [get_similarity("tfidf")]
    assert len(select_candidates(pair, m, k=3).pairs) == 3 * len(pair.simple)
    with pytest.raises(ValueError):
        select_candidates(pair, m, k=0)


def test_default_measures_capture_the_hand_made_alignments(sbert_similarity):
    pairs = structured_cases()
    measures = default_measures()
    assert [m.name for m in measures] == ["charngram", "tfidf", "sbert"]
    cands = [select_candidates(p, measures) for p in pairs]
    rate = capture_rate(pairs, cands)
    assert rate["capture_rate"] >= 0.9
    assert 1.0 <= rate["candidates_per_simple_sentence"] <= 3.0


def test_capture_rate_counts_missing_candidates_as_misses():
    pairs = structured_cases()
    rate = capture_rate(pairs, [])
    assert rate["capture_rate"] == 0.0 and rate["n_gold"] > 0
