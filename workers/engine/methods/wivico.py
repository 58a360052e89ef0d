"""WIVICO step 1: n:m window alignment by SBERT cosine (Ormaechea & Tsourakis 2023, §3.2;
SPEC §5.5).

Every window of 1–3 consecutive complex sentences (W_n) is compared with every window of 1–3
consecutive simple sentences (V_m). Windows longer than the encoder's maximum input (128 word
pieces in the paper; the encoder's ``max_seq_length`` here) are **skipped, not truncated**, and
counted in ``Alignment.meta``. Cut-offs per configuration come from
:mod:`workers.engine.simplicity.wivico_thresholds`: the 1:1 ``threshold`` (valid mean; 0.81 in the
paper) is propagated to the other eight configurations with the decreasing-shift formula over
the per-configuration mean scores of **all windows of the input** (the paper's Figure 3). Labels:
score ≥ valid cut-off → *valid* (``aligned``); ≥ partial cut-off → *partially valid*
(``partial``); else *non-valid* (not emitted).

The paper keeps every window above its cut-off ("we decided not to conceive a sentence alignment
algorithm"): ``select="all"``. Overlapping windows then repeat the same content, so the default
``select="greedy"`` keeps the windows with the largest margin over their cut-off such that no
sentence is used twice.

Config keys: ``threshold`` (1:1 valid cut-off, default 0.81), ``partial_threshold`` (1:1 partial
cut-off, default threshold − 0.15), ``thresholds`` (explicit ``{"n:m": value}``, bypassing the
propagation), ``max_n``/``max_m`` (3), ``max_tokens`` (default: the encoder's), ``select``,
``propagation`` (``"paper"`` — the decreasing shift — or ``"offset"``, see
:func:`~workers.engine.simplicity.wivico_thresholds.propagate_thresholds`), ``device``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import check_options
from ..simplicity.embedding import Encoder, LazyEncoder, max_tokens, token_lengths
from ..simplicity.wivico_thresholds import PAPER_VALID_THRESHOLD, PROPAGATION_METHODS, propagate_thresholds
from ..types import AlignedPair, Alignment, ArticlePair
from . import ProgressFn, register

__all__ = ["WivicoAligner", "windows"]

SELECT_MODES = ("greedy", "all")
_KEYS = {"threshold", "partial_threshold", "thresholds", "propagation", "max_n", "max_m", "max_tokens",
         "select", "device"}


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


@register("wivico")
class WivicoAligner(LazyEncoder):
    """The ``wivico`` method (step 1, semantic filtering)."""

    name = "wivico"

    def __init__(
        self, config: dict[str, Any] | None = None, model: str | None = None,
        encoder: Encoder | None = None,
    ) -> None:
        config = dict(config or {})
        check_options("wivico", config, _KEYS)
        self.threshold = float(config.get("threshold", PAPER_VALID_THRESHOLD))
        self.partial_threshold = float(config.get("partial_threshold", self.threshold - 0.15))
        if self.partial_threshold > self.threshold:
            raise ValueError("partial_threshold must not exceed threshold")
        self.fixed = (
            {_parse_config_key(k): float(v) for k, v in config["thresholds"].items()}
            if config.get("thresholds") else None
        )
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
        self.model = model
        self.device = config.get("device")
        self._encoder = encoder


    def _side(self, sents: Sequence[str], max_size: int, limit: int) -> tuple[list[tuple[int, int]], np.ndarray, int]:
        wins = windows(sents, max_size)
        texts = [" ".join(sents[i : i + k]) for i, k in wins]
        lengths = token_lengths(self.encoder, texts) if texts else []
        keep = [w for w, n in zip(wins, lengths) if n <= limit]
        skipped = len(wins) - len(keep)
        emb = self.encoder.encode([" ".join(sents[i : i + k]) for i, k in keep])
        return keep, emb, skipped

    def align(self, pairs: Sequence[ArticlePair], progress: ProgressFn | None = None) -> list[Alignment]:
        limit = int(self._max_tokens) if self._max_tokens else max_tokens(self.encoder)
        scored = []  # per article: (cwins, swins, sim, skipped)
        sums: dict[tuple[int, int], list[float]] = {}
        for k, ap in enumerate(pairs):
            cw, ce, cskip = self._side(ap.complex.sentences, self.max_n, limit)
            sw, se, sskip = self._side(ap.simple.sentences, self.max_m, limit)
            sim = np.asarray(ce @ se.T, dtype=np.float64) if len(cw) and len(sw) else np.zeros((len(cw), len(sw)))
            for a, (_, n) in enumerate(cw):
                for b, (_, m) in enumerate(sw):
                    acc = sums.setdefault((n, m), [0.0, 0.0])
                    acc[0] += sim[a, b]
                    acc[1] += 1
            scored.append((cw, sw, sim, cskip, sskip))
            if progress is not None:
                progress(0.9 * (k + 1) / len(pairs), f"wivico: scored {k + 1}/{len(pairs)} article pairs")

        means = {c: float(s / n) for c, (s, n) in sums.items() if n}
        if self.fixed is not None:
            valid = dict(self.fixed)
            partial = {c: v - (self.threshold - self.partial_threshold) for c, v in valid.items()}
        elif (1, 1) in means:
            valid = propagate_thresholds(means, self.threshold, self.propagation)
            partial = propagate_thresholds(means, self.partial_threshold, self.propagation)
        else:
            valid, partial = {}, {}

        out = []
        for ap, (cw, sw, sim, cskip, sskip) in zip(pairs, scored):
            cands = []
            for a, (ci, n) in enumerate(cw):
                for b, (si, m) in enumerate(sw):
                    cfg = (n, m)
                    if cfg not in valid:
                        continue
                    s = float(sim[a, b])
                    if s >= valid[cfg]:
                        cands.append((s - valid[cfg], ci, n, si, m, s, "aligned", valid[cfg]))
                    elif s >= partial[cfg]:
                        cands.append((s - partial[cfg], ci, n, si, m, s, "partial", partial[cfg]))
            # valid before partial, then by score (ties: fewer sentences first)
            cands.sort(key=lambda c: (c[6] != "aligned", -c[5], c[2] + c[4]))
            used_c: set[int] = set()
            used_s: set[int] = set()
            found = []
            for margin, ci, n, si, m, s, label, cut in cands:
                cset, sset = set(range(ci, ci + n)), set(range(si, si + m))
                if self.select == "greedy":
                    if cset & used_c or sset & used_s:
                        continue
                    used_c |= cset
                    used_s |= sset
                found.append(AlignedPair(
                    complex=tuple(sorted(cset)), simple=tuple(sorted(sset)), label=label, score=s,  # type: ignore[arg-type]
                    features={"n": float(n), "m": float(m), "cutoff": cut, "margin": margin},
                ))
            found.sort(key=lambda p: (p.complex, p.simple))
            out.append(Alignment(ap.id, found, meta={
                "method": self.name,
                "propagation": "explicit" if self.fixed is not None else self.propagation,
                "skipped_complex_windows": cskip,
                "skipped_simple_windows": sskip,
                "max_tokens": limit,
                "thresholds": {f"{n}:{m}": v for (n, m), v in sorted(valid.items())},
                "partial_thresholds": {f"{n}:{m}": v for (n, m), v in sorted(partial.items())},
                "config_means": {f"{n}:{m}": v for (n, m), v in sorted(means.items())},
            }))
        if progress is not None:
            progress(1.0, "wivico: done")
        return out
