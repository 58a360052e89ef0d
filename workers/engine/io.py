"""Reading and writing the engine's JSONL contract (SPEC §4).

Input: one article pair per line::

    {"id": "a1", "complex": {"paragraphs": [["S0.", "S1."], ["S2."]]},
                 "simple":  {"text": "T0.\\n\\nT1. T2."},
     "gold": [[0, 0]], "identical": [], "gold_labels": ["aligned"]}

``paragraphs`` are used as given (never re-split); ``text`` is split with
:func:`workers.engine.text.split_document`. ``level`` (per document), ``gold``, ``gold_labels``
and ``identical`` are optional; other keys are ignored.

Output: one line per input line, with indices into the flattened sentence lists::

    {"id": "a1", "pairs": [{"complex": [0], "simple": [0], "label": "aligned", "score": 0.93}]}

Every reader raises :class:`~workers.engine.errors.EngineInputError` naming the file, the line
number (1-based) and the field at fault.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from .errors import EngineInputError
from .text import SUPPORTED_LANGUAGES, split_document
from .types import PAIR_LABELS, AlignedPair, Alignment, ArticlePair, Document

__all__ = [
    "parse_pair",
    "read_pairs",
    "iter_pairs",
    "parse_alignment",
    "read_alignments",
    "alignment_to_dict",
    "write_alignments",
]

PathOrFile = str | Path | IO[str]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_text(text: str, field: str, where: dict[str, Any]) -> None:
    """Refuse text no encoder or output file can hold: NUL, or a lone surrogate (JSON can escape one)."""
    if "\x00" in text:
        raise EngineInputError("contains a NUL character", field=field, **where)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise EngineInputError("is not valid Unicode (a lone surrogate)", field=field, **where) from None


def _parse_document(value: Any, field: str, language: str, where: dict[str, Any]) -> Document:
    if not isinstance(value, dict):
        raise EngineInputError(
            f"must be an object with 'paragraphs' or 'text', got {type(value).__name__}",
            field=field, **where,
        )
    has_p, has_t = "paragraphs" in value, "text" in value
    if has_p == has_t:
        raise EngineInputError("give exactly one of 'paragraphs' or 'text'", field=field, **where)
    level = value.get("level")
    if level is not None and not isinstance(level, (str, int)):
        raise EngineInputError("must be a string or an integer", field=f"{field}.level", **where)
    level_s = None if level is None else str(level)
    if has_t:
        text = value["text"]
        if not isinstance(text, str):
            raise EngineInputError("must be a string", field=f"{field}.text", **where)
        _check_text(text, f"{field}.text", where)
        paragraphs = split_document(text, language)
        return Document(tuple(tuple(p) for p in paragraphs if p), level=level_s)
    paras = value["paragraphs"]
    if not isinstance(paras, list):
        raise EngineInputError(
            "must be a list of paragraphs (lists of sentence strings)",
            field=f"{field}.paragraphs", **where,
        )
    out: list[tuple[str, ...]] = []
    for pi, para in enumerate(paras):
        if not isinstance(para, list):
            raise EngineInputError(
                "must be a list of sentence strings", field=f"{field}.paragraphs[{pi}]", **where
            )
        for si, sent in enumerate(para):
            if not isinstance(sent, str):
                raise EngineInputError(
                    f"must be a string, got {type(sent).__name__}",
                    field=f"{field}.paragraphs[{pi}][{si}]", **where,
                )
            _check_text(sent, f"{field}.paragraphs[{pi}][{si}]", where)
        out.append(tuple(para))
    return Document(tuple(out), level=level_s)


def _parse_links(
    value: Any, field: str, n_complex: int, n_simple: int, where: dict[str, Any]
) -> tuple[tuple[int, int], ...]:
    if not isinstance(value, list):
        raise EngineInputError("must be a list of [complex_index, simple_index]", field=field, **where)
    links: list[tuple[int, int]] = []
    for k, item in enumerate(value):
        if not (isinstance(item, list) and len(item) == 2 and all(_is_int(x) for x in item)):
            raise EngineInputError(
                f"must be a pair of integers [complex_index, simple_index], got {item!r}",
                field=f"{field}[{k}]", **where,
            )
        ci, si = item
        if not (0 <= ci < n_complex) or not (0 <= si < n_simple):
            raise EngineInputError(
                f"index out of range: {item!r} (complex has {n_complex} sentences, "
                f"simple has {n_simple})",
                field=f"{field}[{k}]", **where,
            )
        links.append((ci, si))
    return tuple(links)


def _parse_id(rid: Any, where: dict[str, Any]) -> Any:
    if not (isinstance(rid, str) or _is_int(rid)) or rid == "":
        raise EngineInputError("must be a non-empty string", field="id", **where)
    if isinstance(rid, str):
        _check_text(rid, "id", where)
    return rid


def _parse_gold_labels(labels: Any, gold: tuple[tuple[int, int], ...] | None,
                       where: dict[str, Any]) -> tuple[str, ...]:
    if gold is None:
        raise EngineInputError("given without 'gold'", field="gold_labels", **where)
    if not isinstance(labels, list) or len(labels) != len(gold):
        raise EngineInputError(
            f"must be a list with one label per gold link ({len(gold)})",
            field="gold_labels", **where,
        )
    for k, lab in enumerate(labels):
        if lab not in PAIR_LABELS:
            raise EngineInputError(
                f"unknown label {lab!r}; choose one of: {', '.join(PAIR_LABELS)}",
                field=f"gold_labels[{k}]", **where,
            )
    return tuple(labels)


def parse_pair(
    obj: Any, *, language: str = "en", source: str | None = None, line: int | None = None
) -> ArticlePair:
    """Turn one decoded JSON input record into an :class:`ArticlePair`.

    Args:
        obj: the decoded JSON value of one line.
        language: language used to split ``{"text": ...}`` documents.
        source, line: where the record came from, for error messages.

    Raises:
        EngineInputError: with the field at fault.

    Example:
        >>> p = parse_pair({"id": "a", "complex": {"paragraphs": [["A b."]]},
        ...                 "simple": {"text": "It rains. We stay in."}})
        >>> p.simple.sentences
        ('It rains.', 'We stay in.')
    """
    where: dict[str, Any] = {"source": source, "line": line}
    if language not in SUPPORTED_LANGUAGES:
        raise ValueError(
            f"unsupported language {language!r}; choose one of: {', '.join(SUPPORTED_LANGUAGES)}"
        )
    if not isinstance(obj, dict):
        raise EngineInputError(f"a record must be a JSON object, got {type(obj).__name__}", **where)
    for key in ("id", "complex", "simple"):
        if key not in obj:
            raise EngineInputError("is missing", field=key, **where)
    rid = _parse_id(obj["id"], where)
    complex_doc = _parse_document(obj["complex"], "complex", language, where)
    simple_doc = _parse_document(obj["simple"], "simple", language, where)
    if "level" in obj and obj["level"] is not None:
        if not isinstance(obj["level"], (str, int)):
            raise EngineInputError("must be a string or an integer", field="level", **where)
    nc, ns = len(complex_doc), len(simple_doc)
    gold = None
    if obj.get("gold") is not None:
        gold = _parse_links(obj["gold"], "gold", nc, ns, where)
    identical: tuple[tuple[int, int], ...] = ()
    if obj.get("identical") is not None:
        identical = _parse_links(obj["identical"], "identical", nc, ns, where)
    gold_labels = None
    if obj.get("gold_labels") is not None:
        gold_labels = _parse_gold_labels(obj["gold_labels"], gold, where)
    return ArticlePair(
        id=str(rid), complex=complex_doc, simple=simple_doc, gold=gold,
        identical=identical, gold_labels=gold_labels,
    )


def _open_lines(src: PathOrFile) -> tuple[Iterable[str], str, IO[str] | None]:
    if isinstance(src, (str, Path)):
        fh = open(src, encoding="utf-8")
        return fh, str(src), fh
    return src, getattr(src, "name", "<stream>"), None


def _iter_json(src: PathOrFile) -> Iterator[tuple[Any, str, int]]:
    lines, name, owned = _open_lines(src)
    try:
        for lineno, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise EngineInputError(
                    f"invalid JSON: {exc.msg} (column {exc.colno})", source=name, line=lineno
                ) from None
            except ValueError as exc:  # an integer of thousands of digits
                raise EngineInputError(f"invalid JSON: {exc}", source=name, line=lineno) from None
            except RecursionError:
                raise EngineInputError("invalid JSON: nested too deeply", source=name, line=lineno) from None
            yield obj, name, lineno
    except UnicodeDecodeError as exc:
        raise EngineInputError(f"not UTF-8 text: {exc.reason}", source=name) from None
    finally:
        if owned is not None:
            owned.close()


def iter_pairs(
    src: PathOrFile, *, language: str = "en", require_gold: bool = False
) -> Iterator[ArticlePair]:
    """Stream :class:`ArticlePair` records from a JSONL file or open text stream.

    Blank lines are skipped; a repeated ``id`` is an error. With ``require_gold`` every record
    must have a ``gold`` field (training data: exhaustively annotated article pairs).

    Raises:
        EngineInputError: malformed JSON or record (file, line and field in the message).
        FileNotFoundError: ``src`` is a path that does not exist.
    """
    seen: dict[str, int] = {}
    for obj, name, lineno in _iter_json(src):
        pair = parse_pair(obj, language=language, source=name, line=lineno)
        if pair.id in seen:
            raise EngineInputError(
                f"duplicate id {pair.id!r} (first on line {seen[pair.id]})",
                source=name, line=lineno, field="id",
            )
        if require_gold and pair.gold is None:
            raise EngineInputError(
                "is missing: training needs exhaustively annotated article pairs "
                "(every [complex_index, simple_index] link; [] when nothing is aligned)",
                source=name, line=lineno, field="gold",
            )
        seen[pair.id] = lineno
        yield pair


def read_pairs(
    src: PathOrFile, *, language: str = "en", require_gold: bool = False
) -> list[ArticlePair]:
    """Read a whole input JSONL file (see :func:`iter_pairs`).

    Example:
        >>> import io
        >>> f = io.StringIO('{"id": "a", "complex": {"paragraphs": [["X."]]}, '
        ...                 '"simple": {"paragraphs": [["Y."]]}}\\n')
        >>> [p.id for p in read_pairs(f)]
        ['a']
    """
    return list(iter_pairs(src, language=language, require_gold=require_gold))


def alignment_to_dict(alignment: Alignment, *, with_features: bool = True) -> dict[str, Any]:
    """The JSON object of one output line."""
    pairs = []
    for p in alignment.pairs:
        d: dict[str, Any] = {
            "complex": list(p.complex),
            "simple": list(p.simple),
            "label": p.label,
            "score": round(float(p.score), 6),
        }
        if with_features and p.features:
            d["features"] = {k: round(float(v), 6) for k, v in p.features.items()}
        pairs.append(d)
    return {"id": alignment.id, "pairs": pairs}


def write_alignments(
    alignments: Iterable[Alignment], dst: PathOrFile, *, with_features: bool = True
) -> int:
    """Write one JSON line per alignment; returns the number of lines written."""
    own = isinstance(dst, (str, Path))
    fh: IO[str] = open(dst, "w", encoding="utf-8") if own else dst  # type: ignore[assignment]
    n = 0
    try:
        for a in alignments:
            fh.write(json.dumps(alignment_to_dict(a, with_features=with_features),
                                ensure_ascii=False) + "\n")
            n += 1
    finally:
        if own:
            fh.close()
    return n


def parse_alignment(obj: Any, *, source: str | None = None, line: int | None = None) -> Alignment:
    """Turn one decoded output record back into an :class:`Alignment`.

    Raises:
        EngineInputError: with the field at fault.
    """
    where: dict[str, Any] = {"source": source, "line": line}
    if not isinstance(obj, dict):
        raise EngineInputError(f"a record must be a JSON object, got {type(obj).__name__}", **where)
    if "id" not in obj:
        raise EngineInputError("is missing", field="id", **where)
    pairs_raw = obj.get("pairs")
    if not isinstance(pairs_raw, list):
        raise EngineInputError("must be a list", field="pairs", **where)
    pairs: list[AlignedPair] = []
    for k, p in enumerate(pairs_raw):
        f = f"pairs[{k}]"
        if not isinstance(p, dict):
            raise EngineInputError("must be an object", field=f, **where)
        for side in ("complex", "simple"):
            v = p.get(side)
            if not (isinstance(v, list) and v and all(_is_int(x) and x >= 0 for x in v)):
                raise EngineInputError(
                    "must be a non-empty list of sentence indices", field=f"{f}.{side}", **where
                )
        label = p.get("label", "aligned")
        if label not in PAIR_LABELS:
            raise EngineInputError(
                f"unknown label {label!r}; choose one of: {', '.join(PAIR_LABELS)}",
                field=f"{f}.label", **where,
            )
        score = p.get("score", 1.0)
        if not isinstance(score, (int, float)) or isinstance(score, bool) or not math.isfinite(score):
            raise EngineInputError("must be a finite number", field=f"{f}.score", **where)
        feats = p.get("features") or {}
        if not isinstance(feats, dict):
            raise EngineInputError("must be an object", field=f"{f}.features", **where)
        pairs.append(AlignedPair(tuple(p["complex"]), tuple(p["simple"]), label, float(score),
                                 {str(a): b for a, b in feats.items()}))
    return Alignment(id=str(obj["id"]), pairs=pairs)


def read_alignments(src: PathOrFile) -> list[Alignment]:
    """Read an output JSONL file (predictions) back into :class:`Alignment` objects."""
    return [parse_alignment(obj, source=name, line=lineno) for obj, name, lineno in _iter_json(src)]
