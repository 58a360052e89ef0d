"""WIVICO step-2 *gain* features (Ormaechea & Tsourakis 2023, §3.3, Table 5; SPEC §5.5).

A gain is target minus source (polarity kept: 8 words → 6 words gives −2). Features:

* structural: ``sl`` (characters), ``nw`` (words), ``wer`` (word error rate of the target against
  the source), ``bleu`` (sentence BLEU, target as hypothesis, source as reference);
* lexical: ``nne`` (named entities; needs a spaCy pipeline with NER), ``cefr`` (Σ over non-stop
  words of f(level) with f(x) = 0.1·1.5^x, levels A1..C2 = 1..6);
* syntactic (needs a dependency parser): ``mdt``, ``idt``, ``dlt``, ``idt_dlt``, ``le``, ``nnd``
  (see :mod:`.syntax`).

CEFR levels come from a ``word<TAB>level`` lexicon (FLELex-like; levels ``A1``..``C2`` or 1..6)
when given. Otherwise — no CEFR list ships with any PyPI package we can use — levels are derived
from ``wordfreq`` Zipf bands, a frequency proxy for CEFR: Zipf ≥ 6 → A1, ≥ 5.5 → A2, ≥ 5 → B1,
≥ 4.5 → B2, ≥ 4 → C1, else C2.

Features that need a missing model are left out and listed in :attr:`GainFeaturizer.skipped`
with the reason.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .bleu import sentence_bleu
from .edits import word_error_rate
from .parsing import load_parser
from .syntax import syntactic_features
from .words import content_words, words, zipf

__all__ = [
    "CEFR_LEVELS",
    "GainFeaturizer",
    "cefr_weight",
    "load_cefr_lexicon",
    "zipf_cefr_level",
]

CEFR_LEVELS: tuple[str, ...] = ("A1", "A2", "B1", "B2", "C1", "C2")
STRUCTURAL = ("sl", "nw", "wer", "bleu")
SYNTACTIC = ("mdt", "idt", "dlt", "idt_dlt", "le", "nnd")
_ZIPF_BANDS = (6.0, 5.5, 5.0, 4.5, 4.0)


def cefr_weight(level: int) -> float:
    """WIVICO Figure 4: f(x) = 0.1 · 1.5^x (x = 1 for A1 … 6 for C2)."""
    return 0.1 * 1.5**level


def zipf_cefr_level(word: str, language: str = "en") -> int:
    """CEFR-like level 1..6 of ``word`` from its wordfreq Zipf band (frequent = easy)."""
    z = zipf(word, language)
    for level, bound in enumerate(_ZIPF_BANDS, start=1):
        if z >= bound:
            return level
    return 6


def load_cefr_lexicon(path: str | Path) -> dict[str, int]:
    """Read ``word<TAB>level`` (A1..C2 or 1..6) into ``{word: 1..6}``.

    Raises:
        ValueError: unknown level (valid ones listed) with the line number.
    """
    lex: dict[str, int] = {}
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            level = parts[1].strip().upper() if len(parts) > 1 else ""
            if level in CEFR_LEVELS:
                lex[parts[0].strip().lower()] = CEFR_LEVELS.index(level) + 1
            elif level.isdigit() and 1 <= int(level) <= 6:
                lex[parts[0].strip().lower()] = int(level)
            else:
                raise ValueError(f"{path}:{i}: level must be one of {', '.join(CEFR_LEVELS)} or 1..6")
    return lex


class GainFeaturizer:
    """Computes gain feature vectors; which features exist depends on the models available.

    Args:
        language: ISO 639-1 code (wordfreq, stop words, default spaCy pipeline).
        parser: ``"auto"`` (the language's default spaCy pipeline if installed), a pipeline name,
            a loaded pipeline, or None (no syntactic/NER features).
        cefr_lexicon: ``{word: level 1..6}``; None = Zipf bands.

    Example:
        >>> fz = GainFeaturizer("en", parser=None)
        >>> f = fz.features("The committee ratified the legislation.", "They passed the law.")
        >>> f["nw"], f["sl"] < 0
        (-1.0, True)
    """

    def __init__(
        self, language: str = "en", parser: Any = "auto", cefr_lexicon: Mapping[str, int] | None = None
    ) -> None:
        self.language = language
        self.cefr_lexicon = dict(cefr_lexicon) if cefr_lexicon is not None else None
        self.skipped: dict[str, str] = {}
        if parser is None:
            self.nlp, why = None, "no parser requested"
        elif isinstance(parser, str):
            self.nlp, why = load_parser(language, None if parser == "auto" else parser)
        else:
            self.nlp, why = parser, "given"
        self.parser_info = why
        names = list(STRUCTURAL)
        if self.nlp is not None and "ner" in getattr(self.nlp, "pipe_names", []):
            names.append("nne")
        else:
            self.skipped["nne"] = f"no named-entity recogniser ({why})"
        names.append("cefr")
        if self.cefr_lexicon is None:
            self.cefr_source = "wordfreq Zipf bands (no CEFR lexicon given)"
        else:
            self.cefr_source = "lexicon"
        if self.nlp is not None and "parser" in getattr(self.nlp, "pipe_names", []):
            names += list(SYNTACTIC)
        else:
            for n in SYNTACTIC:
                self.skipped[n] = f"no dependency parser ({why})"
        self.feature_names: tuple[str, ...] = tuple(names)

    def cefr_score(self, text: str) -> float:
        """Σ over non-stop words of f(level(word))."""
        total = 0.0
        for w in content_words(text, self.language):
            if self.cefr_lexicon is not None:
                level = self.cefr_lexicon.get(w)
                if level is None:
                    continue
            else:
                level = zipf_cefr_level(w, self.language)
            total += cefr_weight(level)
        return total

    def _side(self, text: str, doc: Any) -> dict[str, float]:
        out = {"sl": float(len(text)), "nw": float(len(words(text))), "cefr": self.cefr_score(text)}
        if doc is not None:
            if "nne" in self.feature_names:
                out["nne"] = float(len(doc.ents))
            if "mdt" in self.feature_names:
                out.update(syntactic_features(doc))
        return out

    def features(self, source: str, target: str, docs: tuple[Any, Any] | None = None) -> dict[str, float]:
        """Gain features of one pair (source → target)."""
        if docs is None and self.nlp is not None:
            docs = (self.nlp(source), self.nlp(target))
        d_src, d_tgt = docs if docs is not None else (None, None)
        a, b = self._side(source, d_src), self._side(target, d_tgt)
        out = {k: b[k] - a[k] for k in a}
        out["wer"] = word_error_rate(source, target)
        out["bleu"] = sentence_bleu(target, source)
        return {k: out[k] for k in self.feature_names}

    def matrix(self, pairs: Sequence[tuple[str, str]], batch_size: int = 256) -> np.ndarray:
        """``[len(pairs), len(feature_names)]`` float64; the parser runs batched (``nlp.pipe``)."""
        if self.nlp is not None:
            texts = [t for p in pairs for t in p]
            docs = list(self.nlp.pipe(texts, batch_size=batch_size))
            rows = [self.features(s, t, (docs[2 * i], docs[2 * i + 1])) for i, (s, t) in enumerate(pairs)]
        else:
            rows = [self.features(s, t) for s, t in pairs]
        return np.array([[r[n] for n in self.feature_names] for r in rows], dtype=np.float64).reshape(
            len(pairs), len(self.feature_names)
        )
