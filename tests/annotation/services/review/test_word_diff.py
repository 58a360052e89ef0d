"""Word differences on the labelling page: server-side, across whole sides, moves are not changes."""
from __future__ import annotations

from annotation.services.review.word_diff import changed_spans


def side(*texts: str, start: int = 0) -> list[dict]:
    return [{"index": start + n, "text": t} for n, t in enumerate(texts)]


def words(sentences: list[dict], spans: list[list[int]]) -> list[str]:
    text = {s["index"]: s["text"] for s in sentences}
    return [text[i][a:b] for i, a, b in spans]


def test_identical_sides_have_no_changes():
    a = side("Bees make honey.")
    assert changed_spans(a, side("bees make Honey.")) == {"deleted": [], "added": []}


def test_changed_words_are_spans_and_adjacent_ones_join():
    a, b = side("The cat sat on the mat."), side("A dog lay on the rug.")
    got = changed_spans(a, b)
    assert words(a, got["deleted"]) == ["The cat sat", "mat"]
    assert words(b, got["added"]) == ["A dog lay", "rug"]


def test_reordered_sentences_of_an_n_m_pair_are_not_marked_changed():
    a = side("Honey bees dance to show flowers.", "They live in large hives.", start=3)
    b = side("Bees live in hives.", "Honey bees dance to show where flowers are.")
    got = changed_spans(a, b)
    assert words(a, got["deleted"]) == ["They", "large"]
    assert words(b, got["added"]) == ["Bees", "where", "are"]


def test_a_single_common_word_elsewhere_is_not_a_move():
    a, b = side("Owls hunt at night in the dark."), side("They sleep by day.", "Owls hunt.")
    got = changed_spans(a, b)
    assert words(a, got["deleted"]) == ["at night in the dark"]
    assert words(b, got["added"]) == ["They sleep by day"]


def test_many_reordered_sentences_are_all_matched():
    animals = ["bees", "owls", "cats", "dogs", "foxes", "moles", "crows", "hares"]
    a = side(*[f"The {x} of the forest sleep at noon." for x in animals])
    b = side(*[f"The {x} of the forest sleep at noon." for x in reversed(animals)])
    assert changed_spans(a, b) == {"deleted": [], "added": []}
