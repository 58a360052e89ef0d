"""Every pair-level attribute of SPEC §5.4–5.7 in one call (used by ``workers.engine score``).

For each (complex, simple, refs) pair:

* §5.4 Sum4Simp: ``len``, ``comp``, ``freq`` (odds ratios need a reference corpus), ``sari``
  (needs refs), and with a reference corpus the t-scores ``t_*``, ``T`` and ``s4s_keep``;
* §5.5 WIVICO gains: ``gain_sl``, ``gain_nw``, ``gain_wer``, ``gain_bleu``, ``gain_cefr`` and, with
  a parser, ``gain_nne`` and the syntactic gains; ``gain_prob`` with a trained classifier;
* §5.6 pivot: ``bleu`` (simple vs complex), ``fres_complex``, ``fres_simple``, ``fres_gain``,
  ``pivot_keep``;
* §5.7 ACCESS: ``char_ratio``, ``lev_sim``, ``word_rank_ratio``, ``dep_depth_ratio`` (parser),
  plus ``levenshtein_ratio`` (python-Levenshtein ratio) for reference.

t-scores are produced *only* with a reference corpus (or a fitted filter): fitting the normal
distributions on the pairs being filtered would make every corpus look average. Skipped
attributes are returned with the reason.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .access import access_attributes
from .bleu import sentence_bleu
from .edits import levenshtein_ratio
from .gain_features import GainFeaturizer
from .pairs import TextPair
from .pivot import H_BLEU, H_FRES
from .readability import FRES_COEFFICIENTS, fres
from .sum4simp_filter import Sum4SimpFilter

__all__ = ["ScoreReport", "score_pairs"]


@dataclass
class ScoreReport:
    """Attributes per pair (input order) and what could not be computed, with why."""

    attributes: list[dict[str, float]]
    skipped: dict[str, str] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)


def score_pairs(
    pairs: Sequence[TextPair],
    reference: Sequence[TextPair] | None = None,
    *,
    language: str = "en",
    parser: Any = "auto",
    lexicon: dict[str, float] | None = None,
    cefr_lexicon: dict[str, int] | None = None,
    sum4simp_filter: Sum4SimpFilter | None = None,
    gain_classifier: Any = None,
) -> ScoreReport:
    """Compute every §5.4–5.7 attribute for ``pairs``.

    Args:
        pairs: the pairs to score.
        reference: a reference simplification corpus for the Sum4Simp fits and odds ratios.
        language: ISO 639-1 code.
        parser: ``"auto"``, a spaCy pipeline name, a loaded pipeline, or None.
        lexicon: Sum4Simp word-complexity lexicon (else wordfreq-derived).
        cefr_lexicon: WIVICO CEFR levels (else wordfreq Zipf bands).
        sum4simp_filter: an already fitted filter (takes precedence over ``reference``).
        gain_classifier: a trained :class:`~.gain_classifier.GainClassifier`.
    """
    skipped: dict[str, str] = {}
    info: dict[str, Any] = {"language": language}
    flt, flt_attrs = _sum4simp_filters(sum4simp_filter, reference, lexicon, language, skipped, info)
    if not any(p.refs for p in pairs):
        skipped["sari"] = "no pair has reference simplifications ('refs')"

    fz = GainFeaturizer(language, parser=parser, cefr_lexicon=cefr_lexicon)
    skipped.update({f"gain_{k}": v for k, v in fz.skipped.items()})
    info["cefr_levels"] = fz.cefr_source
    gains = fz.matrix([(p.complex, p.simple) for p in pairs]) if pairs else None
    probs = None
    if gain_classifier is not None and pairs:
        probs = gain_classifier.predict_proba([(p.complex, p.simple) for p in pairs])
    else:
        skipped["gain_prob"] = "no trained gain classifier given"
    has_fres = language in FRES_COEFFICIENTS
    if not has_fres:
        skipped["fres"] = f"no FRES coefficients for {language!r}"

    rows: list[dict[str, float]] = []
    for i, p in enumerate(pairs):
        row = _sum4simp_row(p, flt, flt_attrs)
        assert gains is not None
        row.update({f"gain_{n}": float(v) for n, v in zip(fz.feature_names, gains[i])})
        if probs is not None:
            row["gain_prob"] = float(probs[i])
        bleu = sentence_bleu(p.simple, p.complex)
        row["bleu"] = bleu
        if has_fres:
            row.update(_pivot_row(p, language, bleu))
        acc, acc_skipped = access_attributes(p.complex, p.simple, language, fz.nlp if fz.nlp is not None else parser)
        skipped.update(acc_skipped)
        row.update(acc)
        row["levenshtein_ratio"] = levenshtein_ratio(p.complex, p.simple)
        rows.append(row)
    return ScoreReport(rows, skipped, info)


def _sum4simp_filters(
    sum4simp_filter: Sum4SimpFilter | None, reference: Sequence[TextPair] | None, lexicon: dict[str, float] | None,
    language: str, skipped: dict[str, str], info: dict[str, Any],
) -> tuple[Sum4SimpFilter | None, Sum4SimpFilter]:
    """§5.4: the fitted filter (None without a reference corpus) and the one that computes the attributes."""
    flt = sum4simp_filter
    if flt is None and reference:
        flt = Sum4SimpFilter.fit(reference, lexicon=lexicon, language=language)
    if flt is None:
        # Attributes still computable without a reference: len, comp, sari; odds ratios need one.
        from .sum4simp_filter import OddsRatios

        skipped["freq"] = "no reference corpus for the odds ratios"
        skipped["T"] = "no reference corpus for the normal fits"
        return None, Sum4SimpFilter(fits={}, odds=OddsRatios({}, 1.0), lexicon=lexicon, language=language)
    info["sum4simp_fits"] = {k: [v.mu, v.sigma] for k, v in flt.fits.items()}
    return flt, flt


def _sum4simp_row(p: TextPair, flt: Sum4SimpFilter | None, flt_attrs: Sum4SimpFilter) -> dict[str, float]:
    """§5.4 attributes of one pair; t-scores, ``T`` and ``s4s_keep`` only with a fitted filter."""
    row: dict[str, float] = {}
    attrs = flt_attrs.attributes(p.complex, p.simple, p.refs)
    if flt is None:
        attrs.pop("freq", None)
    row.update(attrs)
    if flt is not None:
        sc = flt.scores(attrs)
        row.update(sc)
        row["s4s_keep"] = 1.0 if sc["T"] > flt.threshold else 0.0
    return row


def _pivot_row(p: TextPair, language: str, bleu: float) -> dict[str, float]:
    """§5.6 pivot: FRES of both sides, their gain and ``pivot_keep`` (not identical, BLEU and FRES gain high enough)."""
    fc, fs = fres(p.complex, language), fres(p.simple, language)
    identical = p.complex.strip() == p.simple.strip()
    return {"fres_complex": fc, "fres_simple": fs, "fres_gain": fs - fc,
            "pivot_keep": 1.0 if (not identical and bleu >= H_BLEU and fs - fc >= H_FRES) else 0.0}
