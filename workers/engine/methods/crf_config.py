"""Options of the ``crf`` method: :class:`CRFAlignerConfig`, its schema :data:`PARAMS`, and the
file and constant names a trained MODEL_DIR shares with training (see :mod:`.crf`)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..crf import CRFConfig
from ..options import Option, build_config, option_fields
from ..paragraph_alignment import PARAGRAPH_VARIANTS, NewselaThresholds, WikiThresholds
from ..similarity import SIMILARITY_NAMES

__all__ = ["CRFAlignerConfig", "PARAMS", "THRESHOLDS_FILE", "DECISIONS_FILE", "LABEL_RULES", "NEVER",
           "PARAGRAPH_MODES", "CALIBRATED_NEWSELA", "CALIBRATED_WIKI"]

THRESHOLDS_FILE = "thresholds.json"
"""Tuned decision values of a trained MODEL_DIR: ``{"config": {option: value}, ...}``."""
DECISIONS_FILE = "decisions.json"
"""A trained MODEL_DIR's learnt aligned/partial decision and domain profile (:mod:`..decisions`)."""
LABEL_RULES: tuple[str, ...] = ("similarity", "pair_model", "learnt")
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


PARAGRAPH_MODES: tuple[str, ...] = ("mask", "within")

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
           "paragraph pair)", choices=PARAGRAPH_MODES),
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
    Option("domain_check", "bool", True, help="a trained model aligns article pairs unlike its training articles "
           "as the untrained aligner does"),
)
"""The option schema of the ``crf`` method (the fields of :class:`CRFAlignerConfig`)."""


@dataclass
@option_fields(PARAMS)
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
        label_rule: ``similarity`` (joined-text similarity ≥ ``aligned_threshold``),
            ``pair_model`` (P(aligned | linked) of a trained pair model, see
            :mod:`workers.engine.grouping`; needs ``similarity="pair-model"``) or ``learnt``
            (a trained MODEL_DIR's group labeller, :mod:`workers.engine.decisions`).
        group_aligned_threshold: ``pair_model``/``learnt`` rules' cut-off for n:m groups
            (``None`` = the 1:1 one).
        domain_check: a trained MODEL_DIR aligns an article pair that does not look like its
            training articles (its domain profile) as the untrained aligner does.
        base_similarity, pair_model_weight, candidates_per_simple: the ``pair-model``
            similarity's base backend, weight of P(linked) and candidates per simple sentence
            (:class:`~workers.engine.pair_similarity.PairModelSimilarity`).
    """

    crf: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, config: dict[str, Any]) -> CRFAlignerConfig:
        """``config`` checked against :data:`PARAMS` (an :class:`~workers.engine.options.OptionError`, a
        ``ValueError``, names every bad key), and the rules between options."""
        cfg = build_config(cls, "crf", PARAMS, config)
        if cfg.label_rule in ("pair_model", "learnt") and cfg.similarity != "pair-model":
            raise ValueError(f"label_rule {cfg.label_rule!r} needs similarity 'pair-model' (a trained model)")
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

