"""The four label schemes built into every installation (SPEC §6).

``counts_as`` maps each value onto the CRF paper's three classes so that agreement, evaluation and
training work the same whichever scheme a project labels with.
"""
from __future__ import annotations

BUILTIN_SCHEMES: list[dict[str, object]] = [
    {
        "slug": "aligned-partial-not",
        "name": "aligned / partial / not-aligned (neural CRF paper)",
        "kind": "categorical",
        "values": [
            {"value": "aligned", "name": "Aligned", "key": "1", "counts_as": "aligned"},
            {"value": "partial", "name": "Partially aligned", "key": "2", "counts_as": "partial"},
            {"value": "not-aligned", "name": "Not aligned", "key": "3", "counts_as": "not"},
        ],
    },
    {
        "slug": "sum4simp-quality",
        "name": "Good / Good partial / Partial / Bad (Sum4Simp)",
        "kind": "categorical",
        "values": [
            {"value": "good", "name": "Good", "key": "1", "counts_as": "aligned"},
            {"value": "good-partial", "name": "Good partial", "key": "2", "counts_as": "partial"},
            {"value": "partial", "name": "Partial", "key": "3", "counts_as": "partial"},
            {"value": "bad", "name": "Bad", "key": "4", "counts_as": "not"},
        ],
    },
    {
        "slug": "wivico-validity",
        "name": "valid / partially valid / non-valid (WIVICO)",
        "kind": "categorical",
        "values": [
            {"value": "valid", "name": "Valid", "key": "1", "counts_as": "aligned"},
            {"value": "partially-valid", "name": "Partially valid", "key": "2", "counts_as": "partial"},
            {"value": "non-valid", "name": "Non-valid", "key": "3", "counts_as": "not"},
        ],
    },
    {
        "slug": "likert-human-eval",
        "name": "Likert 1–5: simplicity, adequacy, fluency",
        "kind": "likert",
        "values": [{"value": str(i), "name": str(i), "key": str(i)} for i in range(1, 6)],
        "dimensions": ["simplicity", "adequacy", "fluency"],
    },
]

DEFAULT_SCHEME = "aligned-partial-not"
