"""Word differences between the two sides of a pair, for the labelling page.

Computed with :class:`difflib.SequenceMatcher` (the standard library's well-kept matcher) over the
words of the **whole** side, so a multi-sentence pair is compared as one text. Reordered sentences
of an n:m pair are not marked changed: the simple sentences are first put in the order of the
complex sentences they resemble most; a first pass then finds the longest common runs in order, and
further passes match what is left (a run of two or more words that moved). The payload
is small: per side, ``[sentence index, start, end]`` character spans of changed words (runs of
adjacent changed words in one sentence are one span).

Example:
    >>> changed_spans([{"index": 0, "text": "Bees dance well."}, {"index": 1, "text": "Owls hunt."}],
    ...               [{"index": 0, "text": "Owls hunt."}, {"index": 1, "text": "Bees dance badly."}])
    {'deleted': [[0, 11, 15]], 'added': [[1, 11, 16]]}
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

__all__ = ["changed_spans", "MAX_WORDS"]

WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
MAX_WORDS = 3000
"""Sides longer than this (in words) get no diff: not worth the time in a web request."""
MOVED_PASSES = 25  # passes after the first, while they find moved runs
MIN_MOVED = 2  # words in a moved run (single common words like "the" are not moves)


def _words(sentences: Sequence[dict]) -> list[tuple[int, int, int, str]]:
    return [(s["index"], m.start(), m.end(), m.group().lower()) for s in sentences for m in WORD.finditer(s["text"])]


def _spans(words: list[tuple[int, int, int, str]], matched: set[int]) -> list[list[int]]:
    spans: list[list[int]] = []
    previous = -2
    for n, (index, start, end, _) in enumerate(words):
        if n in matched:
            continue
        if spans and previous == n - 1 and spans[-1][0] == index:
            spans[-1][2] = end
        else:
            spans.append([index, start, end])
        previous = n
    return sorted(spans)


def _in_complex_order(complex_sentences: Sequence[dict], simple_sentences: Sequence[dict]) -> list[dict]:
    """The simple sentences reordered to follow the complex sentence each resembles most (ties and
    splits keep their order), so the in-order first pass is not misled by reordered sentences."""
    if len(complex_sentences) < 2 or len(simple_sentences) < 2 or len(complex_sentences) * len(simple_sentences) > 400:
        return list(simple_sentences)
    complex_words = [[w[3] for w in _words([c])] for c in complex_sentences]
    keyed = []
    for n, sentence in enumerate(simple_sentences):
        words = [w[3] for w in _words([sentence])]
        ratios = [SequenceMatcher(None, c, words, autojunk=False).ratio() for c in complex_words]
        best = max(range(len(ratios)), key=lambda i: (ratios[i], -i))
        keyed.append((best, n, sentence))
    return [sentence for _, _, sentence in sorted(keyed, key=lambda k: (k[0], k[1]))]


def changed_spans(complex_sentences: Sequence[dict], simple_sentences: Sequence[dict]) -> dict[str, list[list[int]]]:
    """Changed-word spans of each side: ``{"deleted": [[index, start, end], ...], "added": [...]}``
    (``deleted`` in the complex sentences, ``added`` in the simple ones; case is ignored)."""
    a = _words(complex_sentences)
    b = _words(_in_complex_order(complex_sentences, simple_sentences))
    if len(a) > MAX_WORDS or len(b) > MAX_WORDS:
        return {"deleted": [], "added": [], "skipped": True}  # type: ignore[dict-item]
    matched_a: set[int] = set()
    matched_b: set[int] = set()
    left_a, left_b = list(range(len(a))), list(range(len(b)))
    for n in range(1 + MOVED_PASSES):
        matcher = SequenceMatcher(None, [a[i][3] for i in left_a], [b[j][3] for j in left_b], autojunk=False)
        blocks = [blk for blk in matcher.get_matching_blocks() if blk.size]
        if n > 0:
            # a moved run must be MIN_MOVED words long; a shorter one counts only between two sentences
            # that a long moved run already links (the rest of a moved sentence, not a stray "the")
            linked = {(a[left_a[blk.a]][0], b[left_b[blk.b]][0]) for blk in blocks if blk.size >= MIN_MOVED}
            blocks = [blk for blk in blocks if blk.size >= MIN_MOVED or (a[left_a[blk.a]][0], b[left_b[blk.b]][0]) in linked]
        found = bool(blocks)
        for block in blocks:
            matched_a.update(left_a[block.a + k] for k in range(block.size))
            matched_b.update(left_b[block.b + k] for k in range(block.size))
        if not found:
            break
        left_a = [i for i in left_a if i not in matched_a]
        left_b = [j for j in left_b if j not in matched_b]
        if not left_a or not left_b:
            break
    return {"deleted": _spans(a, matched_a), "added": _spans(b, matched_b)}
