"""The one text normalisation (``workers.engine.text.normalise``)."""
from __future__ import annotations

import sys
import unicodedata

from workers.engine.text import is_identical, normalise


def by_definition(text: str, *, keep_punctuation: bool = False) -> str:
    """Unicode NFKC, case-folded, every character of a punctuation category (``P*``) a space, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if not keep_punctuation:
        folded = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in folded)
    return " ".join(folded.split())


def test_it_normalises_every_code_point_as_its_definition_says():
    """Issue 37: the ASCII fast path and the table of code points give the definition's answer for every
    character (in runs of 500, so neighbours join and split as they would in a sentence)."""
    text = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    for start in range(0, len(text), 500):
        run = text[start:start + 500]
        assert normalise(run) == by_definition(run), start
        assert normalise(run, keep_punctuation=True) == by_definition(run, keep_punctuation=True), start


def test_it_folds_case_width_ligatures_and_punctuation():
    assert normalise("  The  ﬁrst  CAFÉ, here! ") == "the first café here"
    assert normalise("Straße — İstanbul…") == by_definition("Straße — İstanbul…") == "strasse i̇stanbul"
    assert normalise("Yes.", keep_punctuation=True) != normalise("Yes?", keep_punctuation=True)
    assert is_identical("Owls hunt, at night.", "owls hunt at NIGHT") and not is_identical("Owls hunt.", "Owls sleep.")
