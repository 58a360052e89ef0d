from __future__ import annotations

import time

import pytest

from tests.engine.cases import (
    deletion_case,
    empty_cases,
    long_case,
    merge_case,
    one_sentence_case,
    reorder_case,
    split_case,
    structured_cases,
)
from workers.engine import align, available_methods, evaluate, get_aligner
from workers.engine.methods.crf import save_crf_aligner, train_crf_aligner

LEXICAL = ["jaccard", "tfidf", "charngram"]
ALL = LEXICAL + ["sbert", "crf"]
SEED = ["sum4simp", "wivico", "muss"]  # the seed papers' miners (SPEC §5.4-5.7)


def test_the_engine_methods_are_registered():
    assert set(ALL) <= set(available_methods())


def test_unknown_methods_and_options_are_errors_listing_the_choices():
    with pytest.raises(ValueError, match="choose one of: .*crf"):
        get_aligner("nope")
    with pytest.raises(ValueError, match="valid:"):
        get_aligner("tfidf", {"threshold": 0.3})
    with pytest.raises(ValueError, match="choose one of: off, newsela, wiki"):
        get_aligner("crf", {"paragraph_alignment": "yes"})
    with pytest.raises(ValueError):
        get_aligner("tfidf", {"partial_threshold": 0.9, "aligned_threshold": 0.5})


@pytest.mark.parametrize("method", ALL)
@pytest.mark.parametrize("case", structured_cases(), ids=lambda c: c.id)
def test_every_method_recovers_the_hand_made_alignments(method, case):
    [result] = align([case], method=method)
    r = evaluate([result], [case])["task1"]
    assert r["precision"] == 1.0 and r["recall"] == 1.0, result.pairs


@pytest.mark.parametrize("method", ALL)
def test_a_split_comes_out_as_one_group(method):
    [result] = align([split_case()], method=method)
    assert ((0,), (0, 1)) in [(p.complex, p.simple) for p in result.pairs]


@pytest.mark.parametrize("method", ALL)
def test_a_merge_comes_out_as_one_group(method):
    [result] = align([merge_case()], method=method)
    assert ((3, 4), (3,)) in [(p.complex, p.simple) for p in result.pairs]


@pytest.mark.parametrize("method", ALL + SEED)
def test_empty_and_one_sentence_documents(method):
    cases = empty_cases() + [one_sentence_case()]
    results = align(cases, method=method)
    assert [r.id for r in results] == [c.id for c in cases]
    assert all(r.pairs == [] for r in results[:3])
    assert [(p.complex, p.simple) for p in results[3].pairs] == [((0,), (0,))]


@pytest.mark.parametrize("method", ALL + SEED)
def test_results_are_well_formed_and_progress_is_reported(method):
    seen: list[float] = []
    results = align(structured_cases(), method=method, progress=lambda f, m: seen.append(f))
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)
    for case, res in zip(structured_cases(), results):
        for p in res.pairs:
            assert p.label in ("aligned", "partial")
            assert all(0 <= c < len(case.complex) for c in p.complex)
            assert all(0 <= s < len(case.simple) for s in p.simple)
        simple_used = [s for p in res.pairs for s in p.simple]
        assert len(simple_used) == len(set(simple_used))


@pytest.mark.parametrize("method", ["sum4simp", "wivico"])
@pytest.mark.parametrize("case", [deletion_case(), reorder_case()], ids=lambda c: c.id)
def test_the_stitching_and_window_miners_recover_deletions_and_reordering(method, case):
    [result] = align([case], method=method)
    r = evaluate([result], [case])["task1"]
    assert r["precision"] == 1.0 and r["recall"] == 1.0, result.pairs


@pytest.mark.parametrize("method", LEXICAL + ["crf"])
def test_a_500_sentence_article_is_aligned_fast(method):
    case = long_case(500)
    config = {"similarity": "charngram"} if method == "crf" else {}
    t0 = time.perf_counter()
    [result] = align([case], method=method, config=config)
    assert time.perf_counter() - t0 < 20
    r = evaluate([result], [case])["task1"]
    assert r["recall"] >= 0.95 and r["precision"] >= 0.9  # template words invite extra merges


def test_the_crf_labels_a_loose_paraphrase_partial_and_a_close_one_aligned():
    [result] = align([split_case()], method="crf")
    by_simple = {p.simple: p for p in result.pairs}
    assert by_simple[(4,)].label == "aligned"
    assert all(p.score == p.features["group_sim"] for p in result.pairs)


def test_crf_paragraph_alignment_can_be_switched_on():
    results = align(structured_cases(), method="crf",
                    config={"similarity": "tfidf", "paragraph_alignment": "newsela"})
    assert len(results) == 4
    r = evaluate(results, structured_cases())["task1"]
    assert r["precision"] >= 0.9


def test_paragraph_first_decodes_each_aligned_paragraph_pair_on_its_own():
    """The CRF paper's §2.4: with ``paragraph_mode="within"`` no link crosses the aligned paragraph
    pairs, and on the hand-made cases the result matches the gold as well as masking does."""
    from workers.engine.types import ArticlePair, Document

    config = {"similarity": "tfidf", "paragraph_alignment": "newsela"}
    within = align(structured_cases(), method="crf", config={**config, "paragraph_mode": "within"})
    assert evaluate(within, structured_cases())["task1"]["f1"] >= evaluate(
        align(structured_cases(), method="crf", config=config), structured_cases())["task1"]["f1"] - 0.05
    # two paragraphs each side; the second simple paragraph also echoes the first complex one, a
    # link the paragraph-first decode may not make (it crosses the aligned paragraph pairs)
    complex_doc = Document((("Volcanoes erupt when magma rises through the crust.", "Lava flows downhill slowly."),
                            ("The city council approved a new budget for schools.", "Teachers welcomed the decision.")))
    simple_doc = Document((("Volcanoes erupt when magma rises.", "Lava flows slowly."),
                           ("The council approved a school budget.", "Teachers were happy about the lava budget.")))
    [result] = align([ArticlePair("two", complex_doc, simple_doc)], method="crf",
                     config={**config, "paragraph_mode": "within"})
    links = {(c, s) for p in result.pairs for c in p.complex for s in p.simple}
    assert {(0, 0), (1, 1), (2, 2)} <= links
    assert all((c < 2) == (s < 2) for c, s in links)  # never across the two paragraph pairs
    with pytest.raises(ValueError, match="mask, within"):
        get_aligner("crf", {"paragraph_mode": "inside"})


def test_a_trained_crf_aligner_is_saved_and_reloaded(tmp_path):
    train = structured_cases()
    aligner, history = train_crf_aligner(train, {"similarity": "tfidf"}, epochs=15)
    assert history[-1] < history[0]
    save_crf_aligner(aligner, tmp_path / "crf")
    again = get_aligner("crf", model=str(tmp_path / "crf"))
    assert again.config.similarity == "tfidf"
    a = aligner.align(train)
    b = again.align(train)
    assert [[(p.complex, p.simple) for p in x.pairs] for x in a] == \
        [[(p.complex, p.simple) for p in x.pairs] for x in b]


def test_min_link_score_drops_weak_crf_links():
    case = split_case()
    all_links = {lk for p in align([case], "crf")[0].pairs for lk in p.links()}
    strict = {lk for p in align([case], "crf", {"min_link_score": 0.99})[0].pairs
              for lk in p.links()}
    assert all_links and strict < all_links


def test_the_crf_decodes_on_the_encoders_device():
    aligner = get_aligner("crf", {"similarity": "tfidf", "device": "cpu"})
    assert aligner.device == "cpu" and next(aligner.crf.parameters()).device.type == "cpu"


@pytest.mark.gpu
def test_the_crf_runs_on_cuda_when_a_gpu_is_present():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine (the gpu path is measured on a GPU worker)")
    aligner = get_aligner("crf", {"similarity": "tfidf", "device": "cuda"})
    assert next(aligner.crf.parameters()).device.type == "cuda"
    results = align(structured_cases(), method="crf", config={"similarity": "tfidf", "device": "cuda"})
    assert evaluate(results, structured_cases())["task1"]["f1"] >= 0.9
