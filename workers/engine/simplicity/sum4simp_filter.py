"""Sum4Simp's simplicity filter (Lu et al. 2023, "Exploiting Summarization Data to Help Text
Simplification", §3.2–3.3, App. A; SPEC §5.4).

Four attributes φ describe how much a (source → target) pair simplifies:

* ``len``  — length ratio: words(target) / the **average length of the source sentences** in words.
  §3.2 compares "the length of the target sentence" with "the average length of the source
  sentences" (Algorithm 1 stitches up to L_max source sentences into one source), and §3.3 / §5 call
  φ "the ratio of sentence length" (simplified length divided by original length). So a target of
  10 words aligned to two stitched 10-word sentences has len = 1.0, not 0.5: stitching does not
  make a pair look compressed. Give the source as its list of sentences; a string is one sentence.
  Lower = simpler.
* ``comp`` — mean word complexity of the target minus that of the source. With a lexicon (TSV
  ``word<TAB>score``, e.g. Maddela & Xu 2018, 1–6) words missing from it are ignored; without one
  the complexity is derived from ``wordfreq``: ``8 − Zipf(w)`` (rare words are complex). Lower = simpler.
* ``freq`` — mean word odds ratio of the target minus that of the source, Eq. 1:
  r(w) = (w_i / w_j) / (n_i / n_j) with i = the complex side and j = the simple side of a
  reference simplification corpus (add-one smoothed), so words typical of complex text have
  r > 1. Lower = simpler.
* ``sari`` — SARI (EASSE, :mod:`.sari`) of target against the pair's reference simplifications,
  source as original. Higher = simpler.

Each φ becomes t ∈ [0, 1] through a normal fit N(μ, σ) on a reference corpus: Eq. 3 for
len/comp/freq (t = 1 if φ ≤ μ else 2·(0.5 − ∫_μ^φ f) = erfc(z/√2)), Eq. 4 for sari (mirror image).
T = Σ α_i t_i (Eq. 6, α_i = 0.25) and a pair is kept when T > T_s.

Scale of T_s: with α_i = 0.25, T ∈ [0, 1], yet App. A explores T_s ∈ [3.5, 3.8], which only fits
the unweighted sum Σ t_i ∈ [0, 4]. We keep the paper's α and read its T_s on that sum, so the
default T_s = 3.5 × 0.25 = 0.875; a T_s above Σ α_i is rejected with that explanation.

When an attribute cannot be computed (no refs for SARI), T is the weighted sum over the available
attributes rescaled to the full weight (Σ α over all / Σ α over available), so one T_s serves both.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .pairs import TextPair
from .sari import sentence_sari
from .words import words, zipf

__all__ = [
    "ATTRIBUTES",
    "NormalFit",
    "OddsRatios",
    "Sum4SimpFilter",
    "load_lexicon",
    "normal_score",
]

ATTRIBUTES: tuple[str, ...] = ("len", "comp", "freq", "sari")
HIGHER_IS_SIMPLER = frozenset({"sari"})
DEFAULT_ALPHA = 0.25
DEFAULT_THRESHOLD = 3.5 * DEFAULT_ALPHA


@dataclass(frozen=True)
class NormalFit:
    """μ and σ of one attribute over the reference corpus."""

    mu: float
    sigma: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> NormalFit:
        vals = [v for v in values if v is not None and math.isfinite(v)]
        if not vals:
            raise ValueError("cannot fit a normal distribution on no values")
        mu = sum(vals) / len(vals)
        var = sum((v - mu) ** 2 for v in vals) / len(vals)
        return cls(mu, math.sqrt(var), len(vals))


def normal_score(phi: float, fit: NormalFit, higher_is_simpler: bool = False) -> float:
    """Eq. 3 (lower φ is simpler) or Eq. 4 (higher φ is simpler) of Sum4Simp.

    Example:
        >>> normal_score(0.5, NormalFit(0.8, 0.1, 10))
        1.0
        >>> round(normal_score(0.8 + 0.1 * 1.96, NormalFit(0.8, 0.1, 10)), 3)
        0.05
    """
    good_side = phi >= fit.mu if higher_is_simpler else phi <= fit.mu
    if good_side:
        return 1.0
    if fit.sigma <= 0:
        return 0.0
    z = abs(phi - fit.mu) / fit.sigma
    # 2·(0.5 − ∫ between μ and φ of the normal density) = 2·P(Z > z) = erfc(z/√2)
    return math.erfc(z / math.sqrt(2.0))


def load_lexicon(path: str | Path) -> dict[str, float]:
    """Read a ``word<TAB>score`` word-complexity lexicon (Maddela & Xu 2018 format).

    Raises:
        ValueError: a line does not have a numeric second column (line number given).
    """
    lex: dict[str, float] = {}
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):
            parts = line.rstrip("\n").split("\t")
            if not line.strip():
                continue
            try:
                lex[parts[0].strip().lower()] = float(parts[1])
            except (IndexError, ValueError) as exc:
                raise ValueError(f"{path}:{i}: expected 'word<TAB>number'") from exc
    return lex


@dataclass
class OddsRatios:
    """Per-word odds ratios of Eq. 1 between a complex corpus (i) and a simple corpus (j)."""

    ratios: dict[str, float]
    default: float

    @classmethod
    def from_corpora(cls, complex_texts: Iterable[str], simple_texts: Iterable[str]) -> OddsRatios:
        ci: Counter[str] = Counter()
        cj: Counter[str] = Counter()
        for t in complex_texts:
            ci.update(words(t))
        for t in simple_texts:
            cj.update(words(t))
        n_i, n_j = sum(ci.values()), sum(cj.values())
        vocab = set(ci) | set(cj)
        size = len(vocab)
        # add-one smoothing on both counts and sizes so unseen words stay finite
        scale = (n_j + size) / (n_i + size) if n_i + size > 0 else 1.0
        ratios = {w: (ci[w] + 1) / (cj[w] + 1) * scale for w in vocab}
        return cls(ratios, default=scale)

    def mean(self, text: str) -> float:
        ws = words(text)
        if not ws:
            return self.default
        return sum(self.ratios.get(w, self.default) for w in ws) / len(ws)


@dataclass
class Sum4SimpFilter:
    """Fitted Sum4Simp filter: normal fits, odds ratios and (optionally) a lexicon.

    Example:
        >>> ref = [TextPair("The committee ratified the comprehensive legislation.", "They passed the law."),
        ...        TextPair("Precipitation was exceptionally abundant.", "It rained a lot."),
        ...        TextPair("He subsequently relocated to the metropolis.", "Then he moved to the city.")]
        >>> flt = Sum4SimpFilter.fit(ref)
        >>> sorted(flt.fits)
        ['comp', 'freq', 'len']
    """

    fits: dict[str, NormalFit]
    odds: OddsRatios
    lexicon: dict[str, float] | None = None
    language: str = "en"
    alphas: dict[str, float] = field(default_factory=lambda: dict.fromkeys(ATTRIBUTES, DEFAULT_ALPHA))
    threshold: float = DEFAULT_THRESHOLD

    def __post_init__(self) -> None:
        unknown = set(self.alphas) - set(ATTRIBUTES)
        if unknown:
            raise ValueError(f"unknown attributes {sorted(unknown)}; valid: {', '.join(ATTRIBUTES)}")
        total = sum(self.alphas.values())
        if self.threshold > total:
            raise ValueError(
                f"T_s={self.threshold} exceeds Σα={total}, so no pair could pass; the paper's "
                f"T_s 3.5–3.8 is on the unweighted sum, i.e. {3.5 * DEFAULT_ALPHA}–{3.8 * DEFAULT_ALPHA} with α=0.25"
            )

    # --- attributes -------------------------------------------------------------------------
    def word_complexity(self, text: str) -> float | None:
        """Mean word complexity of ``text`` (None when no word is scorable)."""
        ws = words(text)
        if self.lexicon is not None:
            scores = [self.lexicon[w] for w in ws if w in self.lexicon]
        else:
            scores = [8.0 - zipf(w, self.language) for w in ws]
        return sum(scores) / len(scores) if scores else None

    def attributes(self, source: str | Sequence[str], target: str, refs: Sequence[str] = ()) -> dict[str, float]:
        """The four φ of §3.2 for one pair (``sari`` only when refs are given).

        ``source`` is the list of (stitched) source sentences, or one sentence as a string; ``len``
        divides by their average length, the other attributes read them joined.

        Example:
            >>> flt = Sum4SimpFilter(fits={}, odds=OddsRatios({}, 1.0))
            >>> flt.attributes(["One two three four.", "Five six seven eight."], "One five six.")["len"]
            0.75
        """
        sentences = [source] if isinstance(source, str) else list(source)
        lengths = [len(words(s)) for s in sentences]
        source = " ".join(sentences)
        out: dict[str, float] = {}
        average = sum(lengths) / len(lengths) if lengths else 0.0
        if average > 0:
            out["len"] = len(words(target)) / average
        c_src, c_tgt = self.word_complexity(source), self.word_complexity(target)
        if c_src is not None and c_tgt is not None:
            out["comp"] = c_tgt - c_src
        out["freq"] = self.odds.mean(target) - self.odds.mean(source)
        if refs:
            out["sari"] = sentence_sari(source, target, list(refs))["sari"]
        return out

    # --- scores -----------------------------------------------------------------------------
    def scores(self, attrs: Mapping[str, float]) -> dict[str, float]:
        """t per attribute (``t_len`` …) and the total ``T`` (rescaled over available attributes)."""
        out: dict[str, float] = {}
        used = 0.0
        total = 0.0
        for name in ATTRIBUTES:
            if name in attrs and name in self.fits and self.alphas.get(name, 0.0) > 0:
                t = normal_score(attrs[name], self.fits[name], name in HIGHER_IS_SIMPLER)
                out[f"t_{name}"] = t
                total += self.alphas[name] * t
                used += self.alphas[name]
        full = sum(self.alphas.values())
        out["T"] = total * full / used if used > 0 else 0.0
        return out

    def score_pair(self, source: str | Sequence[str], target: str, refs: Sequence[str] = ()) -> dict[str, float]:
        """Attributes, t-scores, T and ``keep`` (1.0/0.0) of one pair (``source``: see :meth:`attributes`)."""
        attrs = self.attributes(source, target, refs)
        sc = self.scores(attrs)
        return {**attrs, **sc, "keep": 1.0 if sc["T"] > self.threshold else 0.0}

    def keep(self, source: str | Sequence[str], target: str, refs: Sequence[str] = ()) -> bool:
        return self.score_pair(source, target, refs)["keep"] == 1.0

    # --- fitting and persistence -------------------------------------------------------------
    @classmethod
    def fit(
        cls,
        reference: Sequence[TextPair],
        *,
        lexicon: Mapping[str, float] | None = None,
        language: str = "en",
        odds_corpus: tuple[Sequence[str], Sequence[str]] | None = None,
        alphas: Mapping[str, float] | None = None,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> Sum4SimpFilter:
        """Fit μ, σ of every attribute on a reference simplification corpus (e.g. WikiLarge train).

        Args:
            reference: complex → simple pairs; ``refs`` on them enable the SARI attribute.
            lexicon: word-complexity lexicon; None = derive complexity from wordfreq.
            language: language of the texts (for wordfreq).
            odds_corpus: (complex texts, simple texts) for Eq. 1; default = the reference pairs' sides.
            alphas: weight per attribute (default 0.25 each).
            threshold: T_s on the weighted scale (see module docstring).

        Raises:
            ValueError: empty reference corpus.
        """
        if not reference:
            raise ValueError("the reference corpus is empty")
        if odds_corpus is None:
            odds_corpus = ([p.complex for p in reference], [p.simple for p in reference])
        odds = OddsRatios.from_corpora(*odds_corpus)
        flt = cls(
            fits={}, odds=odds, lexicon=dict(lexicon) if lexicon is not None else None,
            language=language,
            alphas=dict(alphas) if alphas is not None else dict.fromkeys(ATTRIBUTES, DEFAULT_ALPHA),
            threshold=threshold,
        )
        values: dict[str, list[float]] = {a: [] for a in ATTRIBUTES}
        for p in reference:
            for name, v in flt.attributes(p.complex, p.simple, p.refs).items():
                values[name].append(v)
        flt.fits = {name: NormalFit.of(v) for name, v in values.items() if v}
        return flt

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": "sum4simp_filter",
            "version": 1,
            "language": self.language,
            "alphas": self.alphas,
            "threshold": self.threshold,
            "fits": {k: asdict(v) for k, v in self.fits.items()},
            "odds": {"default": self.odds.default, "ratios": self.odds.ratios},
            "lexicon": self.lexicon,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> Sum4SimpFilter:
        if d.get("kind") != "sum4simp_filter":
            raise ValueError("not a Sum4Simp filter file (missing kind='sum4simp_filter')")
        odds = d["odds"]
        assert isinstance(odds, dict)
        fits = d["fits"]
        assert isinstance(fits, dict)
        return cls(
            fits={k: NormalFit(**v) for k, v in fits.items()},
            odds=OddsRatios(dict(odds["ratios"]), float(odds["default"])),
            lexicon=d.get("lexicon"),  # type: ignore[arg-type]
            language=str(d.get("language", "en")),
            alphas=dict(d["alphas"]),  # type: ignore[call-overload]
            threshold=float(d["threshold"]),  # type: ignore[arg-type]
        )

    def save(self, path: str | Path) -> None:
        """Write the fit as JSON (μ, σ, odds ratios, lexicon, α, T_s)."""
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Sum4SimpFilter:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
