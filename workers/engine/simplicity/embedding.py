"""The sentence-embedding seam of the seed-paper methods.

Methods take any object with ``encode(texts) -> np.ndarray`` (unit-length rows); by default the
engine's cached SBERT bi-encoder (:func:`workers.engine.encoders.get_encoder`: bundled
all-MiniLM-L6-v2 offline, or any sentence-transformers path). Tests pass a tiny deterministic
encoder instead so the algorithms can be checked without a neural model.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from ..options import Option

__all__ = ["Encoder", "default_encoder", "token_lengths", "max_tokens"]


class Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings ``[len(texts), dim]``."""
        ...


def default_encoder(model: str | None = None, device: str | None = None) -> Encoder:
    """The engine's shared cached bi-encoder for ``model`` (None = bundled all-MiniLM-L6-v2)."""
    from ..encoders import get_encoder

    return get_encoder(model, device)


class LazyEncoder:
    """Mixin for methods that embed with SBERT: the encoder (``model`` path/name on ``device``) is
    loaded on first use, so building an aligner to validate its config costs nothing. Tests pass a
    ready ``Encoder`` instead."""

    model: str | None = None
    device: str | None = None
    _encoder: Encoder | None = None

    def _configure(self, method: str, schema: Sequence[Option], config: dict[str, Any] | None, model: str | None,
                   encoder: Encoder | None) -> dict[str, Any]:
        """``config`` checked against the method's ``schema`` (an ``OptionError`` naming every bad key); keeps the
        ``model``, the ``device`` option and a ready ``encoder``. Returns the config (a copy) for the rest."""
        from ..options import check_config

        config = dict(config or {})
        check_config(method, schema, config)
        self.model, self.device, self._encoder = model, config.get("device"), encoder
        return config

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = default_encoder(self.model, self.device)
        return self._encoder


def _tokenizer(encoder: object) -> object | None:
    # sentence-transformers models expose .tokenizer; the engine's SentenceEncoder wraps one.
    inner = getattr(encoder, "_model", encoder)
    return getattr(inner, "tokenizer", None)


def max_tokens(encoder: object, default: int = 128) -> int:
    """The encoder's maximum input length in word pieces (``max_seq_length``), else ``default``."""
    inner = getattr(encoder, "_model", encoder)
    value = getattr(inner, "max_seq_length", None)
    return int(value) if isinstance(value, int) and value > 0 else default


def token_lengths(encoder: object, texts: Sequence[str]) -> list[int]:
    """Word-piece counts of ``texts`` (special tokens included) with the encoder's tokenizer.

    Falls back to whitespace tokens × 1.3 (a typical word-piece/word ratio) when the encoder
    has no tokenizer, e.g. a test double.
    """
    tok = _tokenizer(encoder)
    if tok is None:
        return [int(len(t.split()) * 1.3) + 2 for t in texts]
    enc = tok(list(texts), add_special_tokens=True, truncation=False)["input_ids"]  # type: ignore[operator]
    return [len(ids) for ids in enc]
