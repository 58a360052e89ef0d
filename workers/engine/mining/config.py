"""Options of a corpus mining job (MUSS App. A.1; the ``mine`` command's ``--config`` keys)."""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from ..errors import check_options
from ..simplicity.muss_mining import SAME_DOCUMENT_MODES
from .records import _is_int

__all__ = ["MiningConfig"]


@dataclass(frozen=True)
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

    max_chars: int = 300
    max_punctuation: float = 0.10
    k: int = 8
    max_distance: float = 0.5
    max_relative: float = 0.6
    min_change: float = 0.20
    same_document: str = "any"
    exclude_same_document_first: bool = True
    evaluation_set: tuple[str, ...] = ()
    exact_limit: int = 20_000
    nlist: int | None = None
    nprobe: int = 16
    shard_size: int = 4096
    seed: int = 0
    device: str | None = None

    @classmethod
    def from_dict(cls, config: Mapping[str, Any] | None) -> MiningConfig:
        """Validate ``config`` (unknown keys and bad values raise ``ValueError`` naming them).

        Example:
            >>> MiningConfig.from_dict({"k": 4}).k
            4
        """
        config = dict(config or {})
        names = {f.name for f in fields(cls)}
        check_options("mine", config, names)
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in config:
                continue
            v = config[f.name]
            default = f.default
            if f.name == "evaluation_set":
                if not (isinstance(v, list) and all(isinstance(t, str) for t in v)):
                    raise ValueError("mine option evaluation_set must be a list of texts")
                v = tuple(v)
            elif f.name in ("nlist", "device"):
                ok = v is None or (isinstance(v, str) if f.name == "device" else (_is_int(v) and v > 0))
                if not ok:
                    raise ValueError(f"mine option {f.name} must be {'a device name' if f.name == 'device' else 'a positive integer'} or null")
            elif isinstance(default, bool):
                if not isinstance(v, bool):
                    raise ValueError(f"mine option {f.name} must be true or false")
            elif isinstance(default, int):
                if not _is_int(v) or v < (0 if f.name == "seed" else 1):
                    raise ValueError(f"mine option {f.name} must be a positive integer, got {v!r}")
            elif isinstance(default, float):
                if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
                    raise ValueError(f"mine option {f.name} must be a non-negative number, got {v!r}")
                v = float(v)
            elif f.name == "same_document" and v not in SAME_DOCUMENT_MODES:
                raise ValueError(f"unknown same_document {v!r}; choose one of: {', '.join(SAME_DOCUMENT_MODES)}")
            values[f.name] = v
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["evaluation_set"] = list(self.evaluation_set)
        return out
