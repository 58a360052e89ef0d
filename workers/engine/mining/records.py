"""The corpus miner's files: DOCS.jsonl documents in, PAIRS.jsonl mined pairs out (SPEC §4 ``mine``).

Example:
    >>> parse_document({"id": "a", "paragraphs": [["One.", "Two."]]}).sentences
    ('One.', 'Two.')
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..errors import EngineInputError
from ..text import SUPPORTED_LANGUAGES, split_document

__all__ = ["CorpusDocument", "MinedSide", "CorpusPair", "parse_document", "read_documents", "write_pairs"]

PathOrFile = str | Path | IO[str]


# --- input ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CorpusDocument:
    """One document of the corpus: its id and flattened sentences."""

    id: str
    sentences: tuple[str, ...]
    language: str = "en"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_document(obj: Any, *, language: str = "en", source: str | None = None,
                   line: int | None = None) -> CorpusDocument:
    """One DOCS.jsonl record: ``{"id", "text"}`` or ``{"id", "paragraphs"}``, optional ``"language"``.

    Raises:
        EngineInputError: with the file, line and field at fault.

    Example:
        >>> parse_document({"id": 7, "text": "It rains. We stay in."}).sentences
        ('It rains.', 'We stay in.')
    """
    where: dict[str, Any] = {"source": source, "line": line}
    if not isinstance(obj, dict):
        raise EngineInputError(f"a record must be a JSON object, got {type(obj).__name__}", **where)
    if "id" not in obj:
        raise EngineInputError("is missing", field="id", **where)
    rid = obj["id"]
    if not (isinstance(rid, str) or _is_int(rid)) or rid == "":
        raise EngineInputError("must be a non-empty string or an integer", field="id", **where)
    lang = obj.get("language", language)
    if lang not in SUPPORTED_LANGUAGES:
        raise EngineInputError(f"unsupported language {lang!r}; choose one of: {', '.join(SUPPORTED_LANGUAGES)}",
                               field="language", **where)
    has_p, has_t = "paragraphs" in obj, "text" in obj
    if has_p == has_t:
        raise EngineInputError("give exactly one of 'paragraphs' or 'text'", field="text", **where)
    if has_t:
        if not isinstance(obj["text"], str):
            raise EngineInputError("must be a string", field="text", **where)
        sentences = [s for p in split_document(obj["text"], lang) for s in p]
    else:
        paras = obj["paragraphs"]
        if not isinstance(paras, list):
            raise EngineInputError("must be a list of paragraphs (lists of sentence strings)",
                                   field="paragraphs", **where)
        sentences = []
        for pi, para in enumerate(paras):
            if not isinstance(para, list):
                raise EngineInputError("must be a list of sentence strings", field=f"paragraphs[{pi}]", **where)
            for si, sent in enumerate(para):
                if not isinstance(sent, str):
                    raise EngineInputError(f"must be a string, got {type(sent).__name__}",
                                           field=f"paragraphs[{pi}][{si}]", **where)
            sentences += para
    return CorpusDocument(str(rid), tuple(sentences), lang)


def read_documents(src: PathOrFile, *, language: str = "en") -> list[CorpusDocument]:
    """Read DOCS.jsonl (one document per line; blank lines skipped; a repeated id is an error).

    Raises:
        EngineInputError: malformed JSON or record (file, line and field in the message).
        FileNotFoundError: ``src`` is a path that does not exist.
    """
    from ..io import _iter_json

    seen: dict[str, int] = {}
    out = []
    for obj, name, lineno in _iter_json(src):
        doc = parse_document(obj, language=language, source=name, line=lineno)
        if doc.id in seen:
            raise EngineInputError(f"duplicate id {doc.id!r} (first on line {seen[doc.id]})",
                                   source=name, line=lineno, field="id")
        seen[doc.id] = lineno
        out.append(doc)
    return out


# --- output -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class MinedSide:
    """One side of a mined pair: the document's id, the sentence indices, the joined text."""

    document: str
    sentences: tuple[int, ...]
    text: str


@dataclass(frozen=True)
class CorpusPair:
    """A mined paraphrase pair, oriented: ``simple`` has the higher Flesch Reading Ease."""

    id: str
    score: float
    complex: MinedSide
    simple: MinedSide
    features: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self, *, with_features: bool = False) -> dict[str, Any]:
        """The PAIRS.jsonl record (SPEC §4); ``features`` only on request (the job's own file)."""
        out: dict[str, Any] = {
            "id": self.id, "score": round(float(self.score), 6),
            "complex": {"document": self.complex.document, "sentences": list(self.complex.sentences),
                        "text": self.complex.text},
            "simple": {"document": self.simple.document, "sentences": list(self.simple.sentences),
                       "text": self.simple.text},
        }
        if with_features:
            out["features"] = {k: round(float(v), 6) for k, v in self.features.items()}
        return out

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> CorpusPair:
        def side(d: Mapping[str, Any]) -> MinedSide:
            return MinedSide(str(d["document"]), tuple(int(i) for i in d["sentences"]), str(d["text"]))

        return cls(str(obj["id"]), float(obj["score"]), side(obj["complex"]), side(obj["simple"]),
                   dict(obj.get("features") or {}))


def write_pairs(pairs: Iterable[CorpusPair], dst: PathOrFile) -> int:
    """Write PAIRS.jsonl (the contract's keys only); returns the number of lines."""
    own = isinstance(dst, (str, Path))
    fh: IO[str] = open(dst, "w", encoding="utf-8") if own else dst  # type: ignore[assignment]
    n = 0
    try:
        for p in pairs:
            fh.write(json.dumps(p.to_dict(), ensure_ascii=False) + "\n")
            n += 1
    finally:
        if own:
            fh.close()
    return n
