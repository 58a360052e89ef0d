from __future__ import annotations

import numpy as np
import pytest

from workers.engine.similarity import (
    CharNgramSimilarity,
    CombinedSimilarity,
    JaccardSimilarity,
    TfidfSimilarity,
    get_similarity,
)

C = ["The old lighthouse will be repaired next year.", "Stock prices fell sharply on Monday.",
     "Children planted trees in the park."]
S = ["Next year the old lighthouse will be fixed.", "Kids planted trees in a park."]


@pytest.mark.parametrize("name", ["jaccard", "tfidf", "charngram"])
def test_lexical_similarities_rank_the_related_sentence_first(name):
    m = get_similarity(name).similarity(C, S)
    assert m.shape == (3, 2) and m.dtype == np.float32
    assert ((m >= 0) & (m <= 1 + 1e-6)).all()
    assert m[:, 0].argmax() == 0 and m[:, 1].argmax() == 2


@pytest.mark.parametrize("name", ["jaccard", "tfidf", "charngram"])
def test_empty_sides_give_empty_matrices(name):
    sim = get_similarity(name)
    assert sim.similarity([], S).shape == (0, 2)
    assert sim.similarity(C, []).shape == (3, 0)
    assert sim.similarity(["..."], ["!!"]).shape == (1, 1)


def test_jaccard_is_the_word_set_coefficient():
    m = JaccardSimilarity().similarity(["a b c", "x"], ["A b d b"])
    assert m[0, 0] == pytest.approx(2 / 4) and m[1, 0] == 0.0


def test_tfidf_and_charngram_give_one_for_identical_text():
    for sim in (TfidfSimilarity(), CharNgramSimilarity()):
        m = sim.similarity(["Same words here."], ["Same words here.", "Other stuff entirely."])
        assert m[0, 0] == pytest.approx(1.0, abs=1e-5) and m[0, 1] < 0.5


def test_paired_scores_match_the_matrix_diagonal():
    sim = TfidfSimilarity()
    a, b = ["red apple pie", "blue sky"], ["apple pie", "grey sky today"]
    assert np.allclose(sim.paired(a, b), np.diag(sim.similarity(a, b)))
    with pytest.raises(ValueError):
        sim.paired(a, b[:1])


def test_unknown_similarity_names_list_the_choices():
    with pytest.raises(ValueError, match="choose one of: jaccard, tfidf"):
        get_similarity("bm25")
    with pytest.raises(ValueError, match="needs a model path"):
        get_similarity("cross-encoder")


def test_sbert_scores_paraphrases_above_unrelated_sentences(sbert_similarity):
    m = sbert_similarity.similarity(C, S)
    assert m.shape == (3, 2)
    assert m[0, 0] > 0.6 and m[1, 0] < 0.3
    assert m[:, 1].argmax() == 2


def test_sbert_embeddings_are_cached_per_sentence(sbert_similarity):
    enc = sbert_similarity.encoder
    sbert_similarity.similarity(C, S)
    before = enc.n_encoded
    sbert_similarity.similarity(S, C[:2])
    assert enc.n_encoded == before


def test_sbert_group_similarity_uses_mean_embeddings(sbert_similarity):
    g = sbert_similarity.group_similarity([[C[0], C[2]]], [[S[0], S[1]]])
    single = sbert_similarity.similarity([C[0]], [S[1]])[0, 0]
    assert g.shape == (1,) and g[0] > single


def test_combined_similarity_is_the_weighted_mean_of_its_parts():
    t, c = TfidfSimilarity(), CharNgramSimilarity()
    comb = CombinedSimilarity({t: 1.0, c: 3.0})
    expected = (t.similarity(C, S) + 3 * c.similarity(C, S)) / 4
    assert np.allclose(comb.similarity(C, S), expected, atol=1e-6)
    with pytest.raises(ValueError):
        CombinedSimilarity({t: 0.0})


def test_default_combined_mixes_embedding_and_char_ngrams(sbert_similarity):
    comb = get_similarity("combined", sbert_weight=0.5)
    expected = 0.5 * sbert_similarity.similarity(C, S) + 0.5 * CharNgramSimilarity().similarity(C, S)
    assert np.allclose(comb.similarity(C, S), expected, atol=1e-5)
    with pytest.raises(ValueError):
        get_similarity("combined", sbert_weight=1.5)


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory, minilm_path):
    """A CrossEncoder built from the MiniLM weights with a fresh 1-label head, saved locally."""
    from sentence_transformers import CrossEncoder

    path = tmp_path_factory.mktemp("xenc") / "model"
    CrossEncoder(minilm_path, num_labels=1, device="cpu").save(str(path))
    return str(path)


def test_a_saved_cross_encoder_scores_every_pair(tiny_cross_encoder):
    sim = get_similarity("cross-encoder", tiny_cross_encoder, device="cpu")
    m = sim.similarity(C, S)
    assert m.shape == (3, 2) and ((m > 0) & (m < 1)).all()
    assert np.allclose(sim.paired([C[2]], [S[1]]), m[2, 1], atol=1e-5)


def test_a_missing_cross_encoder_path_is_an_engine_error(tmp_path):
    from workers.engine.errors import EngineError

    with pytest.raises(EngineError, match="cannot load cross-encoder"):
        get_similarity("cross-encoder", str(tmp_path / "nothing-here"))
