"""``crf``: the neural CRF sentence aligner (paper §2; SPEC §5.1) as an engine method.

Pipeline per article pair:

1. sentence similarity ``[n_complex, n_simple]`` (default ``combined`` = 0.5·MiniLM cosine +
   0.5·character 3-gram cosine, see :mod:`workers.engine.similarity`; a fine-tuned cross-encoder when
   ``model`` points to one);
2. optional paragraph alignment (§2.4, ``paragraph_alignment``: ``off``/``newsela``/``wiki``):
   sentence pairs outside aligned paragraphs get similarity 0, which restricts the CRF to
   aligned paragraphs while keeping one decode per article (transitions stay article-wide);
   off by default — with MiniLM/TF-IDF similarities and calibrated thresholds it did not raise
   sentence-level F1 on the dev data (see ``bench/align_bench.py``);
3. batched Viterbi decoding (:class:`~workers.engine.crf.NeuralCRF`): one complex sentence (or
   none) per simple sentence → 1:1 links and splits (several simple → one complex);
4. **merges** (several complex → one simple): the CRF labels each *simple* sentence with a single
   complex sentence, so fusions are recovered by secondary links. For a simple sentence s aligned
   to c, a neighbour c' (|c' − c| ≤ ``merge_window``) not aligned to anything by the CRF is
   linked to s too when ``sim(c', s) ≥ merge_threshold`` **and** s is the most similar simple
   sentence of c' (a check in the reverse direction). Decoding the CRF a second time in the
   reverse direction was rejected: its null/transition parameters are learned for the
   simple→complex direction, and the one-sided check is cheaper and keeps 1:1 precision;
5. links → n:m groups (:func:`~workers.engine.grouping.group_links`); a group is ``aligned``
   when the similarity of its joined texts reaches ``aligned_threshold``, else ``partial``
   (``label_rule="similarity"``), or — for a trained aligner (``label_rule="pair_model"``) — when
   its pair model's P(aligned | linked) reaches ``aligned_threshold`` (1:1 groups) or
   ``group_aligned_threshold`` (n:m groups).

``model`` may be a directory saved by :func:`save_crf_aligner` / ``NeuralCRF.save`` (CRF weights
+ the settings it was trained with), a MODEL_DIR written by ``python -m workers.engine train``
(that plus the pair model and ``thresholds.json``, whose ``config`` overrides the saved settings;
``--config`` overrides both), a cross-encoder directory, or a sentence-transformers name/path
for the bi-encoder.

Example:
    >>> from workers.engine.methods import get_aligner
    >>> aligner = get_aligner("crf", {"similarity": "tfidf"})
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from ..crf import CRFConfig, CRFExample, NeuralCRF, gold_labels_from_links, train_crf
from ..encoders import resolve_device
from ..errors import EngineError, check_options
from ..grouping import group_links, label_groups
from ..options import Option
from ..pair_similarity import PairModelSimilarity
from ..paragraph_alignment import (
    PARAGRAPH_VARIANTS,
    NewselaThresholds,
    WikiThresholds,
    align_paragraphs,
)
from ..similarity import SIMILARITY_NAMES, SimilarityModel, get_similarity
from ..types import Alignment, ArticlePair
from . import ProgressFn, register

__all__ = ["CRFAlignerConfig", "CRFAligner", "crf_links", "train_crf_aligner", "save_crf_aligner",
           "THRESHOLDS_FILE", "LABEL_RULES", "NEVER"]

THRESHOLDS_FILE = "thresholds.json"
"""Tuned decision values of a trained MODEL_DIR: ``{"config": {option: value}, ...}``."""
LABEL_RULES: tuple[str, ...] = ("similarity", "pair_model")
NEVER = 1.01
"""A cut-off above every score in ``[0, 1]``: what it applies to never happens (tuned values may be it)."""

# Paragraph thresholds calibrated (workers.engine.paragraph_alignment.calibrate) for the default
# ``combined`` similarity on the ASSET-based dev set (paragraph-link F1 0.990 for Newsela's
# algorithm vs 0.960 with the paper's values; 0.958 vs 0.037 for the Wikipedia one); used when
# paragraph alignment is switched on without explicit thresholds. On the dev sets, restricting the
# CRF to aligned paragraphs did not raise sentence-level F1 (ASSET 0.991 → 0.986, OneStop ±0.01),
# hence ``paragraph_alignment="off"`` by default.
CALIBRATED_NEWSELA = NewselaThresholds(tau1=0.1, tau2=0.34, tau3=0.7244, tau4=0.998915818299745,
                                       tau5=0.5)
CALIBRATED_WIKI = WikiThresholds(tau1=0.7244, tau2=0.8, tau3=0.5, tau4=5, tau5=0.9958)


@dataclass
class CRFAlignerConfig:
    """Options of the ``crf`` method (keys of its ``config`` dict).

    Attributes:
        similarity: similarity backend (``SIMILARITY_NAMES``); forced to ``cross-encoder`` when
            ``model`` is a cross-encoder.
        sbert_weight: embedding weight of the ``combined`` similarity.
        device: torch device (``None`` = CUDA when available).
        aligned_threshold: joined-text similarity from which a group is ``aligned``.
        merge_threshold: similarity needed for a secondary (merge) link.
        merge_window: how far (in complex sentences) a merge partner may be.
        paragraph_alignment: ``off``, ``newsela`` or ``wiki``.
        paragraph_thresholds: τ1..τ5 overrides for the chosen variant.
        batch_size: article pairs per Viterbi batch.
        min_link_score: links whose similarity is below it are dropped after decoding (0 = keep
            all); the knob to tune on labelled dev data like a baseline's threshold (see
            ``bench/align_bench.py``).
        crf: :class:`~workers.engine.crf.CRFConfig` overrides (untrained model only).
        label_rule: ``similarity`` (joined-text similarity ≥ ``aligned_threshold``) or
            ``pair_model`` (P(aligned | linked) of a trained pair model, see
            :mod:`workers.engine.grouping`; needs ``similarity="pair-model"``).
        group_aligned_threshold: ``pair_model`` rule's cut-off for n:m groups (``None`` = the
            1:1 one).
        base_similarity, pair_model_weight, candidates_per_simple: the ``pair-model``
            similarity's base backend, weight of P(linked) and candidates per simple sentence
            (:class:`~workers.engine.pair_similarity.PairModelSimilarity`).
    """

    similarity: str = "combined"
    sbert_weight: float = 0.5
    device: str | None = None
    aligned_threshold: float = 0.6
    merge_threshold: float = 0.4
    merge_window: int = 2
    paragraph_alignment: str = "off"
    paragraph_thresholds: dict[str, float] | None = None
    paragraph_mode: str = "mask"
    batch_size: int = 16
    min_link_score: float = 0.0
    crf: dict[str, Any] = field(default_factory=dict)
    label_rule: str = "similarity"
    group_aligned_threshold: float | None = None
    base_similarity: str = "combined"
    pair_model_weight: float = 0.5
    candidates_per_simple: int = 5

    @classmethod
    def build(cls, config: dict[str, Any]) -> CRFAlignerConfig:
        check_options("crf", config, {f.name for f in fields(cls)})
        cfg = cls(**config)
        if cfg.similarity not in SIMILARITY_NAMES:
            raise ValueError(f"unknown similarity {cfg.similarity!r}; choose one of: "
                             f"{', '.join(SIMILARITY_NAMES)}")
        if cfg.paragraph_mode not in PARAGRAPH_MODES:
            raise ValueError(f"unknown paragraph_mode {cfg.paragraph_mode!r}; choose one of: {', '.join(PARAGRAPH_MODES)}")
        if cfg.paragraph_alignment not in ("off", *PARAGRAPH_VARIANTS):
            raise ValueError(f"unknown paragraph_alignment {cfg.paragraph_alignment!r}; choose "
                             f"one of: off, {', '.join(PARAGRAPH_VARIANTS)}")
        if cfg.merge_window < 0 or cfg.batch_size < 1:
            raise ValueError("need merge_window >= 0 and batch_size >= 1")
        if cfg.label_rule not in LABEL_RULES:
            raise ValueError(f"unknown label_rule {cfg.label_rule!r}; choose one of: "
                             f"{', '.join(LABEL_RULES)}")
        if cfg.label_rule == "pair_model" and cfg.similarity != "pair-model":
            raise ValueError("label_rule 'pair_model' needs similarity 'pair-model' (a trained model)")
        CRFConfig.from_dict(dict(cfg.crf))  # validates the keys
        return cfg

    def paragraph_threshold_object(self) -> NewselaThresholds | WikiThresholds | None:
        if self.paragraph_alignment == "off":
            return None
        base = CALIBRATED_NEWSELA if self.paragraph_alignment == "newsela" else CALIBRATED_WIKI
        if not self.paragraph_thresholds:
            return base
        d = asdict(base)
        unknown = set(self.paragraph_thresholds) - set(d)
        if unknown:
            raise ValueError(f"unknown paragraph threshold(s) {sorted(unknown)}; valid: {sorted(d)}")
        d.update(self.paragraph_thresholds)
        return type(base)(**d)


PARAMS: tuple[Option, ...] = (
    Option("similarity", "str", "combined", help="sentence similarity backend", choices=tuple(SIMILARITY_NAMES)),
    Option("sbert_weight", "float", 0.5, 0.0, 1.0, "embedding weight of the combined similarity"),
    Option("device", "str", None, help="torch device, e.g. cpu or cuda (default: CUDA when available)"),
    Option("aligned_threshold", "float", 0.6, 0.0, NEVER, "a group is 'aligned' from this score (else 'partial'; "
           f"{NEVER:g} = never)"),
    Option("merge_threshold", "float", 0.4, 0.0, NEVER, f"similarity needed for a secondary (merge) link ({NEVER:g} = "
           "no merge links)"),
    Option("merge_window", "int", 2, 0, 20, "how far (in complex sentences) a merge partner may be"),
    Option("paragraph_alignment", "str", "off", help="restrict the CRF to aligned paragraphs",
           choices=("off", *PARAGRAPH_VARIANTS)),
    Option("paragraph_thresholds", "object", None, help="tau1..tau5 overrides of the paragraph variant",
           nullable=True),
    Option("paragraph_mode", "str", "mask", help="with paragraph alignment: 'mask' (one decode per article, "
           "pairs outside aligned paragraphs zeroed) or 'within' (the paper's §2.4: one CRF decode per aligned "
           "paragraph pair)", choices=("mask", "within")),
    Option("batch_size", "int", 16, 1, 1024, "article pairs per Viterbi batch"),
    Option("min_link_score", "float", 0.0, 0.0, 1.0, "links below this similarity are dropped (0 = keep all)"),
    Option("crf", "object", {}, help="CRF hyper-parameter overrides (untrained model only)"),
    Option("label_rule", "str", "similarity", help="how a group's label is decided", choices=LABEL_RULES),
    Option("group_aligned_threshold", "float", None, 0.0, NEVER, "pair_model rule's cut-off for n:m groups "
           f"({NEVER:g} = n:m groups are always partial; default: aligned_threshold)", nullable=True),
    Option("base_similarity", "str", "combined", help="base backend of the pair-model similarity",
           choices=tuple(SIMILARITY_NAMES)),
    Option("pair_model_weight", "float", 0.5, 0.0, 1.0, "weight of P(linked) in the pair-model similarity"),
    Option("candidates_per_simple", "int", 5, 1, 100, "pair-model candidates per simple sentence"),
)
"""The option schema of the ``crf`` method (the fields of :class:`CRFAlignerConfig`)."""


PARAGRAPH_MODES: tuple[str, ...] = ("mask", "within")


def _read_thresholds(model_dir: Path) -> dict[str, Any]:
    """The ``config`` of ``thresholds.json`` in a trained MODEL_DIR (``{}`` when absent)."""
    path = model_dir / THRESHOLDS_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise EngineError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("config", {}), dict):
        raise EngineError(f"{path} must be an object with a 'config' object")
    return dict(data.get("config") or {})


def _is_cross_encoder(path: Path) -> bool:
    try:
        conf = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    return any("ForSequenceClassification" in a for a in conf.get("architectures") or [])


def crf_links(
    labels: np.ndarray, sim: np.ndarray, merge_threshold: float, merge_window: int
) -> tuple[list[tuple[int, int]], set[tuple[int, int]]]:
    """Links from CRF labels plus secondary merge links (step 4 of the module docstring).

    Returns:
        ``(links, merge_links)``; ``merge_links`` is the subset added in step 4.
    """
    n = sim.shape[0]
    primary = [(int(a) - 1, s) for s, a in enumerate(labels) if a > 0]
    used = {c for c, _ in primary}
    merges: set[tuple[int, int]] = set()
    if n and merge_window > 0:
        best_simple = sim.argmax(axis=1) if sim.shape[1] else np.zeros(n, dtype=int)
        for c, s in primary:
            for k in range(max(0, c - merge_window), min(n, c + merge_window + 1)):
                if k == c or k in used:
                    continue
                if sim[k, s] >= merge_threshold and best_simple[k] == s:
                    merges.add((k, s))
    return primary + sorted(merges), merges


@register("crf")
class CRFAligner:
    """The neural CRF aligner (see module docstring)."""

    name = "crf"

    def __init__(self, config: dict[str, Any] | None = None, model: str | None = None, *,
                 similarity: SimilarityModel | None = None, crf: NeuralCRF | None = None) -> None:
        """Build from ``config`` and ``model`` (see module docstring).

        ``similarity`` and ``crf`` inject ready objects instead (training decodes with the models
        it is fitting).
        """
        config = dict(config or {})
        self.crf: NeuralCRF
        sim_model: str | None = None
        if crf is not None:
            self.crf = crf
            sim_model = model
        elif model and (Path(model) / "crf.json").exists():
            self.crf, extra = NeuralCRF.load(model)
            saved = dict(extra.get("aligner_config") or {})
            saved.update(_read_thresholds(Path(model)))
            saved.update(config)
            config = saved
            sm = extra.get("similarity_model")
            if sm == ".":
                sim_model = str(model)
            elif isinstance(sm, str) and sm:
                sim_model = str(Path(model) / sm) if (Path(model) / sm).exists() else sm
        else:
            sim_model = model
        self.config = CRFAlignerConfig.build(config)
        if crf is None and not (model and (Path(model) / "crf.json").exists()):
            self.crf = NeuralCRF(CRFConfig.from_dict(dict(self.config.crf)))
        if sim_model and self.config.similarity != "pair-model" and Path(sim_model).is_dir() \
                and _is_cross_encoder(Path(sim_model)):
            self.config.similarity = "cross-encoder"
        self.similarity_model = sim_model
        self.similarity: SimilarityModel = similarity or self._build_similarity(sim_model)
        # the CRF decodes on the encoder's device (CUDA when the worker has it), not always on the CPU
        self.device = resolve_device(self.config.device)
        self.crf.to(self.device)
        self.crf.eval()

    def _build_similarity(self, sim_model: str | None) -> SimilarityModel:
        cfg = self.config
        if cfg.similarity == "pair-model":
            if not sim_model:
                raise ValueError("similarity 'pair-model' needs a trained model directory (--model)")
            return PairModelSimilarity(sim_model,
                                       base=get_similarity(cfg.base_similarity, device=cfg.device),
                                       weight=cfg.pair_model_weight,
                                       candidates=cfg.candidates_per_simple, device=cfg.device)
        return get_similarity(cfg.similarity, sim_model, device=cfg.device,
                              sbert_weight=cfg.sbert_weight)

    # ------------------------------------------------------------------
    def similarities(self, pairs: Sequence[ArticlePair],
                     progress: ProgressFn | None = None) -> list[np.ndarray]:
        """Sentence similarity per pair, restricted to aligned paragraphs when enabled."""
        out = []
        thresholds = self.config.paragraph_threshold_object()
        self.paragraph_links: dict[str, list[tuple[tuple[int, ...], int]]] = {}
        for k, p in enumerate(pairs):
            sim = self.similarity.similarity(p.complex.sentences, p.simple.sentences)
            if thresholds is not None and sim.size:
                pa = align_paragraphs(
                    sim, p.complex.paragraph_index, p.simple.paragraph_index,
                    variant=self.config.paragraph_alignment,  # type: ignore[arg-type]
                    thresholds=thresholds, n_complex_paragraphs=len(p.complex.paragraphs),
                    n_simple_paragraphs=len(p.simple.paragraphs))
                self.paragraph_links[p.id] = pa.links
                sim = np.where(pa.sentence_mask(p.complex.paragraph_index,
                                                p.simple.paragraph_index), sim, 0.0)
                sim = sim.astype(np.float32)
            out.append(sim)
            if progress is not None:
                progress((k + 1) / len(pairs), f"similarity {k + 1}/{len(pairs)}")
        return out

    def decode(self, sims: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Viterbi labels per pair, in size-sorted batches."""
        order = sorted(range(len(sims)), key=lambda i: (sims[i].shape[0], sims[i].shape[1]))
        labels: list[np.ndarray | None] = [None] * len(sims)
        bs = self.config.batch_size
        for k in range(0, len(order), bs):
            idx = order[k: k + bs]
            for i, lab in zip(idx, self.crf.decode([sims[i] for i in idx])):
                labels[i] = lab
        return labels  # type: ignore[return-value]

    def align_with_sims(self, pairs: Sequence[ArticlePair],
                        sims: Sequence[np.ndarray]) -> list[Alignment]:
        """Decode and group, given the similarity matrices (used by the benchmark)."""
        cfg = self.config
        out = []
        within = cfg.paragraph_mode == "within" and cfg.paragraph_alignment != "off"
        decoded = self._decode_within(pairs, sims) if within else [
            crf_links(labels, sim, cfg.merge_threshold, cfg.merge_window) for sim, labels in zip(sims, self.decode(sims))]
        for pair, sim, (links, merges) in zip(pairs, sims, decoded):
            if cfg.min_link_score > 0:
                links = [link for link in links if sim[link] >= cfg.min_link_score]
            groups = group_links(links)
            extra = {g: {"merge_links": float(sum((c, s) in merges for c in g[0] for s in g[1]))}
                     for g in groups}
            aligned_prob = None
            if cfg.label_rule == "pair_model" and isinstance(self.similarity, PairModelSimilarity):
                aligned_prob = self.similarity.aligned_share(
                    pair.complex.sentences, pair.simple.sentences, links)
            pairs_out = label_groups(groups, pair.complex.sentences, pair.simple.sentences, sim,
                                     self.similarity, cfg.aligned_threshold, extra,
                                     aligned_prob=aligned_prob,
                                     group_aligned_threshold=cfg.group_aligned_threshold)
            out.append(Alignment(pair.id, pairs_out, meta={"method": "crf"}))
        return out

    def _paragraph_links_of(self, pair: ArticlePair, sim: np.ndarray) -> list[tuple[tuple[int, ...], int]]:
        if not sim.size:
            return []
        return align_paragraphs(
            sim, pair.complex.paragraph_index, pair.simple.paragraph_index,
            variant=self.config.paragraph_alignment,  # type: ignore[arg-type]
            thresholds=self.config.paragraph_threshold_object(), n_complex_paragraphs=len(pair.complex.paragraphs),
            n_simple_paragraphs=len(pair.simple.paragraphs)).links

    def _decode_within(self, pairs: Sequence[ArticlePair], sims: Sequence[np.ndarray]
                       ) -> list[tuple[list[tuple[int, int]], set[tuple[int, int]]]]:
        """The paper's paragraph-first alignment (§2.4): one CRF decode per aligned paragraph pair
        (the complex side may be several merged consecutive paragraphs), links mapped back to the
        article's sentence indices. All paragraph pairs of all articles are decoded in batches."""
        cfg = self.config
        blocks: list[tuple[int, np.ndarray, np.ndarray]] = []  # (pair index, complex rows, simple cols)
        for k, pair in enumerate(pairs):
            c_par = np.asarray(pair.complex.paragraph_index)
            s_par = np.asarray(pair.simple.paragraph_index)
            stored = getattr(self, "paragraph_links", {})
            links = stored[pair.id] if pair.id in stored else self._paragraph_links_of(pair, sims[k])
            for complex_pars, simple_par in links:
                rows = np.flatnonzero(np.isin(c_par, complex_pars))
                cols = np.flatnonzero(s_par == simple_par)
                if rows.size and cols.size:
                    blocks.append((k, rows, cols))
        subs = [np.ascontiguousarray(sims[k][np.ix_(rows, cols)]) for k, rows, cols in blocks]
        out: list[tuple[list[tuple[int, int]], set[tuple[int, int]]]] = [([], set()) for _ in pairs]
        for (k, rows, cols), sub, labels in zip(blocks, subs, self.decode(subs)):
            links, merges = crf_links(labels, sub, cfg.merge_threshold, cfg.merge_window)
            out[k][0].extend((int(rows[c]), int(cols[s])) for c, s in links)
            out[k][1].update((int(rows[c]), int(cols[s])) for c, s in merges)
        return [(sorted(set(links)), merges) for links, merges in out]

    def align(self, pairs: Sequence[ArticlePair],
              progress: ProgressFn | None = None) -> list[Alignment]:
        pairs = list(pairs)
        sub = (lambda f, m: progress(0.9 * f, m)) if progress is not None else None
        sims = self.similarities(pairs, sub)
        out = self.align_with_sims(pairs, sims)
        if progress is not None:
            progress(1.0, f"aligned {len(pairs)} article pairs")
        return out


def train_crf_aligner(
    pairs: Sequence[ArticlePair],
    config: dict[str, Any] | None = None,
    model: str | None = None,
    *,
    epochs: int = 30,
    lr: float = 0.02,
    progress: ProgressFn | None = None,
) -> tuple[CRFAligner, list[float]]:
    """Fit the CRF of a ``crf`` aligner on gold-labelled article pairs (Eq. 6).

    The similarity model is kept fixed; the emission scale, the null score and the transition
    FFNN are learned. Returns the trained aligner and the per-epoch NLL.

    Raises:
        ValueError: no pair has gold links.
    """
    aligner = CRFAligner(config, model)
    labelled = [p for p in pairs if p.gold is not None]
    if not labelled:
        raise ValueError("training needs article pairs with gold links")
    sims = aligner.similarities(labelled)
    examples = [CRFExample(s, gold_labels_from_links(p.gold or (), len(p.complex), len(p.simple), s),
                           id=p.id) for p, s in zip(labelled, sims)]
    history = train_crf(aligner.crf, examples, epochs=epochs, lr=lr, progress=progress)
    return aligner, history


def save_crf_aligner(aligner: CRFAligner, directory: str | Path) -> Path:
    """Save a (trained) ``crf`` aligner so ``get_aligner("crf", model=directory)`` reloads it."""
    cfg = asdict(aligner.config)
    cfg.pop("crf", None)
    return aligner.crf.save(directory, extra={"aligner_config": cfg,
                                              "similarity_model": aligner.similarity_model or ""})
