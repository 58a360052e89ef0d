"""The ``muss`` method: MUSS paraphrase mining applied inside each article pair (SPEC §5.7).

The corpus-level miner is :func:`workers.engine.simplicity.muss_mining.mine_paraphrases`
(Martin et al. 2022, §3.1, App. A.1). Here the complex document's sequences (≤ 300 characters of
adjacent sentences, noisy ones dropped) query a faiss index of the simple document's sequences;
neighbours pass the distance bound, the margin criterion and the near-identical / containment /
evaluation-set filters. Because sequences overlap, many kept neighbours repeat the same
sentences; the default ``select="greedy"`` keeps the closest pairs that reuse no sentence (the
``"all"`` mode returns every kept pair). Label ``aligned``; score = cosine.

Config keys: ``max_chars`` (300), ``max_punctuation`` (0.1), ``k`` (8), ``max_distance`` (0.5,
squared L2 on unit vectors), ``max_relative`` (0.6), ``min_change`` (0.2), ``evaluation_set``
(list of texts), ``select``, ``device``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..mining.config import MiningConfig
from ..options import Option
from ..simplicity.embedding import Encoder, LazyEncoder
from ..simplicity.muss_mining import mine_paraphrases
from ..types import AlignedPair, Alignment, ArticlePair
from . import ProgressFn, register

__all__ = ["MussAligner"]

DEFAULTS: dict[str, Any] = {
    "max_chars": 300, "max_punctuation": 0.10, "k": 8, "max_distance": 0.5,
    "max_relative": 0.6, "min_change": 0.20,
}
SELECT_MODES = ("greedy", "all")
PARAMS: tuple[Option, ...] = (
    Option("max_chars", "int", 300, 20, 5000, "longest sequence of adjacent sentences, in characters"),
    Option("max_punctuation", "float", 0.10, 0.0, 1.0, "sequences with more punctuation than this share are dropped"),
    Option("k", "int", 8, 1, 100, "nearest neighbours per query"),
    Option("max_distance", "float", 0.5, 0.0, 4.0, "squared L2 bound on unit vectors"),
    Option("max_relative", "float", 0.6, 0.0, 1.0, "margin criterion: distance relative to the neighbours'"),
    Option("min_change", "float", 0.20, 0.0, 1.0, "near-identical pairs (less change) are dropped"),
    Option("evaluation_set", "list", [], help="texts that must not appear in a mined pair"),
    Option("select", "str", "greedy", help="keep the closest non-overlapping pairs, or all", choices=SELECT_MODES),
    Option("device", "str", None, help="torch device, e.g. cpu or cuda (default: CUDA when available)"),
)


@register("muss")
class MussAligner(LazyEncoder):
    """MUSS mining between the complex and simple document of every article pair."""

    name = "muss"
    model_kinds = ("bi-encoder",)

    def __init__(self, config: dict[str, Any] | None = None, model: str | None = None,
                 encoder: Encoder | None = None) -> None:
        config = self._configure("muss", PARAMS, config, model, encoder)  # the schema's choices refuse a bad select
        self.params = {k: config.get(k, v) for k, v in DEFAULTS.items()}
        self.evaluation_set = list(config.get("evaluation_set", []))
        self.select = str(config.get("select", "greedy"))
        # parsed once into the miner's options object (the article's two documents never share an id,
        # so the same-document rule does not apply)
        self.options = MiningConfig.from_dict({**self.params, "evaluation_set": self.evaluation_set})


    def align(self, pairs: Sequence[ArticlePair], progress: ProgressFn | None = None) -> list[Alignment]:
        out = []
        for n_done, ap in enumerate(pairs, start=1):
            mined, stats = mine_paraphrases({"simple": list(ap.simple.sentences)}, self.options,
                                            queries={"complex": list(ap.complex.sentences)}, encoder=self.encoder)
            mined.sort(key=lambda p: p.distance)
            used_c: set[int] = set()
            used_s: set[int] = set()
            found = []
            for p in mined:
                cset = set(range(p.query.start, p.query.end))
                sset = set(range(p.neighbour.start, p.neighbour.end))
                if self.select == "greedy":
                    if cset & used_c or sset & used_s:
                        continue
                    used_c |= cset
                    used_s |= sset
                found.append(AlignedPair(
                    complex=tuple(sorted(cset)), simple=tuple(sorted(sset)), label="aligned",
                    score=p.cosine,
                    features={"l2_distance": p.distance, "relative_distance": p.relative_distance},
                ))
            found.sort(key=lambda a: (a.complex, a.simple))
            out.append(Alignment(ap.id, found, meta={"method": self.name, **self.params, "mining": stats}))
            if progress is not None:
                progress(n_done / len(pairs), f"muss: {n_done}/{len(pairs)} article pairs")
        return out
