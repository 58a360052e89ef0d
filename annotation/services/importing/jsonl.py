"""The engine's JSONL contract (SPEC §4): one article pair per line, with optional gold links.

    {"id": "a1", "complex": {"paragraphs": [["S0.", "S1."], ["S2."]]},
                 "simple":  {"text": "T0.\\n\\nT1. T2.", "level": "simple"},
     "gold": [[0, 0], [2, 1]], "gold_labels": ["aligned", "partial"], "identical": [[1, 2]]}

Pre-split ``paragraphs`` are kept exactly as given (never re-split); ``text`` is split with the
project language. ``gold`` links become imported pairs adjudicated with the scheme's "aligned"
value (or the value that ``gold_labels`` names); ``identical`` is validated and otherwise ignored.
"""
from __future__ import annotations

import json
from typing import Any

from .base import ParseContext, ParsedArticle, ParsedDocument, ParsedPair, TextFile
from .validation import lines_of

EXTENSIONS = ("jsonl", "ndjson", "json")
SIDES = ("complex", "simple")
GOLD_LABELS = ("aligned", "partial")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _type_name(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(value), type(value).__name__)


class _Record:
    """Validates one decoded line, reporting every problem it can find."""

    def __init__(self, file: str, line: int, ctx: ParseContext) -> None:
        self.file, self.line, self.ctx = file, line, ctx
        self.ok = True

    def problem(self, field: str | None, message: str) -> None:
        self.ok = False
        self.ctx.problems.add(self.file, message, line=self.line, field=field)

    def document(self, side: str, value: Any) -> ParsedDocument | None:
        if not isinstance(value, dict):
            self.problem(side, f"must be an object with 'paragraphs' or 'text', got {_type_name(value)}")
            return None
        level = value.get("level", side)
        if not (isinstance(level, str) or _is_int(level)) or str(level).strip() == "":
            self.problem(f"{side}.level", f"must be a non-empty string or an integer, got {_type_name(level)}")
            level = side
        elif len(str(level)) > 50:
            self.problem(f"{side}.level", "must be at most 50 characters")
        has_p, has_t = "paragraphs" in value, "text" in value
        if has_p == has_t:
            self.problem(side, "give exactly one of 'paragraphs' (pre-split sentences) or 'text'")
            return None
        if has_t:
            text = value["text"]
            if not isinstance(text, str):
                self.problem(f"{side}.text", f"must be a string, got {_type_name(text)}")
                return None
            if not text.strip():
                self.problem(f"{side}.text", "is empty")
                return None
            paragraphs = self.ctx.split(text)
            if paragraphs is None:  # unsupported language, reported once
                self.ok = False
                return None
            if not paragraphs:
                self.problem(f"{side}.text", "holds no sentences")
                return None
            return ParsedDocument(level=str(level), rank=0, paragraphs=paragraphs)
        return self.paragraphs(side, value["paragraphs"], str(level))

    def paragraphs(self, side: str, value: Any, level: str) -> ParsedDocument | None:
        field = f"{side}.paragraphs"
        if not isinstance(value, list):
            self.problem(field, f"must be a list of paragraphs (lists of sentence strings), got {_type_name(value)}")
            return None
        if not value:
            self.problem(field, "is empty; a document needs at least one sentence")
            return None
        out: list[list[str]] = []
        good = True
        for pi, para in enumerate(value):
            if not isinstance(para, list):
                self.problem(f"{field}[{pi}]", f"must be a list of sentence strings, got {_type_name(para)}")
                good = False
                continue
            if not para:
                self.problem(f"{field}[{pi}]", "is an empty paragraph; a paragraph needs at least one sentence")
                good = False
                continue
            for si, sentence in enumerate(para):
                if not isinstance(sentence, str):
                    self.problem(f"{field}[{pi}][{si}]", f"sentence must be a string, got {_type_name(sentence)}")
                    good = False
                elif not sentence.strip():
                    self.problem(f"{field}[{pi}][{si}]", "sentence is an empty string")
                    good = False
            out.append(list(para))
        return ParsedDocument(level=level, rank=0, paragraphs=out) if good else None

    def links(self, field: str, value: Any, n_complex: int, n_simple: int) -> list[tuple[int, int]] | None:
        if not isinstance(value, list):
            self.problem(field, f"must be a list of [complex_index, simple_index], got {_type_name(value)}")
            return None
        links: list[tuple[int, int]] = []
        for k, item in enumerate(value):
            if not (isinstance(item, list) and len(item) == 2 and all(_is_int(x) for x in item)):
                self.problem(f"{field}[{k}]", f"must be a pair of integers [complex_index, simple_index], got {json.dumps(item)}")
                continue
            ci, si = item
            if not 0 <= ci < n_complex:
                self.problem(f"{field}[{k}]", f"complex index {ci} out of range (the complex document has {n_complex} sentences)")
            elif not 0 <= si < n_simple:
                self.problem(f"{field}[{k}]", f"simple index {si} out of range (the simple document has {n_simple} sentences)")
            else:
                links.append((ci, si))
        return links

    def parse(self, obj: Any) -> ParsedArticle | None:
        if not isinstance(obj, dict):
            self.problem(None, f"a record must be a JSON object, got {_type_name(obj)}")
            return None
        for key in ("id", *SIDES):
            if key not in obj:
                self.problem(key, "is missing")
        if not self.ok:
            return None
        rid = obj["id"]
        if not (isinstance(rid, str) or _is_int(rid)) or str(rid).strip() == "":
            self.problem("id", f"must be a non-empty string, got {_type_name(rid) if not isinstance(rid, str) else 'an empty string'}")
        elif len(str(rid)) > 500:
            self.problem("id", "must be at most 500 characters (it becomes the article title)")
        docs = {side: self.document(side, obj[side]) for side in SIDES}
        complex_doc, simple_doc = docs["complex"], docs["simple"]
        if complex_doc is None or simple_doc is None:
            return None
        simple_doc.rank = 1
        if complex_doc.level == simple_doc.level:
            self.problem("simple.level", f"must differ from the complex level ({complex_doc.level!r})")
        nc, ns = complex_doc.sentence_count, simple_doc.sentence_count
        gold: list[tuple[int, int]] = []
        if obj.get("gold") is not None:
            gold = self.links("gold", obj["gold"], nc, ns) or []
        if obj.get("identical") is not None:
            self.links("identical", obj["identical"], nc, ns)
        labels = self.gold_labels(obj, len(gold))
        if not self.ok:
            return None
        pairs: list[ParsedPair] = []
        seen: set[tuple[int, int]] = set()
        for (ci, si), label in zip(gold, labels):
            if (ci, si) in seen:
                continue
            seen.add((ci, si))
            pairs.append(ParsedPair(complex_doc.level, simple_doc.level, (ci,), (si,), self.ctx.gold_values.get(label)))
        meta = obj["meta"] if isinstance(obj.get("meta"), dict) else {}
        return ParsedArticle(title=str(rid).strip(), file=self.file, line=self.line, documents=[complex_doc, simple_doc], pairs=pairs, meta=meta)

    def gold_labels(self, obj: dict[str, Any], n_gold: int) -> list[str]:
        labels = obj.get("gold_labels")
        if labels is None:
            return ["aligned"] * n_gold
        if obj.get("gold") is None:
            self.problem("gold_labels", "given without 'gold'")
            return []
        gold = obj["gold"]
        if not isinstance(labels, list) or not isinstance(gold, list) or len(labels) != len(gold):
            self.problem("gold_labels", "must be a list with one label per gold link")
            return []
        for k, label in enumerate(labels):
            if label not in GOLD_LABELS:
                self.problem(f"gold_labels[{k}]", f"unknown label {label!r}; choose one of: {', '.join(GOLD_LABELS)}")
        return list(labels)


def parse(files: list[TextFile], ctx: ParseContext) -> list[ParsedArticle]:
    articles: list[ParsedArticle] = []
    first_line: dict[str, tuple[str, int]] = {}
    for f in files:
        # split on newlines only: JSON strings may hold U+2028 and other characters splitlines() breaks on
        for lineno, raw in enumerate(lines_of(f.text), start=1):
            if not raw.strip():
                continue
            record = _Record(f.name, lineno, ctx)
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                record.problem(None, f"malformed JSON: {exc.msg} (column {exc.colno})")
                continue
            if isinstance(obj, dict) and (isinstance(obj.get("id"), str) or _is_int(obj.get("id"))):
                key = str(obj["id"]).strip()
                if key in first_line:
                    where = first_line[key]
                    record.problem("id", f"duplicate id {key!r} (first used at {where[0]}:{where[1]})")
                    continue
                first_line[key] = (f.name, lineno)
            article = record.parse(obj)
            if article is not None:
                articles.append(article)
    return articles
