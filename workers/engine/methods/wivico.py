"""WIVICO step 1: n:m window alignment by SBERT cosine (Ormaechea & Tsourakis 2023, §3.2;
SPEC §5.5).

Every window of 1–3 consecutive complex sentences (W_n) is compared with every window of 1–3
consecutive simple sentences (V_m). Windows longer than the encoder's maximum input (128 word
pieces in the paper; the encoder's ``max_seq_length`` here) are **skipped, not truncated**, and
counted in ``Alignment.meta``. Cut-offs per configuration come from
:mod:`workers.engine.simplicity.wivico_thresholds`: the 1:1 ``threshold`` (valid mean; 0.81 in the
paper) is propagated to the other eight configurations with the decreasing-shift formula over
the per-configuration mean scores of **all windows of the run** (§3.2.2: "the distribution of
scores for all samples in the corpus", Figure 3). One run has one set of cut-offs: a caller that
aligns a run in several batches calls :meth:`WivicoAligner.prepare` once with every article pair
first (the run-level pass, see :class:`~workers.engine.methods.RunLevelAligner`); a lone
:meth:`~WivicoAligner.align` call is a run by itself. Window scores of the first pass are kept
(up to ``cache_mb``) so the second pass does not encode them again. Labels:
score ≥ valid cut-off → *valid* (``aligned``); ≥ partial cut-off → *partially valid*
(``partial``); else *non-valid* (not emitted).

The paper keeps every window above its cut-off ("we decided not to conceive a sentence alignment
algorithm"): ``select="all"``. Overlapping windows then repeat the same content, so the default
``select="greedy"`` keeps the windows with the largest margin over their cut-off such that no
sentence is used twice.

Config keys: ``threshold`` (1:1 valid cut-off, default 0.81), ``partial_threshold`` (1:1 partial
cut-off, default threshold − 0.15), ``thresholds`` / ``partial_thresholds`` (explicit
``{"n:m": value}``, e.g. the nine cut-offs the ``wivico-thresholds`` job propagated over a whole
corpus, bypassing the propagation), ``max_n``/``max_m`` (3), ``max_tokens`` (default: the
encoder's), ``select``, ``propagation`` (``"paper"`` — the decreasing shift — or ``"offset"``, see
:func:`~workers.engine.simplicity.wivico_thresholds.propagate_thresholds`), ``cache_mb`` (256),
``device``.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..options import Option
from ..simplicity.embedding import Encoder, LazyEncoder, max_tokens, token_lengths
from ..simplicity.wivico_thresholds import PAPER_VALID_THRESHOLD, PROPAGATION_METHODS, propagate_thresholds
from ..types import AlignedPair, Alignment, ArticlePair
from . import ProgressFn, register

__all__ = ["WivicoAligner", "windows"]

SELECT_MODES = ("greedy", "all")
Config = tuple[int, int]
PARAMS: tuple[Option, ...] = (
    Option("threshold", "float", PAPER_VALID_THRESHOLD, 0.0, 1.0, "cosine from which a window pair is valid"),
    Option("partial_threshold", "float", None, 0.0, 1.0, "cosine from which it is partially valid (default threshold - 0.15)"),
    Option("thresholds", "object", None, help='fixed valid cut-offs per configuration, e.g. {"1:2": 0.8}'),
    Option("partial_thresholds", "object", None, help="fixed partial cut-offs per configuration"),
    Option("propagation", "str", "paper", help="how the 1:1 cut-off is propagated to n:m", choices=PROPAGATION_METHODS),
    Option("max_n", "int", 3, 1, 3, "most complex sentences per window"),
    Option("max_m", "int", 3, 1, 3, "most simple sentences per window"),
    Option("max_tokens", "int", None, 8, 100000, "longest window in tokens (default: the encoder's limit)"),
    Option("select", "str", "greedy", help="keep the best non-overlapping pairs, or all", choices=SELECT_MODES),
    Option("cache_mb", "float", 256, 0, 100000, "memory for scored article pairs between prepare and align"),
    Option("device", "str", None, help="torch device, e.g. cpu or cuda (default: CUDA when available)"),
)


def windows(sentences: Sequence[str], max_size: int = 3) -> list[tuple[int, int]]:
    """``(start, size)`` of every window of 1..max_size consecutive sentences.

    Example:
        >>> windows(["a", "b", "c"], 2)
        [(0, 1), (1, 1), (2, 1), (0, 2), (1, 2)]
    """
    return [(i, k) for k in range(1, max_size + 1) for i in range(len(sentences) - k + 1)]


def _parse_config_key(key: str) -> tuple[int, int]:
    try:
        n, m = key.split(":")
        return int(n), int(m)
    except ValueError as exc:
        raise ValueError(f"threshold keys look like '1:2', got {key!r}") from exc


@dataclass
class _Scored:
    """One article pair's windows and their cosine matrix."""

    complex_windows: list[tuple[int, int]]
    simple_windows: list[tuple[int, int]]
    sim: np.ndarray
    skipped_complex: int
    skipped_simple: int


@dataclass(frozen=True)
class _Cutoffs:
    valid: dict[Config, float]
    partial: dict[Config, float]
    means: dict[Config, float]
    windows: dict[Config, int]
    scope: str  # "run" (prepare), "call" (one align call), "explicit" (config thresholds)
    document_pairs: int | None

    def as_dict(self, propagation: str) -> dict[str, Any]:
        key = lambda d: {f"{n}:{m}": v for (n, m), v in sorted(d.items())}  # noqa: E731
        return {"scope": self.scope, "propagation": propagation, "document_pairs": self.document_pairs,
                "thresholds": key(self.valid), "partial_thresholds": key(self.partial),
                "config_means": key(self.means), "windows": key(self.windows)}


def _candidates(sc: _Scored, valid: dict[Config, float], partial: dict[Config, float]) -> list[tuple]:
    """Every window pair at or above its configuration's partial cut-off, as ``(margin, complex start,
    n, simple start, m, score, label, cut-off)``; valid before partial, then by score (ties: fewer
    sentences first)."""
    cands = []
    for a, (ci, n) in enumerate(sc.complex_windows):
        for b, (si, m) in enumerate(sc.simple_windows):
            cfg = (n, m)
            if cfg not in valid:
                continue
            s = float(sc.sim[a, b])
            if s >= valid[cfg]:
                cands.append((s - valid[cfg], ci, n, si, m, s, "aligned", valid[cfg]))
            elif s >= partial[cfg]:
                cands.append((s - partial[cfg], ci, n, si, m, s, "partial", partial[cfg]))
    cands.sort(key=lambda c: (c[6] != "aligned", -c[5], c[2] + c[4]))
    return cands


def _select(cands: list[tuple], *, greedy: bool) -> list[AlignedPair]:
    """The pairs emitted: all candidates (``select="all"``, the paper) or, ``greedy``, those whose
    sentences no earlier candidate used."""
    used_c: set[int] = set()
    used_s: set[int] = set()
    found = []
    for margin, ci, n, si, m, s, label, cutoff in cands:
        cset, sset = set(range(ci, ci + n)), set(range(si, si + m))
        if greedy:
            if cset & used_c or sset & used_s:
                continue
            used_c |= cset
            used_s |= sset
        found.append(AlignedPair(
            complex=tuple(sorted(cset)), simple=tuple(sorted(sset)), label=label, score=s,  # type: ignore[arg-type]
            features={"n": float(n), "m": float(m), "cutoff": cutoff, "margin": margin},
        ))
    return found


@register("wivico")
class WivicoAligner(LazyEncoder):
    """The ``wivico`` method (step 1, semantic filtering)."""

    name = "wivico"
    model_kinds = ("bi-encoder",)
    # the wivico-thresholds scoring job stores these in config["wivico"]; a run uses them unless it sets any
    project_keys = ("threshold", "partial_threshold", "thresholds", "partial_thresholds", "propagation")

    def __init__(
        self, config: dict[str, Any] | None = None, model: str | None = None,
        encoder: Encoder | None = None,
    ) -> None:
        config = self._configure("wivico", PARAMS, config, model, encoder)
        self.threshold = float(config.get("threshold", PAPER_VALID_THRESHOLD))
        self.partial_threshold = float(config.get("partial_threshold", self.threshold - 0.15))
        if self.partial_threshold > self.threshold:
            raise ValueError("partial_threshold must not exceed threshold")
        self.fixed = (
            {_parse_config_key(k): float(v) for k, v in config["thresholds"].items()}
            if config.get("thresholds") else None
        )
        self.fixed_partial = (
            {_parse_config_key(k): float(v) for k, v in config["partial_thresholds"].items()}
            if config.get("partial_thresholds") else {}
        )
        if self.fixed_partial and self.fixed is None:
            raise ValueError("partial_thresholds needs thresholds (the valid cut-offs of the same configurations)")
        self.max_n = int(config.get("max_n", 3))
        self.max_m = int(config.get("max_m", 3))
        if not (1 <= self.max_n <= 3 and 1 <= self.max_m <= 3):
            raise ValueError("max_n and max_m must be in 1..3 (WIVICO uses 1 ≤ n, m ≤ 3)")
        self.select = str(config.get("select", "greedy"))
        if self.select not in SELECT_MODES:
            raise ValueError(f"unknown select {self.select!r}; choose one of: {', '.join(SELECT_MODES)}")
        self.propagation = str(config.get("propagation", "paper"))
        if self.propagation not in PROPAGATION_METHODS:
            raise ValueError(
                f"unknown propagation {self.propagation!r}; choose one of: {', '.join(PROPAGATION_METHODS)}"
            )
        self._max_tokens = config.get("max_tokens")
        self.cache_bytes = int(float(config.get("cache_mb", 256)) * 2**20)
        self._run: _Cutoffs | None = None
        self._cache: dict[str, tuple[int, _Scored]] = {}
        self._cache_size = 0

    # --- scoring ----------------------------------------------------------------------------
    def _limit(self) -> int:
        return int(self._max_tokens) if self._max_tokens else max_tokens(self.encoder)

    def _side(self, sents: Sequence[str], max_size: int, limit: int) -> tuple[list[tuple[int, int]], np.ndarray, int]:
        wins = windows(sents, max_size)
        texts = [" ".join(sents[i : i + k]) for i, k in wins]
        lengths = token_lengths(self.encoder, texts) if texts else []
        keep = [w for w, n in zip(wins, lengths) if n <= limit]
        skipped = len(wins) - len(keep)
        emb = self.encoder.encode([" ".join(sents[i : i + k]) for i, k in keep])
        return keep, emb, skipped

    def _score(self, ap: ArticlePair, limit: int) -> _Scored:
        cw, ce, cskip = self._side(ap.complex.sentences, self.max_n, limit)
        sw, se, sskip = self._side(ap.simple.sentences, self.max_m, limit)
        sim = np.asarray(ce @ se.T, dtype=np.float64) if len(cw) and len(sw) else np.zeros((len(cw), len(sw)))
        return _Scored(cw, sw, sim, cskip, sskip)

    @staticmethod
    def _accumulate(sums: dict[Config, list[float]], scored: _Scored) -> None:
        n_of = np.asarray([n for _, n in scored.complex_windows], dtype=int)
        m_of = np.asarray([m for _, m in scored.simple_windows], dtype=int)
        for n in set(n_of.tolist()):
            rows = scored.sim[n_of == n]
            for m in set(m_of.tolist()):
                block = rows[:, m_of == m]
                acc = sums.setdefault((n, m), [0.0, 0])
                acc[0] += float(block.sum())
                acc[1] += int(block.size)

    @staticmethod
    def _fingerprint(ap: ArticlePair, limit: int) -> int:
        return hash((ap.complex.sentences, ap.simple.sentences, limit))

    def _remember(self, ap: ArticlePair, scored: _Scored, limit: int) -> None:
        size = scored.sim.nbytes
        if self._cache_size + size <= self.cache_bytes and ap.id not in self._cache:
            self._cache[ap.id] = (self._fingerprint(ap, limit), scored)
            self._cache_size += size

    def _recall(self, ap: ArticlePair, limit: int) -> _Scored | None:
        hit = self._cache.pop(ap.id, None)
        if hit is None:
            return None
        self._cache_size -= hit[1].sim.nbytes
        return hit[1] if hit[0] == self._fingerprint(ap, limit) else None

    # --- cut-offs ---------------------------------------------------------------------------
    def _cutoffs(self, sums: dict[Config, list[float]], document_pairs: int | None, scope: str) -> _Cutoffs:
        means = {c: float(s / n) for c, (s, n) in sums.items() if n}
        counts = {c: int(n) for c, (_, n) in sums.items() if n}
        if self.fixed is not None:
            gap = self.threshold - self.partial_threshold
            valid = dict(self.fixed)
            partial = {c: min(v, self.fixed_partial.get(c, v - gap)) for c, v in valid.items()}
            return _Cutoffs(valid, partial, means, counts, "explicit", document_pairs)
        if (1, 1) not in means:
            return _Cutoffs({}, {}, means, counts, scope, document_pairs)
        valid = propagate_thresholds(means, self.threshold, self.propagation)
        partial = propagate_thresholds(means, self.partial_threshold, self.propagation)
        partial = {c: min(v, valid[c]) for c, v in partial.items()}
        return _Cutoffs(valid, partial, means, counts, scope, document_pairs)

    def prepare(
        self, pairs: Iterable[ArticlePair], progress: ProgressFn | None = None, total: int | None = None
    ) -> dict[str, Any]:
        """The run-level pass: window means per configuration over **every** article pair of the run
        and the cut-offs propagated from them; every later :meth:`align` call uses them, so an
        article's cut-offs do not depend on the batch it is aligned in. With explicit
        ``thresholds`` nothing is encoded (the cut-offs do not depend on the data).

        Returns:
            ``{"scope": "run", "document_pairs", "thresholds", "partial_thresholds", "config_means",
            "windows", "propagation"}`` with ``"n:m"`` keys (JSON, for the run's record).

        Example (needs the sentence encoder, so not run as a doctest)::

            aligner = WivicoAligner()
            cutoffs = aligner.prepare(every_pair_of_the_run)
            for batch in batches:
                aligner.align(batch)   # the same cut-offs in every batch
        """
        self._cache.clear()
        self._cache_size = 0
        if self.fixed is not None:
            self._run = self._cutoffs({}, None, "explicit")
            return self._run.as_dict("explicit")
        limit = self._limit()
        sums: dict[Config, list[float]] = {}
        count = 0
        for ap in pairs:
            scored = self._score(ap, limit)
            self._accumulate(sums, scored)
            self._remember(ap, scored, limit)
            count += 1
            if progress is not None:
                fraction = count / total if total else 0.0
                progress(min(1.0, fraction), f"wivico: window means of {count}{f'/{total}' if total else ''} article pairs")
        self._run = self._cutoffs(sums, count, "run")
        return self._run.as_dict(self.propagation)

    # --- alignment --------------------------------------------------------------------------
    def align(self, pairs: Sequence[ArticlePair], progress: ProgressFn | None = None) -> list[Alignment]:
        limit = self._limit()
        scored: list[_Scored] = []
        sums: dict[Config, list[float]] = {}
        for k, ap in enumerate(pairs):
            cached = self._recall(ap, limit) if self._run is not None else None
            scored.append(cached if cached is not None else self._score(ap, limit))
            if self._run is None:
                self._accumulate(sums, scored[-1])
            if progress is not None:
                progress(0.9 * (k + 1) / len(pairs), f"wivico: scored {k + 1}/{len(pairs)} article pairs")
        # one run = one set of cut-offs: the prepared run's, else this call's input is the run
        cut = self._run if self._run is not None else self._cutoffs(sums, len(pairs), "call")
        valid, partial = cut.valid, cut.partial
        described = cut.as_dict("explicit" if cut.scope == "explicit" else self.propagation)

        out = []
        for ap, sc in zip(pairs, scored):
            found = _select(_candidates(sc, valid, partial), greedy=self.select == "greedy")
            found.sort(key=lambda p: (p.complex, p.simple))
            out.append(Alignment(ap.id, found, meta={
                "method": self.name,
                "propagation": described["propagation"],
                "cutoff_scope": cut.scope,
                "cutoff_document_pairs": cut.document_pairs,
                "skipped_complex_windows": sc.skipped_complex,
                "skipped_simple_windows": sc.skipped_simple,
                "max_tokens": limit,
                "thresholds": described["thresholds"],
                "partial_thresholds": described["partial_thresholds"],
                "config_means": described["config_means"],
            }))
        if progress is not None:
            progress(1.0, "wivico: done")
        return out
