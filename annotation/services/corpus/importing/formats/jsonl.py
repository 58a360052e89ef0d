"""The engine's JSONL contract (SPEC §4): one article pair per line, with optional gold links.

    {"id": "a1", "complex": {"paragraphs": [["S0.", "S1."], ["S2."]]},
                 "simple":  {"text": "T0.\\n\\nT1. T2.", "level": "simple"},
     "gold": [[0, 0], [2, 1]], "gold_labels": ["aligned", "partial"], "identical": [[1, 2]]}

Pre-split ``paragraphs`` are kept exactly as given (never re-split); ``text`` is split with the
project language. ``gold`` links become imported pairs adjudicated with the scheme value that
``gold_labels`` names (aligned / partial / aligned-or-partial); without ``gold_labels`` a link is a
positive of unknown kind (``aligned-or-partial``: Task 1 only), never silently "aligned". What the
links mean (exhaustive, sparse, predictions) is the import's ``gold_meaning`` (``importing``);
``identical`` is validated and otherwise ignored.
The record's ``id`` is the article's title. ``split`` (train / dev / test) becomes the article's split;
``complete`` (true / false), when given, says what this record's gold means whatever the import's
gold meaning (true: the document pair is exhaustively annotated, false: sparse) — what the export's
``articles`` format writes. So does what an imported Wiki-Manual file said of its own rows: each
side's ``sentence_ids`` (``article-level-paragraph-sentence``), ``gleu`` (``"ci,si"`` → the GLEU cell)
and ``row_order``, kept as the ``wiki-manual`` import keeps them. Other keys (``article``, ...) are ignored.

The export's pair-per-line ``jsonl`` format (lines with ``article``, ``complex_ids``, ``simple_ids``)
is read too, an article from its lines (``importing.pair_lines``).

An optional ``pairs`` list carries n:m pairs with any label (what the export's
``articles/<split>.jsonl`` writes, so an export re-imports losslessly)::

    "pairs": [{"complex": [1], "simple": [1, 2], "label": "partial", "provenance": "majority",
               "score": 0.7, "attributes": {"gain_prob": 0.4}, "derived": false}, ...]

Each item becomes one imported pair (origin ``import``) over exactly those sentences, with its
``score`` and its ``attributes`` as the pair's features (plus ``"derived": 1.0`` when ``derived`` is
true). A ``label`` is adjudicated (provenance ``imported``) as the scheme value it names, or, when it
is a class (aligned / partial / not), as the scheme's first value of that class; the original
``provenance`` is kept in the adjudication's note (``source provenance: majority``). Other item keys
(``class``, ``votes``, ...) are ignored. ``pairs`` takes precedence over ``gold``: a gold link inside
some pair's sentences (complex × simple) is not imported again; the other gold links are imported as
before. Pairs of one record may overlap; the same complex and simple sentences listed twice are
one pair (and refused when the two disagree on the label).
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from annotation.label_schemes import UNKNOWN_KIND
from annotation.services.corpus.importing import base
from annotation.services.corpus.importing.base import UNDECIDED, InputFile, ParseContext, ParsedArticle, ParsedPair
from annotation.services.corpus.importing.formats import register
from annotation.services.corpus.importing.pair_lines import PairLines, is_pair_line
from annotation.validation import json_problem

EXTENSIONS = ("jsonl", "ndjson", "json")
SIDES = ("complex", "simple")
GOLD_LABELS = ("aligned", "partial", UNKNOWN_KIND)
CLASSES = ("aligned", "partial", "not")
KEY_MAX = 500  # CandidatePair.complex_key / simple_key
SPLITS = ("train", "dev", "test")  # Split.NAMES


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


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

    def document(self, side: str, value: Any) -> base.ParsedDocument | None:
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
            paragraphs = self.ctx.split(text, self.file, self.line, f"{side}.text")
            if paragraphs is None:  # unsupported language, reported once
                self.ok = False
                return None
            if not paragraphs:
                self.problem(f"{side}.text", "holds no sentences")
                return None
            return base.ParsedDocument(level=str(level), rank=0, paragraphs=paragraphs)
        return self.paragraphs(side, value["paragraphs"], str(level))

    def paragraphs(self, side: str, value: Any, level: str) -> base.ParsedDocument | None:
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
        return base.ParsedDocument(level=level, rank=0, paragraphs=out) if good else None

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
        pairs: list[ParsedPair] = []
        if obj.get("pairs") is not None:
            pairs = self.pairs(obj["pairs"], complex_doc.level, simple_doc.level, nc, ns)
        if not self.ok:
            return None
        # pairs take precedence: a gold link within one of them is not imported a second time
        seen: set[tuple[int, int]] = {(ci, si) for p in pairs for ci in p.complex for si in p.simple}
        for (ci, si), label in zip(gold, labels):
            if (ci, si) in seen:
                continue
            seen.add((ci, si))
            pairs.append(ParsedPair(complex_doc.level, simple_doc.level, (ci,), (si,), self.ctx.gold_values.get(label),
                                    label=label))
        meta = dict(obj["meta"]) if isinstance(obj.get("meta"), dict) else {}
        if not self.source_identity(obj, complex_doc, simple_doc, meta):
            return None
        stated = obj.get("gold") is not None or obj.get("pairs") is not None or obj.get("complete") is not None
        complete = self.complete(obj.get("complete"))
        return ParsedArticle(title=str(rid).strip(), file=self.file, line=self.line, documents=[complex_doc, simple_doc],
                             pairs=pairs, meta=meta, gold_documents=[(complex_doc.level, simple_doc.level)] if stated else [],
                             gold_meaning=None if complete is None else "exhaustive" if complete else "sparse",
                             split=obj.get("split") if obj.get("split") in SPLITS else None)

    def source_identity(self, obj: dict, complex_doc: base.ParsedDocument, simple_doc: base.ParsedDocument,
                        meta: dict) -> bool:
        """What the export's ``articles`` lines carry of an imported file's own rows (``export/identity.py``):
        each side's ``sentence_ids``, the pair's ``gleu`` cells and ``row_order``, kept as the ``wiki-manual``
        import keeps them (so the ``tsv`` export writes the source's rows again); False after a problem."""
        from annotation.services.corpus.importing.formats.wiki_manual import GLEU_KEY, IDS_KEY, ORDER_KEY, SENTENCE_ID

        for side, doc in (("complex", complex_doc), ("simple", simple_doc)):
            ids = obj[side].get("sentence_ids") if isinstance(obj[side], dict) else None
            if ids is None:
                continue
            if not isinstance(ids, list) or len(ids) != doc.sentence_count:
                self.problem(f"{side}.sentence_ids", f"must list one id per sentence ({doc.sentence_count}), got "
                                                     f"{len(ids) if isinstance(ids, list) else _type_name(ids)}")
                return False
            kept = []
            for k, sid in enumerate(ids):
                m = SENTENCE_ID.match(sid) if isinstance(sid, str) else None
                if m is None:
                    self.problem(f"{side}.sentence_ids[{k}]", f"bad sentence id {sid!r}; expected "
                                                              "article-level-paragraph-sentence, e.g. 12-1-0-3")
                    return False
                kept.append([int(m["paragraph"]), int(m["sentence"])])
            doc.meta[IDS_KEY] = kept
        key = f"{complex_doc.level}|{simple_doc.level}"
        gleu = obj.get("gleu")
        if gleu is not None:
            if not isinstance(gleu, dict) or not all(isinstance(v, str) or _is_number(v) for v in gleu.values()):
                self.problem("gleu", "must be an object of \"complex,simple\" sentence indices to GLEU values")
                return False
            meta.setdefault(GLEU_KEY, {})[key] = {k: v if isinstance(v, str) else repr(float(v)) for k, v in gleu.items()}
        order = obj.get("row_order")
        if order is not None:
            if order not in ("simple", "complex") and not (
                    isinstance(order, list) and all(isinstance(c, list) and len(c) == 2 and all(_is_int(x) for x in c)
                                                    for c in order)):
                self.problem("row_order", 'must be "simple", "complex" or a list of [complex, simple] indices')
                return False
            meta.setdefault(ORDER_KEY, {})[key] = order
        return True

    def complete(self, value: Any) -> bool | None:
        """A record's ``complete``: true / false, or None when not given (a problem when not a boolean)."""
        if value is not None and not isinstance(value, bool):
            self.problem("complete", f"must be true or false, got {_type_name(value)}")
            return None
        return value

    def indices(self, field: str, value: Any, side: str, n: int) -> tuple[int, ...] | None:
        """A pair side: a non-empty list of distinct sentence indices of the ``side`` document."""
        if not isinstance(value, list):
            self.problem(field, f"must be a list of {side} sentence indices, got {_type_name(value)}")
            return None
        if not value:
            self.problem(field, f"is empty; a pair needs at least one {side} sentence")
            return None
        out: list[int] = []
        good = True
        for k, i in enumerate(value):
            if not _is_int(i):
                self.problem(f"{field}[{k}]", f"must be an integer sentence index, got {_type_name(i)}")
                good = False
            elif not 0 <= i < n:
                self.problem(f"{field}[{k}]", f"{side} index {i} out of range (the {side} document has {n} sentences)")
                good = False
            elif i in out:
                self.problem(f"{field}[{k}]", f"repeats {side} index {i}")
                good = False
            else:
                out.append(i)
        if not good:
            return None
        out.sort()
        if len(",".join(map(str, out))) > KEY_MAX:
            self.problem(field, f"lists too many sentences ({len(out)}) for one pair")
            return None
        return tuple(out)

    def pair_label(self, field: str, label: Any) -> tuple[str | None, str | None]:
        """``(scheme value to adjudicate with, the label as given)``; a problem if the scheme has no such label."""
        if label is None:
            return None, None
        if not isinstance(label, str) or not label.strip():
            self.problem(field, f"must be a label string (a scheme value or a class), got "
                                f"{_type_name(label) if not isinstance(label, str) else 'an empty string'}")
            return None, None
        values = self.ctx.scheme_values
        if not values:  # a Likert scheme: nothing to store an alignment label as (import_files warns)
            return None, label
        if label in values:
            return label, label
        if label == UNDECIDED:  # a tie the source project had not decided: imported as such, never as a class
            return UNDECIDED, label
        first: dict[str, str] = {}
        for value, klass in values.items():
            first.setdefault(klass, value)
        if label in CLASSES and label in first:
            return first[label], label
        scheme = f" {self.ctx.scheme!r}" if self.ctx.scheme else ""
        classes = [c for c in CLASSES if c in first]
        self.problem(field, f"unknown label {label!r} for the project's label scheme{scheme}; choose one of: "
                            f"{', '.join(v for v in values if v != UNKNOWN_KIND)} (or a class: {', '.join(classes)})")
        return None, None

    def pairs(self, value: Any, complex_level: str, simple_level: str, nc: int, ns: int) -> list[ParsedPair]:
        if not isinstance(value, list):
            self.problem("pairs", f"must be a list of pair objects, got {_type_name(value)}")
            return []
        out: list[ParsedPair] = []
        first: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, str | None]] = {}  # sentence sets → (k, value)
        for k, item in enumerate(value):
            field = f"pairs[{k}]"
            if not isinstance(item, dict):
                self.problem(field, f"must be an object with 'complex', 'simple' and 'label', got {_type_name(item)}")
                continue
            missing = [key for key in SIDES if key not in item]
            for key in missing:
                self.problem(f"{field}.{key}", "is missing")
            if missing:
                continue
            c_ids = self.indices(f"{field}.complex", item["complex"], "complex", nc)
            s_ids = self.indices(f"{field}.simple", item["simple"], "simple", ns)
            gold, label = self.pair_label(f"{field}.label", item.get("label"))
            good = c_ids is not None and s_ids is not None
            provenance = item.get("provenance")
            if provenance is not None and not isinstance(provenance, str):
                self.problem(f"{field}.provenance", f"must be a string, got {_type_name(provenance)}")
                good = False
            score = item.get("score")
            if score is not None and not (_is_number(score) and math.isfinite(score)):
                self.problem(f"{field}.score",
                             f"must be a finite number or null, got {json.dumps(score) if _is_number(score) else _type_name(score)}")
                good = False
            features = self.attributes(f"{field}.attributes", item.get("attributes"))
            if features is None:
                good = False
            derived = item.get("derived")
            if derived is not None and not isinstance(derived, bool):
                self.problem(f"{field}.derived", f"must be true or false, got {_type_name(derived)}")
                good = False
            if not good or not self.ok:
                continue
            key = (c_ids, s_ids)
            if key in first:
                earlier, earlier_gold = first[key]
                if earlier_gold != gold:
                    self.problem(field, f"lists the same complex and simple sentences as pairs[{earlier}] with another "
                                        f"label ({item.get('label')!r}, not {value[earlier].get('label')!r})")
                continue  # the same pair again (e.g. proposed by two runs): one pair
            first[key] = (k, gold)
            if derived:
                features["derived"] = 1.0
            note = f"source provenance: {provenance}" if provenance and gold is not None else ""
            out.append(ParsedPair(complex_level, simple_level, c_ids, s_ids, gold,
                                  score=float(score) if score is not None else None, features=features, note=note,
                                  label=label))
        return out

    def attributes(self, field: str, value: Any) -> dict[str, float] | None:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.problem(field, f"must be an object of numbers, got {_type_name(value)}")
            return None
        good = True
        for name, number in value.items():
            if not (_is_number(number) and math.isfinite(number)):
                shown = json.dumps(number) if _is_number(number) else _type_name(number)
                self.problem(f"{field}.{name}", f"must be a finite number, got {shown}")
                good = False
        return dict(value) if good else None

    def gold_labels(self, obj: dict[str, Any], n_gold: int) -> list[str]:
        labels = obj.get("gold_labels")
        if labels is None:  # true links of unknown kind
            return [UNKNOWN_KIND] * n_gold
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


@register("jsonl", extensions=EXTENSIONS, record_files=True,
          example=(("tiny.jsonl", '{"id": "Tiny", "complex": {"paragraphs": [["A long sentence."]]}, '
                                  '"simple": {"paragraphs": [["A short one."]]}, "gold": [[0, 0]]}\n'),), order=10,
          help="engine JSONL, SPEC §4, optional gold")
def parse(files: list[InputFile], ctx: ParseContext) -> Iterator[ParsedArticle]:
    """One article per valid record, read a line at a time."""
    first_line: dict[str, tuple[str, int]] = {}
    pair_lines = PairLines(ctx)  # the export's pair-per-line format
    for f in files:
        # split on newlines only: JSON strings may hold U+2028 and other characters splitlines() breaks on
        for lineno, raw in ctx.lines(f):
            if not raw.strip():
                continue
            record = _Record(f.name, lineno, ctx)
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                record.problem(None, f"malformed JSON: {exc.msg} (column {exc.colno})")
                continue
            except ValueError as exc:  # an integer of thousands of digits
                record.problem(None, f"malformed JSON: {exc}")
                continue
            if is_pair_line(obj):
                problem = json_problem(obj)
                if problem:
                    record.problem(None, f"unusable JSON value at {problem}")
                    continue
                yield from pair_lines.add(record, obj)
                continue
            if isinstance(obj, dict) and (isinstance(obj.get("id"), str) or _is_int(obj.get("id"))):
                key = str(obj["id"]).strip()
                if key in first_line:
                    where = first_line[key]
                    record.problem("id", f"duplicate id {key!r} (first used at {where[0]}:{where[1]})")
                    continue
                first_line[key] = (f.name, lineno)
            article = record.parse(obj)
            problem = json_problem(obj) if article is not None else None  # what the fields' own checks let by:
            if problem:  # "\u0000" or a lone surrogate in a text, NaN/1e999 or an integer past 64 bits in meta...
                record.problem(None, f"unusable JSON value at {problem}")
            elif article is not None:
                yield article
        yield from pair_lines.flush()
