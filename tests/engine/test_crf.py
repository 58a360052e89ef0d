from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
import torch

from workers.engine.crf import (
    CRFConfig,
    CRFExample,
    NeuralCRF,
    crf_reference_viterbi,
    gold_labels_from_links,
    path_score,
    train_crf,
    transition_features,
)


def _random_model(seed: int) -> NeuralCRF:
    torch.manual_seed(seed)
    crf = NeuralCRF()
    with torch.no_grad():
        for p in crf.parameters():
            p.add_(torch.randn_like(p) * 0.5)
    return crf


def _np(crf: NeuralCRF, sim: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    E, _, _ = crf.emissions([sim])
    L = sim.shape[0] + 1
    return E[0].detach().numpy(), crf.transitions(L).detach().numpy()


def test_transition_features_follow_equation_3():
    f = transition_features(4)  # [prev, cur, 4]
    assert f[1, 3].tolist() == [2, 0, 0, 0]      # |3 - 1|, both aligned
    assert f[2, 0].tolist() == [0, 1, 0, 0]      # leaving to null
    assert f[0, 2].tolist() == [0, 0, 1, 0]      # coming from null
    assert f[0, 0].tolist() == [0, 0, 0, 1]      # null to null


def test_vectorised_viterbi_equals_the_loop_and_brute_force():
    rng = np.random.default_rng(0)
    for trial in range(25):
        crf = _random_model(trial)
        sims = [rng.random((int(rng.integers(0, 5)), int(rng.integers(1, 5)))).astype(np.float32)
                for _ in range(4)]
        decoded = crf.decode(sims)  # one padded batch of different sizes
        for sim, labels in zip(sims, decoded):
            E, T = _np(crf, sim)
            assert labels.tolist() == crf_reference_viterbi(E, T)
            n, m = sim.shape
            best = max(itertools.product(range(n + 1), repeat=m),
                       key=lambda a: path_score(E, T, a))
            assert path_score(E, T, labels) == pytest.approx(path_score(E, T, best), abs=1e-4)


def test_forward_log_partition_equals_enumeration():
    rng = np.random.default_rng(1)
    for trial in range(15):
        crf = _random_model(100 + trial)
        sims = [rng.random((int(rng.integers(0, 4)), int(rng.integers(1, 5)))).astype(np.float32)
                for _ in range(3)]
        logz = crf.log_partition(sims).detach().numpy()
        for sim, lz in zip(sims, logz):
            E, T = _np(crf, sim)
            n, m = sim.shape
            scores = [path_score(E, T, a) for a in itertools.product(range(n + 1), repeat=m)]
            assert lz == pytest.approx(float(torch.logsumexp(torch.tensor(scores), 0)), abs=1e-3)


def test_log_likelihood_is_a_log_probability():
    crf = _random_model(7)
    sim = np.random.default_rng(2).random((3, 3)).astype(np.float32)
    with torch.no_grad():
        total = sum(float(torch.exp(crf.log_likelihood([sim], [list(a)])[0]))
                    for a in itertools.product(range(4), repeat=3))
    assert total == pytest.approx(1.0, abs=1e-4)


def test_default_model_follows_the_document_order_and_skips_deleted_sentences():
    # complex sentence 2 was deleted; simple sentence 3 matches nothing
    sim = np.full((4, 4), 0.05, dtype=np.float32)
    sim[0, 0], sim[1, 1], sim[3, 2] = 0.8, 0.7, 0.75
    assert NeuralCRF().decode([sim])[0].tolist() == [1, 2, 4, 0]


def test_the_sequence_prior_breaks_ties_towards_the_neighbour():
    # simple sentence 1 is equally similar to complex 1 and complex 3: context picks 1
    sim = np.full((4, 3), 0.05, dtype=np.float32)
    sim[0, 0], sim[1, 1], sim[3, 1], sim[2, 2] = 0.8, 0.6, 0.6, 0.8
    assert NeuralCRF().decode([sim])[0].tolist() == [1, 2, 3]


def test_empty_inputs_decode_to_nothing_or_null():
    crf = NeuralCRF()
    out = crf.decode([np.zeros((0, 3), np.float32), np.zeros((2, 0), np.float32)])
    assert out[0].tolist() == [0, 0, 0] and out[1].tolist() == []
    assert crf.decode([]) == []
    assert float(crf.log_partition([np.zeros((2, 0), np.float32)])[0]) == 0.0


def test_gold_labels_take_the_most_similar_complex_sentence_of_a_merge():
    sim = np.array([[0.2, 0.1], [0.9, 0.1], [0.1, 0.3]], dtype=np.float32)
    assert gold_labels_from_links([(0, 0), (1, 0)], 3, 2, sim).tolist() == [2, 0]
    assert gold_labels_from_links([(0, 0), (1, 0)], 3, 2).tolist() == [1, 0]
    with pytest.raises(ValueError):
        gold_labels_from_links([(3, 0)], 3, 2)


def _toy_examples(seed: int = 0, k: int = 12) -> list[CRFExample]:
    """Monotone alignments with splits and deletions; gold sentences score 0.3–0.6, others
    0.0–0.45, so similarity alone is ambiguous and the default null threshold is off."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(k):
        n = int(rng.integers(4, 9))
        labels = []
        for c in range(1, n + 1):
            r = rng.random()
            if r < 0.2:
                continue
            labels += [c] * (2 if r > 0.8 else 1)
        m = len(labels)
        sim = rng.uniform(0.0, 0.45, (n, m)).astype(np.float32)
        for s, c in enumerate(labels):
            sim[c - 1, s] = rng.uniform(0.3, 0.6)
        out.append(CRFExample(sim, np.array(labels)))
    return out


def test_training_increases_the_log_likelihood():
    train = _toy_examples()
    crf = NeuralCRF()

    def ll() -> float:
        with torch.no_grad():
            return float(crf.log_likelihood([e.sim for e in train], [e.labels for e in train]).sum())

    before = ll()
    history = train_crf(crf, train, epochs=40, lr=0.05)
    assert ll() > before + 1.0
    assert history[-1] < history[0]


def test_training_rejects_labels_that_do_not_fit():
    with pytest.raises(ValueError):
        train_crf(NeuralCRF(), [CRFExample(np.zeros((2, 2), np.float32), np.array([3, 0]))])
    with pytest.raises(ValueError):
        train_crf(NeuralCRF(), [CRFExample(np.zeros((2, 0), np.float32), np.array([]))])


def test_a_saved_model_loads_with_the_same_parameters_and_decodes_alike(tmp_path):
    crf = NeuralCRF(CRFConfig(hidden=10))
    with torch.no_grad():
        crf.null_score.fill_(1.234)
    crf.save(tmp_path / "m", extra={"note": "x"})
    back, extra = NeuralCRF.load(tmp_path / "m")
    assert extra == {"note": "x"} and back.config.hidden == 10
    for a, b in zip(crf.state_dict().values(), back.state_dict().values()):
        assert torch.equal(a, b)
    sim = np.random.default_rng(0).random((6, 5)).astype(np.float32)
    assert crf.decode([sim])[0].tolist() == back.decode([sim])[0].tolist()


def test_loading_something_else_is_an_engine_error(tmp_path):
    from workers.engine.errors import EngineError

    with pytest.raises(EngineError):
        NeuralCRF.load(tmp_path)


def test_unknown_crf_options_are_listed():
    with pytest.raises(ValueError, match="valid:"):
        CRFConfig.from_dict({"hiden": 3})


def test_a_500_sentence_article_decodes_quickly_and_correctly():
    n = 500
    rng = np.random.default_rng(5)
    sim = rng.uniform(0.0, 0.3, (n, n)).astype(np.float32)
    truth = np.arange(n)
    sim[truth, np.arange(n)] = 0.8
    t0 = time.perf_counter()
    labels = NeuralCRF().decode([sim])[0]
    assert time.perf_counter() - t0 < 10.0
    assert (labels == truth + 1).mean() == 1.0


def test_relative_null_aligns_clear_but_low_best_match():
    # s1 is a short fragment: its best similarity (0.30) is below the absolute null threshold
    # (0.35) but clearly above its second best (0.05) → aligned with the relative criterion
    sim = np.array([[0.9, 0.30, 0.0], [0.1, 0.05, 0.0], [0.0, 0.0, 0.9]], dtype=np.float32)
    assert NeuralCRF().decode([sim])[0].tolist() == [1, 1, 3]
    off = NeuralCRF(CRFConfig(null_margin=None))
    assert off.decode([sim])[0].tolist() == [1, 0, 3]
    # no clear best match (0.30 vs 0.25): stays null
    amb = sim.copy()
    amb[1, 1] = 0.25
    assert NeuralCRF().decode([amb])[0].tolist() == [1, 0, 3]


def test_relative_null_batch_with_single_complex_sentence():
    crf = NeuralCRF()
    one = np.array([[0.3, 0.9]], dtype=np.float32)  # n = 1: no second best, absolute rule only
    big = np.array([[0.9, 0.30], [0.1, 0.05], [0.0, 0.0]], dtype=np.float32)
    batched = crf.decode([one, big])
    assert batched[0].tolist() == crf.decode([one])[0].tolist() == [0, 1]
    assert batched[1].tolist() == crf.decode([big])[0].tolist()
