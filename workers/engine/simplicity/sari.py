"""SARI (Xu et al., 2016) exactly as EASSE computes it (SPEC §5.4; Sum4Simp §3.2, Eq. 2).

Why a re-implementation: EASSE pins old dependencies and has no working ``sentence_sari``; the
Sum4Simp filter needs SARI per pair and the ``metric sari`` CLI needs the corpus score. This module
reproduces EASSE's ``corpus_sari`` defaults bit for bit:

1. every string (orig, sys, refs) is ``str.lower()``-ed, then tokenised with sacrebleu's
   ``Tokenizer13a`` and split on whitespace;
2. per sentence and n = 1..4, ADD uses n-gram *sets*, KEEP/DEL use *counts* with orig and sys
   scaled by the number of references (the "multi-reference" trick of the released Java code);
3. the nine 4-vectors of n-gram statistics are **summed over the corpus first**;
4. per operation and n: P, R, F1 (F1 = 0 unless P > 0 and R > 0); operation score = mean over n
   ("macro"); deletion uses F1 by default;
5. SARI = mean of the three operation scores, in 0..100.

Note that Sum4Simp's Eq. 2 prints the *paper* variant (average P and R over n first, precision for
deletion); ``use_paper_version=True, use_f1_for_deletion=False`` gives that.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

NGRAM_ORDER = 4


@lru_cache(maxsize=1)
def _tokenizer13a():  # type: ignore[no-untyped-def]
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    return Tokenizer13a()


def normalize(sentence: str, lowercase: bool = True) -> list[str]:
    """Lowercase (optionally) then tokenise with mteval-v13a, as EASSE's ``normalize`` does.

    Example:
        >>> normalize("It costs $3.5, OK?")
        ['it', 'costs', '$', '3.5', ',', 'ok', '?']
    """
    if lowercase:
        sentence = sentence.lower()
    return _tokenizer13a()(sentence).split()


def _ngrams(tokens: list[str], n: int) -> list[str]:
    return [" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


@dataclass
class SariStats:
    """Summed n-gram statistics: one list of length 4 (n = 1..4) per counter.

    Kept separate from the scoring so corpus SARI can add sentence statistics before dividing.
    """

    add_sys_correct: list[int] = field(default_factory=lambda: [0] * NGRAM_ORDER)
    add_sys_total: list[int] = field(default_factory=lambda: [0] * NGRAM_ORDER)
    add_ref_total: list[int] = field(default_factory=lambda: [0] * NGRAM_ORDER)
    keep_sys_correct: list[int] = field(default_factory=lambda: [0] * NGRAM_ORDER)
    keep_sys_total: list[int] = field(default_factory=lambda: [0] * NGRAM_ORDER)
    keep_ref_total: list[int] = field(default_factory=lambda: [0] * NGRAM_ORDER)
    del_sys_correct: list[int] = field(default_factory=lambda: [0] * NGRAM_ORDER)
    del_sys_total: list[int] = field(default_factory=lambda: [0] * NGRAM_ORDER)
    del_ref_total: list[int] = field(default_factory=lambda: [0] * NGRAM_ORDER)

    def add_sentence(self, orig: list[str], sys: list[str], refs: Sequence[list[str]]) -> None:
        """Accumulate one sentence's statistics (tokens already normalised)."""
        k = len(refs)
        for i, n in enumerate(range(1, NGRAM_ORDER + 1)):
            o_grams = _ngrams(orig, n)
            s_grams = _ngrams(sys, n)
            r_grams = [_ngrams(r, n) for r in refs]
            # ADD: sets, counts ignored.
            o_set, s_set = set(o_grams), set(s_grams)
            r_set = set(g for rg in r_grams for g in rg)
            sys_add = s_set - o_set
            self.add_sys_total[i] += len(sys_add)
            self.add_ref_total[i] += len(r_set - o_set)
            self.add_sys_correct[i] += len(sys_add & r_set)
            # KEEP / DEL: counts, orig and sys scaled by the number of references.
            o_cnt = Counter({g: c * k for g, c in Counter(o_grams).items()})
            s_cnt = Counter({g: c * k for g, c in Counter(s_grams).items()})
            r_cnt: Counter[str] = Counter()
            for rg in r_grams:
                r_cnt.update(rg)
            ks, kr = o_cnt & s_cnt, o_cnt & r_cnt
            self.keep_sys_total[i] += sum(ks.values())
            self.keep_ref_total[i] += sum(kr.values())
            self.keep_sys_correct[i] += sum((ks & kr).values())
            ds, dr = o_cnt - s_cnt, o_cnt - r_cnt
            self.del_sys_total[i] += sum(ds.values())
            self.del_ref_total[i] += sum(dr.values())
            self.del_sys_correct[i] += sum((ds & dr).values())

    def as_dict(self) -> dict[str, list[int]]:
        return {k: list(v) for k, v in self.__dict__.items()}


def _pr(correct: int, total: int, ref_total: int) -> tuple[float, float]:
    precision = correct / total if total > 0 else 0.0
    recall = correct / ref_total if ref_total > 0 else 0.0
    return precision, recall


def _f1(precision: float, recall: float) -> float:
    if precision > 0 and recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def sari_from_stats(
    stats: SariStats, use_f1_for_deletion: bool = True, use_paper_version: bool = False
) -> dict[str, float]:
    """Turn summed n-gram statistics into ``{"sari", "add", "keep", "del"}`` (0..100)."""
    ops = {
        "add": (stats.add_sys_correct, stats.add_sys_total, stats.add_ref_total),
        "keep": (stats.keep_sys_correct, stats.keep_sys_total, stats.keep_ref_total),
        "del": (stats.del_sys_correct, stats.del_sys_total, stats.del_ref_total),
    }
    scores: dict[str, float] = {}
    for name, (correct, total, ref_total) in ops.items():
        prs = [_pr(correct[i], total[i], ref_total[i]) for i in range(NGRAM_ORDER)]
        precision_only = name == "del" and not use_f1_for_deletion
        if use_paper_version:
            p = sum(p for p, _ in prs) / NGRAM_ORDER
            r = sum(r for _, r in prs) / NGRAM_ORDER
            score = p if precision_only else _f1(p, r)
        elif precision_only:
            score = sum(p for p, _ in prs) / NGRAM_ORDER
        else:
            score = sum(_f1(p, r) for p, r in prs) / NGRAM_ORDER
        scores[name] = 100.0 * score
    scores["sari"] = (scores["add"] + scores["keep"] + scores["del"]) / 3
    return {"sari": scores["sari"], "add": scores["add"], "keep": scores["keep"], "del": scores["del"]}


def corpus_sari_stats(
    orig_sents: Sequence[str],
    sys_sents: Sequence[str],
    refs_sents: Sequence[Sequence[str]],
    lowercase: bool = True,
) -> SariStats:
    """Summed n-gram statistics of a corpus; ``refs_sents`` is ``n_refs × n_sents`` (EASSE layout).

    Raises:
        ValueError: lengths disagree (every reference stream must cover every sentence).
    """
    if len(orig_sents) != len(sys_sents):
        raise ValueError(f"{len(orig_sents)} source sentences but {len(sys_sents)} system outputs")
    if not refs_sents:
        raise ValueError("at least one reference stream is required")
    for j, stream in enumerate(refs_sents):
        if isinstance(stream, str):
            raise ValueError("refs_sents must be a list of reference streams (n_refs × n_sents), not strings")
        if len(stream) != len(orig_sents):
            raise ValueError(
                f"reference stream {j} has {len(stream)} sentences, expected {len(orig_sents)}"
            )
    stats = SariStats()
    for i, (orig, sys) in enumerate(zip(orig_sents, sys_sents)):
        refs = [normalize(stream[i], lowercase) for stream in refs_sents]
        stats.add_sentence(normalize(orig, lowercase), normalize(sys, lowercase), refs)
    return stats


def corpus_sari(
    orig_sents: Sequence[str],
    sys_sents: Sequence[str],
    refs_sents: Sequence[Sequence[str]],
    lowercase: bool = True,
    use_f1_for_deletion: bool = True,
    use_paper_version: bool = False,
) -> dict[str, float]:
    """Corpus SARI with EASSE's defaults.

    Args:
        orig_sents: source sentences.
        sys_sents: system outputs, one per source.
        refs_sents: reference streams, ``refs_sents[j][i]`` = j-th reference of sentence i.
        lowercase: lowercase everything before tokenising (EASSE default True).
        use_f1_for_deletion: F1 (default) or precision only (Xu et al. 2016 / HF evaluate) for DEL.
        use_paper_version: average P and R over n before the F1 instead of averaging F1s.

    Returns:
        ``{"sari", "add", "keep", "del"}`` in 0..100.

    Example:
        >>> corpus_sari(["a b c"], ["a b c"], [["a b"]])["add"]
        0.0
    """
    stats = corpus_sari_stats(orig_sents, sys_sents, refs_sents, lowercase)
    return sari_from_stats(stats, use_f1_for_deletion, use_paper_version)


def sentence_sari(
    orig: str,
    sys: str,
    refs: Sequence[str],
    lowercase: bool = True,
    use_f1_for_deletion: bool = True,
    use_paper_version: bool = False,
) -> dict[str, float]:
    """SARI of one sentence = corpus SARI of a one-sentence corpus (what ``easse/report.py`` does).

    ``refs`` is the list of references of this one sentence.
    """
    if isinstance(refs, str):
        raise ValueError("refs must be a list of reference strings, not one string")
    return corpus_sari(
        [orig], [sys], [[r] for r in refs], lowercase, use_f1_for_deletion, use_paper_version
    )
