"""The Hugging Face layouts of the field, read by the ``hf`` import (issue 28 §4).

* **ClassLabel columns** — a label column whose feature is a ``ClassLabel`` (the Arrow schema's
  ``huggingface`` metadata, else the ``dataset_info.json`` beside the file) is read through the
  feature's names: ``wiki_auto`` manual's ``alignment_label`` 2 is ``partialAligned``; -1 (no label)
  is no label.
* **Pair rows with sentence ids** (``wiki_auto`` ``manual``: ``normal_sentence_id`` /
  ``simple_sentence_id`` beside ``normal_sentence`` / ``simple_sentence``; a newsela-auto-style set
  with ``complex_id`` / ``simple_id``): read as the ``wiki-manual`` TSV's rows
  (:class:`~annotation.services.corpus.importing.formats.wiki_manual.Reader`): an id
  ``articleIndex-level-paragraphIndex-sentIndex`` (``0_66252-1-0-3``) puts its sentence in article
  ``0_66252``, document ``1``, paragraph 0; each distinct sentence is one sentence; a document pair
  listed m × n is exhaustive gold; ``gleu_score`` is kept; the split from the file's path.
* **Article rows** (``wiki_auto`` ``auto``: ``normal`` / ``simple`` structs holding the article's
  ``<side>_article_content`` with ``<side>_sentence_id`` and ``<side>_sentence`` lists, and
  ``sentence_alignment``; alignapp's ``hf/articles``, the same with ``complex`` and a label per
  alignment): one document pair per row, whole documents, paragraphs from each id's last two numbers
  (``normal-41918715-3-1``: paragraph 3), each alignment one pair (a side may list several ids: an
  n:m pair) with its ``label`` (default ``aligned``), read as an ``articles`` record
  (:class:`~annotation.services.corpus.importing.formats.jsonl._Record`). Consecutive rows of one
  ``article`` make one article.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from annotation.services.corpus.importing.base import InputFile, ParseContext, ParsedArticle, split_from_name

GLEU_COLUMNS = ("gleu_score", "gleu")
TRUTH = {"1": "aligned", "0": "notAligned", "true": "aligned", "false": "notAligned"}
PARAGRAPH_ID = re.compile(r"-(\d+)-(\d+)$")
Rows = Callable[[InputFile], Iterator[dict]]


def class_names(schema: Any, info: dict | None) -> dict[str, list[str]]:
    """Column → the names of its ``ClassLabel`` feature (``datasets``' metadata in the Arrow/parquet
    schema, else ``info``: the ``dataset_info.json`` beside the file)."""
    features: dict = {}
    raw = (getattr(schema, "metadata", None) or {}).get(b"huggingface")
    if raw:
        try:
            features = (json.loads(raw).get("info") or {}).get("features") or {}
        except (ValueError, AttributeError):
            features = {}
    if not features and isinstance(info, dict):
        features = info.get("features") or {}
    out: dict[str, list[str]] = {}
    for column, feature in (features.items() if isinstance(features, dict) else ()):
        if isinstance(feature, dict) and feature.get("_type") == "ClassLabel":
            names = feature.get("names")
            if isinstance(names, dict):
                names = [names[k] for k in sorted(names, key=lambda k: int(k))]
            if isinstance(names, list):
                out[column] = [str(n) for n in names]
    return out


def decode(value: Any, names: list[str] | None) -> tuple[Any, str | None]:
    """A label cell read through its ClassLabel ``names``: ``(value, problem)``; -1 is no label."""
    if names and isinstance(value, int) and not isinstance(value, bool):
        if value == -1:
            return None, None
        if not 0 <= value < len(names):
            return None, f"label {value} is outside the ClassLabel's names ({', '.join(names)})"
        return names[value], None
    return value, None


def split_of(name: str, ctx: ParseContext | None = None) -> str | None:
    """The split a dataset file's path names (``train/data-….arrow``, ``data/validation-….parquet``,
    the hub converter's ``manual/dev/0000.parquet`` and ``…-dev.parquet``), as ``datasets`` reads it;
    a name of two splits is refused (``ctx``'s problems)."""
    return split_from_name(name, ctx.problems if ctx is not None else None)


def id_columns(texts: tuple[str, str], names: list[str]) -> tuple[str, str] | None:
    """The sentence-id columns beside two text columns (``normal_sentence`` → ``normal_sentence_id``,
    ``complex`` → ``complex_id`` / ``complex_sentence_id``), when both are there."""
    found = []
    for text in texts:
        base = text.removesuffix("_sentence")
        found.append(next((c for c in (f"{text}_id", f"{base}_sentence_id", f"{base}_id") if c in names), None))
    return (found[0], found[1]) if all(found) else None


def number_text(value: Any, float32: bool = False) -> str:
    """The shortest decimal that reads back to a stored number: a float32 cell's own (``0.2``, never
    ``0.20000000298023224``, what the float32 becomes as a Python float), else Python's ``repr``."""
    if isinstance(value, float) and float32:
        import numpy as np

        return repr(float(str(np.float32(value)))) if np.isfinite(value) else str(value)
    return repr(value) if isinstance(value, float) else str(value)


def float32_columns(schema: Any) -> set[str]:
    """The columns of an Arrow schema stored as float32."""
    import pyarrow as pa

    return {f.name for f in (schema or ()) if f.type == pa.float32()}


def id_pair_articles(files: list[InputFile], ctx: ParseContext, rows: Rows, texts: tuple[str, str],
                     label: str | None, ids: tuple[str, str], names_of: Callable[[InputFile], dict],
                     schema_of: Callable[[InputFile], Any] | None = None) -> Iterator[ParsedArticle]:
    """Articles of pair rows with sentence ids, read as Wiki-Manual rows (documents from the ids); a GLEU
    cell is kept as the shortest decimal that reads back to the stored value (``number_text``)."""
    from annotation.services.corpus.importing.formats import wiki_manual

    reader = wiki_manual.Reader(ctx)
    fields = (label or "label", ids[1], ids[0], texts[1], texts[0])
    for f in files:
        names = names_of(f).get(label or "")
        split = split_of(f.name, ctx)
        narrow = float32_columns(schema_of(f)) if schema_of else set()
        for n, row in enumerate(rows(f), start=1):
            text = _label_text(row.get(label) if label else "aligned", names, ctx, f.name, n, fields[0])
            column = next((c for c in GLEU_COLUMNS if row.get(c) is not None), None)
            gleu = None if column is None else number_text(row[column], column in narrow)
            if text is not None:
                cells = [text, *(str(row.get(c) or "").strip() for c in fields[1:])]
                reader.add(f.name, n, cells, gleu, split, fields)
            if ctx.problems.full or reader.over:
                return
    yield from wiki_manual.articles(reader, ctx)


def _label_text(value: Any, names: list[str] | None, ctx: ParseContext, file: str, line: int, field: str) -> str | None:
    value, problem = decode(value, names)
    if problem is None and (value is None or str(value).strip() == ""):
        problem = "no label (a row with sentence ids needs one: aligned, partialAligned, notAligned)"
    if problem:
        ctx.problems.add(file, problem, line=line, field=field)
        return None
    text = "aligned" if value is True else "notAligned" if value is False else str(value).strip()
    return TRUTH.get(text.casefold(), text)


def article_prefix(names: list[str]) -> str | None:
    """The complex side's column of an article-row dataset (``normal``: wiki_auto ``auto``;
    ``complex``: alignapp's ``hf/articles``), None for other layouts."""
    if "sentence_alignment" not in names or "simple" not in names:
        return None
    return next((p for p in ("normal", "complex") if p in names), None)


class ArticleRows:
    """Article rows into articles: each row read as an ``articles`` record, consecutive rows of one
    ``article`` merged (one article in memory at a time)."""

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self.parts: list[tuple[ParsedArticle, bool | None]] = []

    def add(self, file: str, line: int, row: dict, prefix: str) -> Iterator[ParsedArticle]:
        """One row of ``file``; yields the article that the rows before it ended."""
        from annotation.services.corpus.importing.formats.jsonl import _Record

        record = _Record(file, line, self.ctx)
        obj = self._record(record, row, prefix, split_of(file))
        article = record.parse(obj) if obj is not None and record.ok else None
        if article is None:
            return
        if self.parts and self.parts[0][0].title != article.title:
            yield from self.flush()
        self.parts.append((article, obj.get("complete")))

    def _record(self, record, row: dict, prefix: str, split: str | None) -> dict | None:
        """The ``articles`` record of a row; None after reporting each cell of the wrong type (a struct that
        is a text, a list of numbers where texts belong...) at ``file:row: column``."""
        docs, index = {}, {}
        for side, key in (("complex", prefix), ("simple", "simple")):
            value = _struct(record, key, row.get(key))
            content = _struct(record, f"{key}.{key}_article_content", (value or {}).get(f"{key}_article_content"))
            if value is None or content is None:
                return None
            field = f"{key}.{key}_article_content"
            ids = _texts(record, f"{field}.{key}_sentence_id", content.get(f"{key}_sentence_id"))
            texts = _texts(record, f"{field}.{key}_sentence", content.get(f"{key}_sentence"))
            level = value.get(f"{key}_level")
            if level is not None and not isinstance(level, (str, int)) or isinstance(level, bool):
                record.problem(f"{key}.{key}_level", f"must be a level name, got {_type(level)}")
                return None
            if ids is None or texts is None:
                return None
            paragraphs = _paragraphs(record, field, ids, texts)
            if paragraphs is None:
                return None
            docs[side] = {"level": str(level if level not in (None, "") else key), "paragraphs": paragraphs}
            index[side] = {sid: k for k, sid in enumerate(ids)}
        alignment = _struct(record, "sentence_alignment", row.get("sentence_alignment"))
        pairs = _alignments(record, alignment, prefix, index) if alignment is not None else None
        if pairs is None:
            return None
        side = row.get(prefix) or {}
        title = row.get("article") or side.get(f"{prefix}_article_title") or row.get("example_id")
        if title is not None and (not isinstance(title, (str, int)) or isinstance(title, bool)):
            record.problem("article", f"must be a text (the article's title), got {_type(title)}")
            return None
        complete = row.get("complete")
        row_split = row.get("split")
        if row_split is not None and not isinstance(row_split, str):
            record.problem("split", f"must be train, dev or test, got {_type(row_split)}")
            return None
        for side in ("complex", "simple"):  # alignapp's hf/articles: the imported source's own ids, GLEU, order
            if row.get(f"{side}_source_ids") is not None:
                docs[side]["sentence_ids"] = row[f"{side}_source_ids"]
        extra = {}
        gleu = row.get("gleu")
        if isinstance(gleu, dict):
            extra["gleu"] = {f"{c},{s}": v for c, s, v in zip(gleu.get("complex") or [], gleu.get("simple") or [],
                                                             gleu.get("value") or [])}
        if isinstance(row.get("row_order"), str):
            try:
                extra["row_order"] = json.loads(row["row_order"])
            except ValueError:
                record.problem("row_order", 'must be JSON: "simple", "complex" or a list of [complex, simple] indices')
                return None
        return {"id": str(title or "").strip(), **docs, "pairs": pairs, "split": row_split or split,
                **({"complete": complete} if complete is not None else {}), **extra}

    def flush(self) -> Iterator[ParsedArticle]:
        """The article collected so far (none when its rows had problems)."""
        parts, self.parts = self.parts, []
        if not parts or self.ctx.problems:
            return
        merged = _merge(parts, self.ctx)
        if merged is not None:
            yield merged


def _type(value: Any) -> str:
    """A cell's wrong value as a refusal names it: its kind, never its text."""
    return {dict: "a struct", list: "a list", str: "a text", bool: "a boolean", type(None): "null"}.get(
        type(value), type(value).__name__)


def _struct(record, field: str, value: Any) -> dict | None:
    """A struct cell (null: an empty one); None after reporting another kind of value."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        record.problem(field, f"must be a struct, got {_type(value)}")
        return None
    return value


def _texts(record, field: str, value: Any) -> list[str] | None:
    """A list of texts (null: empty); None after reporting another kind of value or a non-text item."""
    if value is None:
        return []
    if not isinstance(value, list):
        record.problem(field, f"must be a list of texts, got {_type(value)}")
        return None
    bad = next((k for k, item in enumerate(value) if not isinstance(item, str)), None)
    if bad is not None:
        record.problem(f"{field}[{bad}]", f"must be a text, got {_type(value[bad])}")
        return None
    return value


def _paragraphs(record, field: str, ids: list, texts: list) -> list[list[str]] | None:
    """A document's sentences grouped by the paragraph each id names (its last two numbers)."""
    if len(ids) != len(texts) or not texts:
        record.problem(field, f"needs one id per sentence and at least one sentence ({len(ids)} ids, {len(texts)} sentences)")
        return None
    paragraphs: list[list[str]] = []
    last = None
    for k, (sid, text) in enumerate(zip(ids, texts)):
        m = PARAGRAPH_ID.search(str(sid))
        if not m:
            record.problem(f"{field}[{k}]", f"bad sentence id {sid!r}; expected one ending in -paragraph-sentence, "
                                            "e.g. normal-41918715-3-1")
            return None
        if m[1] != last:
            paragraphs.append([])
            last = m[1]
        paragraphs[-1].append(str(text or ""))
    return paragraphs


def _alignments(record, alignment: dict, prefix: str, index: dict[str, dict]) -> list[dict] | None:
    """The ``articles`` record's ``pairs`` of a row's ``sentence_alignment`` (ids → sentence indices)."""
    sides = []
    for key in (f"{prefix}_sentence_id", "simple_sentence_id"):
        ids = alignment.get(key)
        if ids is not None and not isinstance(ids, list):
            record.problem(f"sentence_alignment.{key}", f"must be a list (an id or a list of ids per alignment), "
                                                        f"got {_type(ids)}")
            return None
        sides.append(ids or [])
    if len(sides[0]) != len(sides[1]):
        record.problem("sentence_alignment", f"lists {len(sides[0])} {prefix} sides and {len(sides[1])} simple sides; "
                                             "each alignment needs both")
        return None
    extra = {}
    for key in ("label", "provenance", "score", "attributes", "derived"):
        values = alignment.get(key)
        if values is not None and not isinstance(values, list):
            record.problem(f"sentence_alignment.{key}", f"must be a list (one value per alignment), got {_type(values)}")
            return None
        extra[key] = values or []
    pairs = []
    for k, (c_ids, s_ids) in enumerate(zip(*sides)):
        item: dict = {key: values[k] for key, values in extra.items() if k < len(values) and values[k] is not None}
        item.setdefault("label", "aligned")
        if isinstance(item.get("attributes"), str):
            try:
                item["attributes"] = json.loads(item["attributes"])
            except ValueError:
                record.problem(f"sentence_alignment[{k}].attributes", "must be a JSON object of numbers")
                return None
        for side, ids in (("complex", c_ids), ("simple", s_ids)):
            ids = [ids] if isinstance(ids, str) else ids if isinstance(ids, list) else None
            if ids is None or not all(isinstance(i, str) for i in ids):
                record.problem(f"sentence_alignment[{k}]", f"the {side} side must be a sentence id or a list of ids")
                return None
            unknown = [i for i in ids if i not in index[side]]
            if unknown:
                record.problem(f"sentence_alignment[{k}]", f"sentence id {unknown[0]!r} is not in the {side} article")
                return None
            item[side] = [index[side][i] for i in ids]
        pairs.append(item)
    return pairs


def _merge(parts: list[tuple[ParsedArticle, bool | None]], ctx: ParseContext) -> ParsedArticle | None:
    """One article of several rows (document pairs) sharing a title."""
    from annotation.services.corpus.importing.formats.wiki_manual import rank_levels

    first = parts[0][0]
    if len(parts) == 1:
        return first
    documents, rows = {}, {}
    for article, _ in parts:
        levels = (article.documents[0].level, article.documents[1].level)
        if levels in rows:
            ctx.problems.add(article.file, f"article {article.title!r}: the document pair {levels[0]!r} → "
                                           f"{levels[1]!r} is listed again (first at {rows[levels]}); an article's "
                                           "document pair is one row", line=article.line, field="article")
            return None
        rows[levels] = f"{article.file}:{article.line}"
        for doc in article.documents:
            known = documents.setdefault(doc.level, doc)
            if known.paragraphs != doc.paragraphs:
                ctx.problems.add(article.file, f"article {article.title!r}: document {doc.level!r} differs from an "
                                               "earlier row's", line=article.line, field="article")
                return None
    edges = [(a.documents[0].level, a.documents[1].level) for a, _ in parts]
    ranks = rank_levels(list(documents), edges) or {lv: k for k, lv in enumerate(sorted(documents))}
    complete = [levels for levels, (_, flag) in zip(edges, parts) if flag]
    stated = any(flag is not None for _, flag in parts)
    meta: dict = {}
    for article, _ in parts:  # per document pair keys ("<complex>|<simple>" → GLEU cells, row order): merged
        for key, value in article.meta.items():
            if isinstance(value, dict) and isinstance(meta.get(key), dict):
                meta[key] = {**meta[key], **value}
            else:
                meta.setdefault(key, value)
    return replace(first, meta=meta,
                   documents=[replace(documents[lv], rank=ranks[lv]) for lv in sorted(documents, key=ranks.get)],
                   pairs=[p for a, _ in parts for p in a.pairs], gold_documents=complete or edges,
                   gold_meaning=("exhaustive" if complete else "sparse") if stated else None)
