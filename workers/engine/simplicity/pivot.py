"""The pivot-translation selectors (Lu et al., "An Unsupervised Method for Building Sentence
Simplification Corpora in Multiple Languages", §3 "Selectors"; SPEC §5.6).

A translation corpus gives pairs (source sentence, translation of its bridge-language side). Two
selectors turn it into a simplification corpus:

1. BLEU selector: keep pairs with sentence BLEU ≥ ``h_bleu`` (15), so both sides mean the same
   thing, and drop translations identical to their reference;
2. FRES selector: keep pairs whose FRES difference is ≥ ``h_fres`` (10, "one school grade").

The paper keeps "complex-simple sentence pairs with a higher complexity difference" without
fixing which side is simpler, so by default each kept pair is oriented complex → simple by FRES
(``orient=True``); with ``orient=False`` the translation must be the simpler side.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from .bleu import sentence_bleu
from .readability import fres

__all__ = ["PivotDecision", "pivot_select", "select_pairs"]

H_BLEU = 15.0
H_FRES = 10.0


@dataclass(frozen=True)
class PivotDecision:
    """The selector's verdict on one (source, translation) pair, with its evidence."""

    complex: str
    simple: str
    bleu: float
    fres_complex: float
    fres_simple: float
    fres_gain: float
    swapped: bool
    keep: bool
    reason: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def pivot_select(
    source: str,
    translation: str,
    *,
    language: str = "en",
    h_bleu: float = H_BLEU,
    h_fres: float = H_FRES,
    orient: bool = True,
) -> PivotDecision:
    """Judge one pair. BLEU uses the translation as hypothesis and the source as reference.

    ``reason`` is ``"kept"``, ``"identical"``, ``"low_bleu"`` or ``"low_fres_gain"``.

    Example:
        >>> d = pivot_select("The feline reposed upon the rug.", "The cat lay on the rug.")
        >>> d.keep, d.reason, round(d.fres_gain, 1)
        (True, 'kept', 42.3)
    """
    f_src, f_tr = fres(source, language), fres(translation, language)
    swapped = orient and f_src > f_tr
    complex_, simple = (translation, source) if swapped else (source, translation)
    f_c, f_s = (f_tr, f_src) if swapped else (f_src, f_tr)
    if source.strip() == translation.strip():
        return PivotDecision(complex_, simple, 100.0, f_c, f_s, f_s - f_c, swapped, False, "identical")
    bleu = sentence_bleu(translation, source)
    gain = f_s - f_c
    if bleu < h_bleu:
        reason = "low_bleu"
    elif gain < h_fres:
        reason = "low_fres_gain"
    else:
        reason = "kept"
    return PivotDecision(complex_, simple, bleu, f_c, f_s, gain, swapped, reason == "kept", reason)


def select_pairs(
    pairs: Iterable[tuple[str, str]],
    *,
    language: str = "en",
    h_bleu: float = H_BLEU,
    h_fres: float = H_FRES,
    orient: bool = True,
) -> tuple[list[PivotDecision], dict[str, int]]:
    """Run both selectors over (source, translation) pairs.

    Returns:
        The kept decisions (oriented complex → simple) and counts per ``reason``.
    """
    kept: list[PivotDecision] = []
    counts = {"kept": 0, "identical": 0, "low_bleu": 0, "low_fres_gain": 0}
    for source, translation in pairs:
        d = pivot_select(
            source, translation, language=language, h_bleu=h_bleu, h_fres=h_fres, orient=orient
        )
        counts[d.reason] += 1
        if d.keep:
            kept.append(d)
    return kept, counts
