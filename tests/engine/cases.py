"""Hand-made article pairs with known alignments, shared by the engine tests.

Texts are original. Each case lists its gold links ``(complex_index, simple_index)``.
"""
from __future__ import annotations

import random

from workers.engine.types import ArticlePair, Document


def doc(*paragraphs: list[str]) -> Document:
    return Document(paragraphs=tuple(tuple(p) for p in paragraphs))


def pair(pid: str, complex_doc: Document, simple_doc: Document,
         gold: list[tuple[int, int]]) -> ArticlePair:
    return ArticlePair(pid, complex_doc, simple_doc, gold=tuple(gold))


COMPLEX_STORY = [
    "The municipal council of Harbourville approved an ambitious plan to renovate the crumbling lighthouse on Tuesday evening.",
    "Engineers estimate that the restoration will cost roughly four million dollars and last two years.",
    "Local fishermen, who have relied on the beacon for generations, welcomed the decision enthusiastically.",
    "Critics argued that the money should instead be spent on repairing the flooded coastal road.",
    "The mayor promised that a separate fund for the road would be created next spring.",
    "Tourism officials expect the renovated lighthouse to attract thousands of additional visitors every summer.",
]


def split_case() -> ArticlePair:
    """Complex 0 is split into simple 0 and 1; the others are 1:1."""
    simple = [
        "The Harbourville council approved a plan to fix the old lighthouse.",
        "The council voted on the lighthouse plan on Tuesday evening.",
        "Engineers think the repairs will cost about four million dollars and take two years.",
        "Fishermen have used the lighthouse for generations and they were happy about the decision.",
        "Some critics said the money should fix the flooded coastal road instead.",
        "The mayor said a fund for the road would be created next spring.",
        "Tourism officials think the lighthouse will bring thousands more visitors every summer.",
    ]
    gold = [(0, 0), (0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6)]
    return pair("split", doc(COMPLEX_STORY[:3], COMPLEX_STORY[3:]), doc(simple[:4], simple[4:]), gold)


def merge_case() -> ArticlePair:
    """Complex 3 and 4 are fused into simple 3."""
    simple = [
        "The Harbourville council approved a plan to renovate the crumbling lighthouse.",
        "The restoration will cost about four million dollars and last two years.",
        "Local fishermen welcomed the decision.",
        "Critics wanted the money spent on repairing the flooded coastal road, so the mayor promised a separate road fund next spring.",
        "Officials expect the lighthouse to attract thousands of additional visitors every summer.",
    ]
    gold = [(0, 0), (1, 1), (2, 2), (3, 3), (4, 3), (5, 4)]
    return pair("merge", doc(COMPLEX_STORY), doc(simple), gold)


def deletion_case() -> ArticlePair:
    """Complex 1, 3 and 4 are deleted."""
    simple = [
        "Harbourville's council approved a plan to renovate the crumbling lighthouse.",
        "Local fishermen, who have relied on the beacon for generations, welcomed the decision.",
        "Tourism officials expect the lighthouse to attract thousands of extra visitors every summer.",
    ]
    gold = [(0, 0), (2, 1), (5, 2)]
    return pair("deletion", doc(COMPLEX_STORY), doc(simple), gold)


def reorder_case() -> ArticlePair:
    """The simple version tells the story in a different order."""
    simple = [
        "Tourism officials expect the renovated lighthouse to bring thousands of additional visitors every summer.",
        "The Harbourville council approved a plan to renovate the crumbling lighthouse on Tuesday.",
        "Critics argued the money should be spent on repairing the flooded coastal road.",
        "Engineers estimate the restoration will cost four million dollars and last two years.",
    ]
    gold = [(5, 0), (0, 1), (3, 2), (1, 3)]
    return pair("reorder", doc(COMPLEX_STORY), doc(simple), gold)


def empty_cases() -> list[ArticlePair]:
    return [
        pair("empty-both", doc(), doc(), []),
        pair("empty-simple", doc(COMPLEX_STORY[:2]), doc(), []),
        pair("empty-complex", doc(), doc(["A lighthouse will be repaired."]), []),
    ]


def one_sentence_case() -> ArticlePair:
    return pair(
        "one",
        doc([COMPLEX_STORY[0]]),
        doc(["The council approved a plan to renovate the crumbling lighthouse."]),
        [(0, 0)],
    )


_WORDS = ("amber basil cedar delta ember fjord garnet harbor indigo juniper kelp lagoon meadow "
          "nectar opal pebble quartz raven saffron tundra umber violet willow yarrow zephyr "
          "anchor bramble canyon dune estuary falcon glacier heron island jasper knoll lantern "
          "maple nimbus orchard prairie quill ridge sparrow thistle upland valley walnut").split()


def long_case(n: int = 500, seed: int = 0) -> ArticlePair:
    """An ``n``-sentence article and a simplification that keeps every other sentence in order
    (lightly reworded), with a few sentences split in two."""
    rng = random.Random(seed)
    complex_sents = []
    for i in range(n):
        words = rng.sample(_WORDS, 6)
        complex_sents.append(f"Report {i} describes the {words[0]} {words[1]} near the "
                             f"{words[2]} {words[3]} beside the {words[4]} {words[5]} river.")
    simple_sents: list[str] = []
    gold: list[tuple[int, int]] = []
    for i in range(0, n, 2):
        w = complex_sents[i].split()
        if i % 10 == 0:
            simple_sents.append(f"Report {i} describes the {w[4]} {w[5]} {w[8]}.")
            gold.append((i, len(simple_sents) - 1))
            simple_sents.append(f"It is beside the {w[11]} {w[12]} river near {w[8]} {w[9]}.")
            gold.append((i, len(simple_sents) - 1))
        else:
            simple_sents.append(f"Report {i} tells about the {w[4]} {w[5]} near {w[8]} {w[9]}.")
            gold.append((i, len(simple_sents) - 1))
    return pair(f"long{n}", doc(complex_sents), doc(simple_sents), gold)


def structured_cases() -> list[ArticlePair]:
    return [split_case(), merge_case(), deletion_case(), reorder_case()]
