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
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..crf import CRFConfig, CRFExample, NeuralCRF, gold_labels_from_links, train_crf
from ..decisions import Decisions, GroupLabeller, article_profile, group_features
from ..encoders import resolve_device
from ..errors import EngineError
from ..grouping import group_links, label_groups
from ..pair_similarity import PairModelSimilarity
from ..paragraph_alignment import align_paragraphs
from ..similarity import SimilarityModel, get_similarity
from ..types import AlignedPair, Alignment, ArticlePair
from . import ProgressFn, register
from .crf_config import (  # noqa: F401 - PARAMS is the method's option schema (methods.options)
    CALIBRATED_NEWSELA,
    CALIBRATED_WIKI,
    DECISIONS_FILE,
    LABEL_RULES,
    NEVER,
    PARAMS,
    THRESHOLDS_FILE,
    CRFAlignerConfig,
)

__all__ = ["CRFAlignerConfig", "CRFAligner", "crf_links", "train_crf_aligner", "save_crf_aligner",
           "THRESHOLDS_FILE", "LABEL_RULES", "NEVER"]

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


def _read_decisions(model_dir: Path) -> Decisions | None:
    """The learnt label decision and domain profile of a trained MODEL_DIR (``None`` when absent)."""
    path = model_dir / DECISIONS_FILE
    if not path.exists():
        return None
    try:
        return Decisions.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError, TypeError) as exc:
        raise EngineError(f"cannot read {path}: {exc}") from exc


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
    model_kinds = ("crf", "cross-encoder", "bi-encoder")  # a trained crf, or a pair model to use untrained
    calibrated_options = {"aligned": "aligned_threshold", "partial": "min_link_score"}

    def __init__(self, config: dict[str, Any] | None = None, model: str | None = None, *,
                 similarity: SimilarityModel | None = None, crf: NeuralCRF | None = None) -> None:
        """Build from ``config`` and ``model`` (see module docstring).

        ``similarity`` and ``crf`` inject ready objects instead (training decodes with the models
        it is fitting).
        """
        config = dict(config or {})
        self.crf: NeuralCRF
        self.decisions: Decisions | None = None
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
            self.decisions = _read_decisions(Path(model))
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
            wants_prob = cfg.label_rule == "pair_model" or (
                cfg.label_rule == "learnt" and self.labeller is not None and "p_aligned" in self.labeller.features)
            if wants_prob and isinstance(self.similarity, PairModelSimilarity):
                aligned_prob = self.similarity.aligned_share(
                    pair.complex.sentences, pair.simple.sentences, links)
            pairs_out = label_groups(groups, pair.complex.sentences, pair.simple.sentences, sim,
                                     self.similarity, cfg.aligned_threshold, extra,
                                     aligned_prob=aligned_prob,
                                     group_aligned_threshold=cfg.group_aligned_threshold)
            if cfg.label_rule == "learnt":
                pairs_out = self._learnt_labels(pair, pairs_out)
            out.append(Alignment(pair.id, pairs_out, meta={"method": "crf"}))
        return out

    @property
    def labeller(self) -> GroupLabeller | None:
        """A trained MODEL_DIR's learnt aligned/partial labeller (``None`` otherwise)."""
        return self.decisions.labeller if self.decisions else None

    def _learnt_labels(self, pair: ArticlePair, groups: list[AlignedPair]) -> list[AlignedPair]:
        """Labels from the trained group labeller: P(aligned) ≥ the 1:1 or the n:m cut-off
        (``aligned_threshold`` / ``group_aligned_threshold``, tuned on held-out articles)."""
        labeller = self.labeller
        if labeller is None or not groups:
            return groups
        rows = [group_features([pair.complex.sentences[c] for c in g.complex],
                               [pair.simple.sentences[s] for s in g.simple], g.features) for g in groups]
        cfg = self.config
        out = []
        for g, p in zip(groups, labeller.probability(rows)):
            single = len(g.complex) == 1 and len(g.simple) == 1
            cut = cfg.aligned_threshold if single or cfg.group_aligned_threshold is None \
                else cfg.group_aligned_threshold
            out.append(replace(g, label="aligned" if p >= cut else "partial",
                               features={**g.features, "p_aligned_learnt": float(p)}))
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
        outside = self.outside_domain(pairs)
        inside = [p for p in pairs if p.id not in outside]
        sub = (lambda f, m: progress(0.9 * f, m)) if progress is not None else None
        done = {a.id: a for a in self.align_with_sims(inside, self.similarities(inside, sub))}
        if outside:
            for a in self.untrained().align([p for p in pairs if p.id in outside]):
                a.meta["domain"] = f"untrained aligner: {outside[a.id]}"
                done[a.id] = a
        if progress is not None:
            progress(1.0, f"aligned {len(pairs)} article pairs")
        return [done[p.id] for p in pairs]

    def base_similarity(self) -> SimilarityModel:
        """The similarity the untrained aligner would use (a trained one's base)."""
        return self.similarity.base if isinstance(self.similarity, PairModelSimilarity) else self.similarity

    def outside_domain(self, pairs: Sequence[ArticlePair]) -> dict[str, str]:
        """Article pairs unlike a trained model's training articles (id → why); empty without a
        domain profile or with ``domain_check`` off."""
        domain = self.decisions.domain if self.decisions else None
        if domain is None or not self.config.domain_check:
            return {}
        base = self.base_similarity()
        reasons = {p.id: domain.outside(article_profile(p, base)) for p in pairs}
        return {k: v for k, v in reasons.items() if v}

    def untrained(self) -> CRFAligner:
        """The untrained ``crf`` aligner on this one's base similarity (encodings shared)."""
        keep = ("device", "merge_window", "paragraph_alignment", "paragraph_thresholds", "paragraph_mode",
                "batch_size", "sbert_weight")
        cfg = {k: getattr(self.config, k) for k in keep}
        return CRFAligner({**cfg, "similarity": self.config.base_similarity}, similarity=self.base_similarity())


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
