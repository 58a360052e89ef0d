"""The four ACCESS control attributes as MUSS uses them (Martin et al. 2022, §3.2; Martin et al.
2020; SPEC §5.7), all as simple / complex ratios:

* ``char_ratio`` — character length ratio (<NumChars>);
* ``lev_sim`` — *replace-only* Levenshtein similarity (<LevSim>, MUSS's variant; see :mod:`.edits`);
* ``word_rank_ratio`` — lexical complexity ratio (<WordFreq>): per text, the 75th percentile of
  log(1 + frequency rank) over its non-stop words known to the vocabulary (ACCESS's definition;
  ranks from ``wordfreq`` instead of ACCESS's fastText vocabulary); a text with no known word gets
  log(1 + vocabulary size);
* ``dep_depth_ratio`` — ratio of maximum dependency-tree depths (<DepTreeDepth>); only with a
  dependency parser, otherwise left out and reported.

A zero denominator gives 1.0 when both sides are 0, else the numerator (no infinities).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .edits import replace_only_levenshtein_similarity
from .parsing import load_parser
from .syntax import max_depth
from .words import content_words, word_rank

__all__ = ["ACCESS_ATTRIBUTES", "access_attributes", "lexical_complexity"]

ACCESS_ATTRIBUTES: tuple[str, ...] = ("char_ratio", "lev_sim", "word_rank_ratio", "dep_depth_ratio")
VOCABULARY = 100_000


def _ratio(num: float, den: float) -> float:
    if den == 0:
        return 1.0 if num == 0 else float(num)
    return num / den


def lexical_complexity(text: str, language: str = "en") -> float:
    """ACCESS lexical complexity: 75th percentile of log(1 + rank) of the known non-stop words."""
    ranks = [r for r in (word_rank(w, language, VOCABULARY) for w in content_words(text, language)) if r]
    if not ranks:
        return math.log(1 + VOCABULARY)
    return float(np.quantile([math.log(1 + r) for r in ranks], 0.75))


def access_attributes(
    complex_text: str, simple_text: str, language: str = "en", parser: Any = "auto"
) -> tuple[dict[str, float], dict[str, str]]:
    """ACCESS attributes of one pair and the attributes skipped (with the reason).

    ``parser`` is ``"auto"`` (the language's spaCy pipeline if installed), a name, a loaded
    pipeline or None.

    Example:
        >>> attrs, skipped = access_attributes("The cat sat on the mat.", "A cat sat.", parser=None)
        >>> round(attrs["char_ratio"], 3), "dep_depth_ratio" in skipped
        (0.435, True)
    """
    attrs = {
        "char_ratio": _ratio(len(simple_text), len(complex_text)),
        "lev_sim": replace_only_levenshtein_similarity(complex_text, simple_text),
        "word_rank_ratio": _ratio(lexical_complexity(simple_text, language), lexical_complexity(complex_text, language)),
    }
    skipped: dict[str, str] = {}
    if parser is None:
        nlp, why = None, "no parser requested"
    elif isinstance(parser, str):
        nlp, why = load_parser(language, None if parser == "auto" else parser)
    else:
        nlp, why = parser, "given"
    if nlp is not None and "parser" in getattr(nlp, "pipe_names", []):
        attrs["dep_depth_ratio"] = _ratio(max_depth(nlp(simple_text)), max_depth(nlp(complex_text)))
    else:
        skipped["dep_depth_ratio"] = f"no dependency parser ({why})"
    return attrs, skipped
