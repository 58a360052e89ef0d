"""Sum4Simp n:1 sentence alignment (Lu et al. 2023, §3.1, Algorithm 1, App. A; SPEC §5.4).

Built for document → summary, usable for any long → short pair: the *complex* document is the
source (document), the *simple* one the target (summary). For every target sentence s_j:

* D_max = max SBERT cosine to the source sentences;
* D_max ≥ S_max → 1:1 pair (label ``aligned``);
* D_max < S_min → no pair;
* otherwise start from the best sentence and greedily stitch the next most similar source
  sentence, **kept in document order**, while the stitched text's similarity to s_j stays
  > S_add, up to L_max sentences (Algorithm 1 lines 8–17).

Score = similarity of the final (stitched) source to s_j; label ``aligned`` when it reaches S_max,
else ``partial``. Defaults S_max/S_min/S_add/L_max = 0.8/0.6/0.7/3 (App. A).

Stitching rounds are batched across target sentences so each round is one encoder call.

Config keys: ``s_max``, ``s_min``, ``s_add``, ``l_max``, ``filter`` (path of a fitted
:class:`~workers.engine.simplicity.sum4simp_filter.Sum4SimpFilter`: adds its attributes, t-scores and
T to each pair's features, and drops pairs with T ≤ T_s unless ``keep_filtered`` is true),
``device``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..options import Option
from ..simplicity.embedding import Encoder, LazyEncoder
from ..types import AlignedPair, Alignment, ArticlePair
from . import ProgressFn, register

__all__ = ["Sum4SimpAligner", "sum4simp_align"]

DEFAULTS: dict[str, float] = {"s_max": 0.8, "s_min": 0.6, "s_add": 0.7, "l_max": 3}
PARAMS: tuple[Option, ...] = (
    Option("s_max", "float", 0.8, 0.0, 1.0, "similarity from which a sentence is aligned at once"),
    Option("s_min", "float", 0.6, 0.0, 1.0, "lowest similarity considered"),
    Option("s_add", "float", 0.7, 0.0, 1.0, "similarity needed to add a further source sentence"),
    Option("l_max", "int", 3, 1, 10, "most source sentences per target sentence"),
    Option("filter", "path", None, help="fitted Sum4Simp filter (a file on the worker)"),
    Option("keep_filtered", "bool", False, help="keep pairs the filter rejects (marked)"),
    Option("device", "str", None, help="torch device, e.g. cpu or cuda (default: CUDA when available)"),
)


def sum4simp_align(
    source: Sequence[str],
    target: Sequence[str],
    encoder: Encoder,
    *,
    s_max: float = 0.8,
    s_min: float = 0.6,
    s_add: float = 0.7,
    l_max: int = 3,
) -> list[AlignedPair]:
    """Algorithm 1 over one document/summary pair; indices are into ``source``/``target``.

    Example (needs the sentence encoder, so not run as a doctest)::

        pairs = sum4simp_align(doc_sentences, summary_sentences, default_encoder())
    """
    if not (0.0 <= s_min <= s_add <= s_max <= 1.0):
        raise ValueError(f"need 0 ≤ s_min ≤ s_add ≤ s_max ≤ 1, got {s_min}, {s_add}, {s_max}")
    if l_max < 1:
        raise ValueError(f"l_max must be ≥ 1, got {l_max}")
    if not source or not target:
        return []
    src = encoder.encode(list(source))
    tgt = encoder.encode(list(target))
    sims = np.asarray(tgt @ src.T, dtype=np.float64)  # [n_target, n_source]

    chosen, score, remaining, active = _best_sentences(sims, s_min=s_min, s_max=s_max, l_max=l_max)
    _stitch(source, tgt, encoder, chosen, score, remaining, active, s_add=s_add, l_max=l_max)
    return [
        AlignedPair(
            complex=tuple(chosen[j]),
            simple=(j,),
            label="aligned" if score[j] >= s_max else "partial",
            score=score[j],
            features={"d_max": float(sims[j].max()), "n_stitched": float(len(chosen[j]))},
        )
        for j in sorted(chosen)
    ]


def _best_sentences(sims: np.ndarray, *, s_min: float, s_max: float, l_max: int,
                    ) -> tuple[dict[int, list[int]], dict[int, float], dict[int, list[int]], list[int]]:
    """Each target sentence's most similar source sentence (D_max ≥ S_min), its score, the candidates
    left to stitch (most similar first) and the target sentences still growing (D_max < S_max)."""
    chosen: dict[int, list[int]] = {}
    score: dict[int, float] = {}
    remaining: dict[int, list[int]] = {}  # candidates left, most similar first
    active: list[int] = []
    for j in range(sims.shape[0]):
        order = [int(i) for i in np.argsort(-sims[j], kind="stable")]
        best = sims[j, order[0]]
        if best < s_min:
            continue
        chosen[j] = [order[0]]
        score[j] = float(best)
        if best < s_max and l_max > 1 and len(order) > 1:
            remaining[j] = order[1:]
            active.append(j)
    return chosen, score, remaining, active


def _stitch(source: Sequence[str], tgt: np.ndarray, encoder: Encoder, chosen: dict[int, list[int]],
            score: dict[int, float], remaining: dict[int, list[int]], active: list[int], *, s_add: float,
            l_max: int) -> None:
    """Algorithm 1 lines 8–17: add the next most similar source sentence (kept in document order)
    while the stitched text's similarity stays > S_add, up to L_max sentences; updates ``chosen``
    and ``score`` in place."""
    while active:  # one stitching round for every still-growing target sentence
        texts = []
        trial: dict[int, list[int]] = {}
        for j in active:
            trial[j] = sorted(chosen[j] + [remaining[j][0]])  # document order
            texts.append(" ".join(source[i] for i in trial[j]))
        emb = encoder.encode(texts)
        next_active = []
        for k, j in enumerate(active):
            c = float(emb[k] @ tgt[j])
            if c > s_add:
                chosen[j] = trial[j]
                score[j] = c
                remaining[j].pop(0)
                if len(chosen[j]) < l_max and remaining[j]:
                    next_active.append(j)
        active = next_active


@register("sum4simp")
class Sum4SimpAligner(LazyEncoder):
    """The ``sum4simp`` method: Algorithm 1 per article pair, optionally followed by the filter."""

    name = "sum4simp"
    model_kinds = ("bi-encoder",)

    def __init__(
        self, config: dict[str, Any] | None = None, model: str | None = None,
        encoder: Encoder | None = None,
    ) -> None:
        config = self._configure("sum4simp", PARAMS, config, model, encoder)
        self.params = {k: config.get(k, v) for k, v in DEFAULTS.items()}
        self.params["l_max"] = int(self.params["l_max"])
        self.keep_filtered = bool(config.get("keep_filtered", False))
        self.filter = None
        if config.get("filter"):
            from ..simplicity.sum4simp_filter import Sum4SimpFilter

            self.filter = Sum4SimpFilter.load(config["filter"])


    def align(self, pairs: Sequence[ArticlePair], progress: ProgressFn | None = None) -> list[Alignment]:
        out: list[Alignment] = []
        for k, ap in enumerate(pairs):
            src, tgt = ap.complex.sentences, ap.simple.sentences
            found = sum4simp_align(src, tgt, self.encoder, **self.params)  # type: ignore[arg-type]
            n_dropped = 0
            if self.filter is not None:
                kept = []
                for p in found:
                    f = self.filter.score_pair([src[i] for i in p.complex], tgt[p.simple[0]])  # stitched sentences
                    if f["keep"] or self.keep_filtered:
                        kept.append(AlignedPair(p.complex, p.simple, p.label, p.score,
                                                {**p.features, **{f"s4s_{k2}": v for k2, v in f.items()}}))
                    else:
                        n_dropped += 1
                found = kept
            out.append(Alignment(ap.id, found, meta={
                "method": self.name, **self.params, "n_filtered_out": n_dropped,
            }))
            if progress is not None:
                progress((k + 1) / len(pairs), f"sum4simp: {k + 1}/{len(pairs)} article pairs")
        return out
