"""Options of a corpus mining job (MUSS App. A.1; the ``mine`` command's ``--config`` keys)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from ..options import Option, OptionError, build_config, option_fields
from ..simplicity.muss_index import SAME_DOCUMENT_MODES

__all__ = ["MINING_PARAMS", "MiningConfig"]

MINING_PARAMS: tuple[Option, ...] = (
    Option("max_chars", "int", 300, 1, None, "longest sequence mined, in characters"),
    Option("max_punctuation", "float", 0.10, 0.0, None, "most punctuation per character of a sequence"),
    Option("k", "int", 8, 1, None, "nearest neighbours searched per sequence"),
    Option("max_distance", "float", 0.5, 0.0, None, "largest L2 distance of two unit vectors kept"),
    Option("max_relative", "float", 0.6, 0.0, None, "largest distance relative to the neighbours' (margin)"),
    Option("min_change", "float", 0.20, 0.0, None, "least character-level change between the two sequences"),
    Option("same_document", "str", "any", help="pairs from one document: 'any' drops them all, 'overlapping' only "
           "those of overlapping windows, 'keep' only a sequence with itself", choices=SAME_DOCUMENT_MODES),
    Option("exclude_same_document_first", "bool", True, help="drop same-document neighbours before the search's k"),
    Option("evaluation_set", "list", [], help="texts whose near duplicates are never mined (a list of texts)"),
    Option("exact_limit", "int", 20_000, 1, None, "up to this many sequences the search is exact (else IVF)"),
    Option("nlist", "int", None, 1, None, "IVF cells (default 4·sqrt(N), at most N/39)", nullable=True),
    Option("nprobe", "int", 16, 1, None, "IVF cells searched per query"),
    Option("shard_size", "int", 4096, 1, None, "sequences per encode/search chunk"),
    Option("seed", "int", 0, 0, None, "random seed of the IVF training sample"),
    Option("device", "str", None, help="torch device, e.g. cpu or cuda (default: CUDA when available)",
           nullable=True),
)
"""The mining options (``mine --config`` keys, a ``muss-corpus`` run's params): types, ranges, defaults, help."""


@dataclass(frozen=True)
@option_fields(MINING_PARAMS)
class MiningConfig:
    """Parameters of a mining job (``--config`` keys; defaults of MUSS A.1 where they carry over).

    ``max_distance`` 0.5 (cosine ≥ 0.75) replaces MUSS's 0.05, which is for compressed LASER
    vectors; ``same_document="any"`` drops every pair of two sequences of one document (A.1:
    "we remove paraphrases that come from the same document"), ``"overlapping"`` only those of
    overlapping windows (§3.1), ``"keep"`` only a sequence with itself.
    ``shard_size`` sequences per encode/search chunk; ``nlist`` None = 4·√N (at most N/39).
    ``exact_limit`` 20,000: measured with MiniLM on 59k sequences (``bench/mining_bench.py``), exact
    search took 36.7 s and IVF974,SQ8 10.2 s including its training, finding 99.7% of the exact
    miner's pairs; with exact ∝ N² and IVF ∝ N (training) + N^1.5 (search) they cross near 13k.
    """

    evaluation_set: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, config: Mapping[str, Any] | None) -> MiningConfig:
        """Validate ``config`` against :data:`MINING_PARAMS` (an unknown key or a bad value is an
        :class:`~workers.engine.options.OptionError`, a ``ValueError``, naming them).

        Example:
            >>> MiningConfig.from_dict({"k": 4}).k
            4
        """
        built = build_config(cls, "mine", MINING_PARAMS, config)
        texts = built.evaluation_set
        if not all(isinstance(t, str) for t in texts):
            raise OptionError("mine", {"evaluation_set": "must be a list of texts"}, MINING_PARAMS)
        return replace(built, evaluation_set=tuple(texts))

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["evaluation_set"] = list(self.evaluation_set)
        return out
