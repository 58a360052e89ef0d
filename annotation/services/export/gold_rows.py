"""The gold read without side effects: the rows of a ``jsonl`` gold export, per split, streamed as they are
read, with no ``Export`` record, nothing written to disk and (unless ``lock``) no split assigned or locked.

An export is a product (a zip with a manifest, listed among the project's exports, its articles' splits
locked so a paper's test set cannot move); reading the gold into a notebook is not. ``gold_rows`` reads the
same records as the ``jsonl`` format (``export.source.PairSource`` over the one gold reading,
``review/gold_reading.py``; the same filters), a chunk of articles at a time, so memory stays flat at any size.
Articles without a split are read in the split the project's policy would give them (``splits.plan``),
without storing it. ``lock=True`` does what an export for a paper does: assigns the missing splits and
locks the splits of every article in the chosen splits, before the first row.

Example:
    >>> rows = gold_rows(project, {"splits": ["test"]})  # doctest: +SKIP
    >>> next(rows)["label"]  # doctest: +SKIP
    'aligned'
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from annotation.models import Article, Project
from annotation.services.export import splits
from annotation.services.export.completeness import complete_documents, pair_fields
from annotation.services.export.filters import FilterChain
from annotation.services.export.formats.base import pair_dict
from annotation.services.export.options import ExportError, ExportOptions
from annotation.services.export.source import LEFT_OUT, PairSource

#: Export options that mean nothing for rows read in place (what is written, and the lock: an argument here).
NOT_READING = ("kind", "formats", "lock")


def parse_options(text: str | None) -> dict[str, Any]:
    """The export options a query string carries as JSON (``?options={...}``); not an object raises
    :class:`~annotation.services.export.options.ExportError`."""
    if not text:
        return {}
    try:
        raw = json.loads(text)
    except ValueError:
        raise ExportError("options must be a JSON object") from None
    if not isinstance(raw, dict):
        raise ExportError("options must be a JSON object")
    return raw


def gold_options(raw: dict[str, Any] | None) -> ExportOptions:
    """The export options of a gold reading (``kind`` gold, the ``jsonl`` records); an unknown key or a bad
    value raises :class:`~annotation.services.export.options.ExportError` as an export's would."""
    raw = {k: v for k, v in (raw or {}).items() if k not in NOT_READING}
    return ExportOptions.parse({**raw, "kind": "gold", "formats": ["jsonl"], "lock": False})


def gold_rows(project: Project, options: ExportOptions, *, lock: bool = False, user=None,
              visible=None) -> Iterator[dict[str, Any]]:
    """Each gold pair of ``project`` in ``options.splits`` as the ``jsonl`` export's record (``split`` in it),
    article by article; see the module for what ``lock`` changes (checked before the generator starts)."""
    policy = splits.validate_policy(options.split_policy) if options.split_policy else splits.project_policy(project)
    if lock:
        splits.assign(project, policy, user=user)
        splits.lock(Article.objects.filter(project=project, split__name__in=options.splits).values_list("id", flat=True))
        planned: dict[int, str] = {}
    else:
        planned = splits.plan(project, policy)
    source = PairSource(project, options, planned=planned)
    chain = FilterChain(project, options, visible=visible)
    return _rows(source, chain, complete_documents(project, options))


def _rows(source: PairSource, chain: FilterChain, complete: set[tuple[int, int]]) -> Iterator[dict[str, Any]]:
    for batch in source.batches():
        for r in batch.records:
            if r.provenance != LEFT_OUT and chain.reason(r) is None:
                yield {**pair_dict(r), **pair_fields(batch, r, complete)}
