"""Sentence similarity backends behind one interface (SPEC §5.1, paper §2.2 "Semantic Similarity").

Every backend maps ``(complex_sents, simple_sents)`` to a matrix ``[n_complex, n_simple]`` of
scores, higher = more similar, in ``[0, 1]`` for all built-in backends:

* ``jaccard`` — word-set Jaccard coefficient (Xu et al. 2015).
* ``tfidf`` — cosine of TF-IDF word vectors, IDF fitted on the sentences of the article pair
  being aligned (Paetzold et al. 2017, MASSAlign).
* ``charngram`` — cosine of sublinear TF-IDF character 3-gram vectors (CATS' C3G measure,
  Štajner et al. 2018), IDF fitted on the article pair.
* ``sbert`` — cosine of sentence-transformers embeddings (default: bundled all-MiniLM-L6-v2),
  clipped to ``[0, 1]``; embeddings cached per sentence text.
* ``cross-encoder`` — P(aligned) from a fine-tuned ``CrossEncoder`` given by path (the paper's
  fine-tuned BERT, once annotations exist); for a 3-class model trained by
  :mod:`workers.engine.training` (not_aligned / partial / aligned), P(linked) = 1 − P(not_aligned).
* ``pair-model`` — the trained aligner's similarity (:mod:`workers.engine.pair_similarity`): that
  3-class model on the candidates of a base similarity, mixed with it.
* ``combined`` — ONE fixed model for every corpus: ``w·sbert + (1−w)·charngram`` (default
  ``w = 0.5``). News rewrites (Newsela, OneStopEnglish) keep many words, so lexical overlap is
  strong evidence there; Wikipedia and summaries paraphrase, where the embedding carries the
  signal. Averaging the two keeps both kinds of evidence without any per-dataset switch.

Example:
    >>> sim = get_similarity("tfidf")
    >>> m = sim.similarity(["The cat sat on the mat.", "Stocks fell."], ["A cat sat."])
    >>> m.shape, bool(m[0, 0] > m[1, 0])
    ((2, 1), True)
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from .pair_similarity import PairModelSimilarity
from .similarity_base import SimilarityModel

__all__ = [
    "SIMILARITY_NAMES",
    "SimilarityName",
    "SimilarityModel",
    "JaccardSimilarity",
    "TfidfSimilarity",
    "CharNgramSimilarity",
    "SbertSimilarity",
    "CrossEncoderSimilarity",
    "CombinedSimilarity",
    "get_similarity",
]

SimilarityName = Literal["jaccard", "tfidf", "charngram", "sbert", "cross-encoder", "combined",
                         "pair-model"]
SIMILARITY_NAMES: tuple[str, ...] = (
    "jaccard", "tfidf", "charngram", "sbert", "cross-encoder", "combined", "pair-model",
)

_WORD = r"(?u)\b\w+\b"
_WORD_RE = re.compile(_WORD)


class JaccardSimilarity(SimilarityModel):
    """|A ∩ B| / |A ∪ B| over lower-cased word sets (Xu et al. 2015)."""

    name = "jaccard"

    def similarity(self, complex_sents: Sequence[str], simple_sents: Sequence[str]) -> np.ndarray:
        empty = self._empty(len(complex_sents), len(simple_sents))
        if empty is not None:
            return empty
        from sklearn.feature_extraction.text import CountVectorizer

        vec = CountVectorizer(binary=True, lowercase=True, token_pattern=_WORD)
        try:
            x = vec.fit_transform(list(complex_sents) + list(simple_sents))
        except ValueError:  # no word at all (punctuation only)
            return np.zeros((len(complex_sents), len(simple_sents)), dtype=np.float32)
        a, b = x[: len(complex_sents)], x[len(complex_sents):]
        inter = np.asarray((a @ b.T).todense(), dtype=np.float64)
        na = np.asarray(a.sum(axis=1), dtype=np.float64)
        nb = np.asarray(b.sum(axis=1), dtype=np.float64).T
        union = na + nb - inter
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(union > 0, inter / union, 0.0)
        return out.astype(np.float32)


class _VectorCosine(SimilarityModel):
    """Cosine of sparse TF-IDF vectors with IDF fitted on the two sentence lists."""

    def _vectorizer(self) -> Any:
        raise NotImplementedError

    def similarity(self, complex_sents: Sequence[str], simple_sents: Sequence[str]) -> np.ndarray:
        empty = self._empty(len(complex_sents), len(simple_sents))
        if empty is not None:
            return empty
        try:
            x = self._vectorizer().fit_transform(list(complex_sents) + list(simple_sents))
        except ValueError:  # empty vocabulary
            return np.zeros((len(complex_sents), len(simple_sents)), dtype=np.float32)
        a, b = x[: len(complex_sents)], x[len(complex_sents):]
        out = np.asarray((a @ b.T).todense(), dtype=np.float32)  # rows are L2-normalised
        return np.clip(out, 0.0, 1.0)


class TfidfSimilarity(_VectorCosine):
    """TF-IDF word cosine (Paetzold et al. 2017); IDF fitted per article pair."""

    name = "tfidf"

    def __init__(self, *, stop_words: str | None = None, sublinear_tf: bool = False) -> None:
        self.stop_words = stop_words
        self.sublinear_tf = sublinear_tf

    def _vectorizer(self) -> Any:
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(lowercase=True, token_pattern=_WORD, stop_words=self.stop_words,
                               sublinear_tf=self.sublinear_tf)


class CharNgramSimilarity(_VectorCosine):
    """Character n-gram cosine with log-TF·IDF weights — CATS' C3G (Štajner et al. 2018)."""

    name = "charngram"

    def __init__(self, n: int = 3) -> None:
        self.n = n

    def _vectorizer(self) -> Any:
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(analyzer="char_wb", ngram_range=(self.n, self.n), lowercase=True,
                               sublinear_tf=True)


class SbertSimilarity(SimilarityModel):
    """Cosine of bi-encoder embeddings, clipped to ``[0, 1]``.

    Args:
        model: sentence-transformers name or path (``None`` = bundled all-MiniLM-L6-v2).
        device: ``None`` = CUDA when available.
    """

    name = "sbert"

    def __init__(self, model: str | None = None, *, device: str | None = None) -> None:
        from .encoders import get_encoder

        self.encoder = get_encoder(model, device)

    def similarity(self, complex_sents: Sequence[str], simple_sents: Sequence[str]) -> np.ndarray:
        empty = self._empty(len(complex_sents), len(simple_sents))
        if empty is not None:
            return empty
        emb = self.encoder.encode(list(complex_sents) + list(simple_sents))
        a, b = emb[: len(complex_sents)], emb[len(complex_sents):]
        return np.clip(a @ b.T, 0.0, 1.0).astype(np.float32)

    def paired(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise ValueError("paired() needs two lists of the same length")
        if not a:
            return np.zeros(0, dtype=np.float32)
        emb = self.encoder.encode(list(a) + list(b))
        ea, eb = emb[: len(a)], emb[len(a):]
        return np.clip((ea * eb).sum(axis=1), 0.0, 1.0).astype(np.float32)

    def group_similarity(
        self, complex_groups: Sequence[Sequence[str]], simple_groups: Sequence[Sequence[str]]
    ) -> np.ndarray:
        """Cosine of the mean sentence embeddings of each side (uses the embedding cache)."""
        out = np.zeros(len(complex_groups), dtype=np.float32)
        for k, (cg, sg) in enumerate(zip(complex_groups, simple_groups)):
            a = self.encoder.encode(list(cg)).mean(axis=0)
            b = self.encoder.encode(list(sg)).mean(axis=0)
            denom = float(np.linalg.norm(a) * np.linalg.norm(b))
            out[k] = float(a @ b) / denom if denom > 0 else 0.0
        return np.clip(out, 0.0, 1.0)


class CrossEncoderSimilarity(SimilarityModel):
    """P(aligned | complex, simple) from a fine-tuned ``sentence_transformers.CrossEncoder``.

    The model reads the pair as ``(complex, simple)``. With one output a sigmoid turns it into a
    probability; with several (classes ``not_aligned, partial, aligned`` of a model trained by
    :mod:`workers.engine.training`) a softmax does, and the score is 1 − P(class 0), the
    probability that the pair is linked at all. Scores are cached per pair of texts.

    Args:
        model: path of a saved CrossEncoder directory.
        device: ``None`` = CUDA when available.
        batch_size: pairs per forward pass.
    """

    name = "cross-encoder"

    def __init__(self, model: str, *, device: str | None = None, batch_size: int = 64) -> None:
        from .encoders import load_cross_encoder

        if not model:
            raise ValueError("the cross-encoder similarity needs a model path")
        self.model = load_cross_encoder(str(model), device)
        self.batch_size = batch_size
        self._cache: dict[tuple[str, str], float] = {}

    def _score(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        import torch

        todo = list(dict.fromkeys(p for p in pairs if p not in self._cache))
        if todo:
            multi = int(self.model.num_labels) > 1
            act = torch.nn.Softmax(dim=-1) if multi else torch.nn.Sigmoid()
            scores = self.model.predict(todo, batch_size=self.batch_size, show_progress_bar=False,
                                        activation_fn=act, convert_to_numpy=True)
            scores = np.asarray(scores, dtype=np.float32).reshape(len(todo), -1)
            scores = 1.0 - scores[:, 0] if multi else scores[:, -1]
            self._cache.update(zip(todo, scores.tolist()))
        return np.array([self._cache[p] for p in pairs], dtype=np.float32)

    def similarity(self, complex_sents: Sequence[str], simple_sents: Sequence[str]) -> np.ndarray:
        empty = self._empty(len(complex_sents), len(simple_sents))
        if empty is not None:
            return empty
        pairs = [(c, s) for c in complex_sents for s in simple_sents]
        return self._score(pairs).reshape(len(complex_sents), len(simple_sents))

    def paired(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise ValueError("paired() needs two lists of the same length")
        return self._score(list(zip(a, b)))


class CombinedSimilarity(SimilarityModel):
    """Weighted mean of several backends: ``Σ w_k·sim_k / Σ w_k``.

    The default (``get_similarity("combined")``) is ``0.5·sbert + 0.5·charngram``: on the dev
    sets the character n-gram cosine was the stronger lexical half (it also matches inflected
    forms, which simplification often changes), and 0.5 sat between the best weight for
    paraphrase-heavy pairs (ASSET, ~0.5–0.7) and for lexical news rewrites (OneStop, ~0.3–0.4).
    """

    name = "combined"

    def __init__(self, parts: Mapping[SimilarityModel, float]) -> None:
        if not parts or any(w < 0 for w in parts.values()) or sum(parts.values()) <= 0:
            raise ValueError("combined similarity needs positive weights")
        self.parts = dict(parts)
        self._total = float(sum(parts.values()))

    def _mix(self, shape: int | tuple[int, int], score: Callable[[SimilarityModel], np.ndarray]) -> np.ndarray:
        """The parts' scores, weighted and averaged."""
        out = np.zeros(shape, dtype=np.float32)
        for model, w in self.parts.items():
            if w:
                out += w * score(model)
        return out / self._total

    def similarity(self, complex_sents: Sequence[str], simple_sents: Sequence[str]) -> np.ndarray:
        return self._mix((len(complex_sents), len(simple_sents)), lambda m: m.similarity(complex_sents, simple_sents))

    def paired(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        return self._mix(len(a), lambda m: m.paired(a, b))

    def group_similarity(
        self, complex_groups: Sequence[Sequence[str]], simple_groups: Sequence[Sequence[str]]
    ) -> np.ndarray:
        return self._mix(len(complex_groups), lambda m: m.group_similarity(complex_groups, simple_groups))


def get_similarity(
    name: str = "sbert",
    model: str | None = None,
    *,
    device: str | None = None,
    sbert_weight: float = 0.5,
) -> SimilarityModel:
    """Build a backend by name.

    Args:
        name: one of ``SIMILARITY_NAMES``.
        model: bi-encoder name/path for ``sbert``/``combined``; CrossEncoder path for
            ``cross-encoder`` and ``pair-model`` (required there).
        device: torch device for neural models (``None`` = CUDA when available).
        sbert_weight: weight ``w`` of the embedding cosine in ``combined``.

    Raises:
        ValueError: unknown name (the message lists the valid ones), or missing model path.

    Example:
        >>> get_similarity("jaccard").similarity(["a b c"], ["a b d"]).round(2).tolist()
        [[0.5]]
    """
    if name == "jaccard":
        return JaccardSimilarity()
    if name == "tfidf":
        return TfidfSimilarity()
    if name == "charngram":
        return CharNgramSimilarity()
    if name == "sbert":
        return SbertSimilarity(model, device=device)
    if name == "cross-encoder":
        if not model:
            raise ValueError("similarity 'cross-encoder' needs a model path (--model)")
        return CrossEncoderSimilarity(model, device=device)
    if name == "pair-model":
        if not model:
            raise ValueError("similarity 'pair-model' needs a trained model directory (--model)")
        return PairModelSimilarity(model, base=get_similarity("combined", device=device), device=device)
    if name == "combined":
        if not 0.0 <= sbert_weight <= 1.0:
            raise ValueError(f"sbert_weight must be in [0, 1], got {sbert_weight}")
        return CombinedSimilarity({SbertSimilarity(model, device=device): sbert_weight,
                                   CharNgramSimilarity(): 1.0 - sbert_weight})
    raise ValueError(f"unknown similarity {name!r}; choose one of: {', '.join(SIMILARITY_NAMES)}")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (the tokenisation of the lexical backends)."""
    return _WORD_RE.findall(text.lower())
