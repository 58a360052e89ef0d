"""The format-independent shape of a parsed import, and the context the format parsers share.

Parsers are generators: they read their files through the context (:meth:`ParseContext.lines`
streams a file line by line, :meth:`ParseContext.text` reads one file whole — a file is at most
``MAX_UPLOAD_BYTES``) and yield one :class:`ParsedArticle` at a time, so an import's memory is
bounded by its largest article, not by its size.
"""
from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from annotation.services.corpus.importing.limits import Limits, over
from annotation.services.corpus.importing.problems import Problems
from workers.engine import SUPPORTED_LANGUAGES, split_document

BOM = b"\xef\xbb\xbf"
SPLIT_KEYWORDS = {"train": "train", "training": "train", "validation": "dev", "valid": "dev", "dev": "dev",
                  "val": "dev", "test": "test", "testing": "test", "eval": "test", "evaluation": "test"}
"""The split names the ``datasets`` library recognises in file and folder names (``data_files.py``:
``train``/``training``, ``validation``/``valid``/``dev``/``val``, ``test``/``testing``/``eval``/``evaluation``),
as alignapp's splits (validation → ``dev``)."""
_NAME_WORDS = re.compile(r"[-._ 0-9]+")
UNDECIDED = "undecided"
"""An exported tie (``review.gold_rule.UNDECIDED``: the annotators' votes tie and nothing decided it): a
``jsonl`` / ``hf`` label imported as this value (provenance ``imported``), so the pair stays undecided
— waiting in adjudication — and is never read as aligned, partial or not aligned."""


class Named:
    """Name helpers shared by input files: ``name`` is the path relative to the import root (posix)."""

    name: str

    @property
    def basename(self) -> str:
        return self.name.rsplit("/", 1)[-1]

    @property
    def stem(self) -> str:
        base = self.basename
        return base.rsplit(".", 1)[0] if "." in base.lstrip(".") else base

    @property
    def extension(self) -> str:
        base = self.basename
        return base.rsplit(".", 1)[1].lower() if "." in base.lstrip(".") else ""


@dataclass(frozen=True)
class TextFile(Named):
    """A name (and, for callers that have it, a decoded text); :func:`detect_format` uses the name."""

    name: str
    text: str = ""


@dataclass(frozen=True)
class InputFile(Named):
    """One file to import, on disk (``path``) or in memory (``data``); read only through :meth:`open`."""

    name: str
    size: int
    path: Path | None = None
    data: bytes | None = field(default=None, repr=False)

    def open(self) -> BinaryIO:
        if self.path is not None:
            return self.path.open("rb")
        return io.BytesIO(self.data or b"")


def split_line(text: str) -> list[str]:
    """One ``\\n``-terminated piece of a file as lines the way :func:`validation.lines_of` splits a
    whole text: the terminator (``\\n``, ``\\r\\n``, a final ``\\r``) dropped, a lone ``\\r`` inside splits."""
    if text.endswith("\n"):
        text = text[:-1]
    if text.endswith("\r"):
        text = text[:-1]
    return text.split("\r") if "\r" in text else [text]


@dataclass
class ParsedDocument:
    level: str
    rank: int
    paragraphs: list[list[str]]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def sentence_count(self) -> int:
        return sum(len(p) for p in self.paragraphs)


@dataclass(frozen=True)
class ParsedPair:
    """An imported link between sentences of two documents of one article (indices into the
    documents' flattened sentence lists). ``gold`` is the scheme value to adjudicate it with, if any;
    ``note`` goes into that adjudication's note. ``score`` and ``features`` are stored on the pair.
    ``label`` is the label the input gave (a class such as "aligned", or a scheme value), kept to
    warn when the project's scheme had no value to store it as (``gold`` is then None)."""

    complex_level: str
    simple_level: str
    complex: tuple[int, ...]
    simple: tuple[int, ...]
    gold: str | None = None
    score: float | None = None
    features: dict[str, float] = field(default_factory=dict, hash=False)
    note: str = ""
    label: str | None = None


@dataclass
class ParsedArticle:
    title: str
    file: str
    line: int | None
    documents: list[ParsedDocument]
    pairs: list[ParsedPair] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    # (complex level, simple level) of each document pair whose gold the input states (a JSONL record
    # with ``gold`` or ``pairs``, even empty): under the gold meaning ``exhaustive`` these are complete
    gold_documents: list[tuple[str, str]] = field(default_factory=list)
    # what this article's gold means when the input itself says so (``wiki-manual``: an article pair
    # listed m × n is exhaustive, one listed in part sparse); None: the import's ``gold_meaning``.
    # Ignored when the import's meaning is ``predictions``.
    gold_meaning: str | None = None
    # the train/dev/test split the input gives the article (a ``train.tsv`` file, a record's ``split``):
    # stored as its split, so an export of the imported project keeps the file's assignment; None: no split
    split: str | None = None


def normalise_language(code: str) -> str:
    """``"en-US"`` → ``"en"``."""
    return code.strip().lower().replace("_", "-").split("-", 1)[0]


def language_problem(code: str) -> str | None:
    if normalise_language(code) in SUPPORTED_LANGUAGES:
        return None
    return f"unsupported language {code!r} for sentence splitting; choose one of: {', '.join(SUPPORTED_LANGUAGES)}"


@dataclass
class ParseContext:
    """What every format parser gets: the language, the problem collector, warnings, the scheme
    values that imported gold links are adjudicated with (``{"aligned": "aligned", "partial": ...}``),
    and the project's label scheme: its slug and, for a categorical scheme, each value's class
    (``{"aligned": "aligned", "partial": "partial", "not-aligned": "not"}``, in scheme order; empty
    for a Likert scheme, whose values are no alignment labels)."""

    language: str
    problems: Problems
    gold_values: dict[str, str] = field(default_factory=dict)
    scheme: str = ""
    scheme_values: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    limits: Limits = field(default_factory=Limits.from_settings)
    line_counts: dict[str, int] = field(default_factory=dict)  # file name → lines (checked before parsing)
    gold_meaning: str = "sparse"  # what the input's gold links mean (importing.GOLD_MEANINGS)
    columns: tuple[str, ...] = ()  # a pair dataset's complex, simple [, label] column names (``hf``)
    bytes_read: int = 0  # for progress
    # what the articles spooled so far hold (``produced``), checked against IMPORT_MAX_SENTENCES and
    # IMPORT_MAX_BYTES as they are produced; and the bytes a binary dataset decoded so far
    sentences_produced: int = 0
    chars_produced: int = 0
    decoded_bytes: int = 0
    decoded_values: dict[str, int] = field(default_factory=dict)  # a dataset's values so far, by column
    _language_reported: bool = False

    def room(self, file: str, line: int | None, sentences: int, chars: int, *, field_name: str | None = None,
             what: str = "") -> bool:
        """Whether the import may hold ``sentences`` and ``chars`` more than the articles spooled so far
        (a parser asks with what it has built of the article at hand); reported at ``file:line`` when not.

        For example, ``ctx.room("articles_metadata.csv", 7, 4_800, 390_000)`` is False (and records
        "articles_metadata.csv:7: the import holds more than 500,000 sentences ...; the limit is ...")
        once the articles spooled so far plus those 4,800 sentences pass the limit.
        """
        limits, where = self.limits, f" by {what}" if what else ""
        if self.sentences_produced + sentences > limits.sentences:
            self.problems.add(file, over(f"the import holds more than {limits.sentences:,} sentences{where}",
                                         "IMPORT_MAX_SENTENCES", limits.sentences),
                              line=line, field=field_name, limit="IMPORT_MAX_SENTENCES")
            return False
        if self.chars_produced + chars > limits.total_bytes:
            self.problems.add(file, over(f"the import's documents hold more than {limits.total_bytes:,} characters{where}",
                                         "IMPORT_MAX_BYTES", limits.total_bytes),
                              line=line, field=field_name, limit="IMPORT_MAX_BYTES")
            return False
        return True

    def produced(self, article: ParsedArticle) -> bool:
        """Count an article's sentences and characters into the import's; False (reported) past a limit."""
        sentences = sum(d.sentence_count for d in article.documents)
        chars = sum(len(t) for d in article.documents for p in d.paragraphs for t in p)
        if not self.room(article.file, article.line, sentences, chars, what=f"article {article.title!r}"):
            return False
        self.sentences_produced += sentences
        self.chars_produced += chars
        return True

    def lines(self, f: InputFile) -> Iterator[tuple[int, str]]:
        """``(line number, text)`` of a file already checked to be UTF-8 text, read a line at a time."""
        number = 0
        with f.open() as fh:
            for raw in fh:
                if number == 0 and raw.startswith(BOM):
                    raw = raw[len(BOM):]
                self.bytes_read += len(raw)
                for line in split_line(raw.decode("utf-8")):
                    number += 1
                    yield number, line

    def text(self, f: InputFile) -> str:
        """The whole text of a file already checked to be UTF-8 text (at most ``MAX_UPLOAD_BYTES``)."""
        with f.open() as fh:
            data = fh.read()
        self.bytes_read += len(data)
        return data.decode("utf-8-sig")

    def split(self, text: str, file: str = "", line: int | None = None, field_name: str | None = None) -> list[list[str]] | None:
        """Paragraphs of sentences for a raw text, split like the engine splits (workers.engine.text).
        An unsupported language is reported (once) and yields None; so does a text longer than
        ``IMPORT_MAX_DOCUMENT_CHARS`` (reported at ``file``/``line``/``field_name``), before any splitting:
        the splitter's copies of a text stay bounded by that limit."""
        if len(text) > self.limits.document_chars:
            self.problems.add(file, over(f"a document text has {len(text):,} characters", "IMPORT_MAX_DOCUMENT_CHARS",
                                         self.limits.document_chars),
                              line=line, field=field_name, limit="IMPORT_MAX_DOCUMENT_CHARS")
            return None
        message = language_problem(self.language)
        if message:
            if not self._language_reported:
                self.problems.add("", message, field="language")
                self._language_reported = True
            return None
        return [p for p in split_document(text, normalise_language(self.language)) if p]


def splits_named(name: str) -> tuple[str | None, set[str]]:
    """The split a file's path names, the way ``datasets`` reads it (a keyword between ``-._ 0-9``
    or the ends of the file name, else of the innermost folder naming one: ``manual-dev.parquet``,
    ``manual/dev/0000.parquet``, ``train/data-00000-of-00001.arrow``), and every split that part names
    (more than one: ambiguous, the caller refuses it)."""
    for part in reversed([p for p in name.replace("\\", "/").split("/") if p]):
        words = [w.casefold() for w in _NAME_WORDS.split(part) if w]
        found = {SPLIT_KEYWORDS[w] for w in words if w in SPLIT_KEYWORDS}
        if found:
            return (next(iter(found)) if len(found) == 1 else None), found
    return None, set()


def split_from_name(name: str, problems: Problems | None = None) -> str | None:
    """:func:`splits_named`'s split; a name with two splits (``train-test.parquet``) is reported to
    ``problems`` (never silently dropped)."""
    split, found = splits_named(name)
    if len(found) > 1 and problems is not None:
        problems.add(name, f"the name says two splits ({', '.join(sorted(found))}); rename it so that it names one "
                           "of train, dev (validation), test")
    return split



def level_documents(sentences: dict[str, dict[Any, Any]], ranks: dict[str, int],
                    sentence: Callable[[Any, Any], tuple[int, str]], *, ids_key: str | None = None,
                    ) -> tuple[list[ParsedDocument], dict[str, dict[Any, int]]]:
    """One document per level, in rank order, of sentences named by a key (``{level: {key: value}}``): each
    level's sentences in key order, grouped by paragraph (``sentence(key, value)`` gives ``(paragraph, text)``);
    and each level's key → sentence index. ``ids_key``: the keys are kept in the document's meta under it."""
    documents, index = [], {}
    for level in sorted(sentences, key=lambda lv: (ranks[lv], lv)):
        keys = sorted(sentences[level])
        index[level] = {key: i for i, key in enumerate(keys)}
        paragraphs: dict[int, list[str]] = {}
        for key in keys:
            paragraph, text = sentence(key, sentences[level][key])
            paragraphs.setdefault(paragraph, []).append(text)
        meta = {ids_key: [list(key) for key in keys]} if ids_key else {}
        documents.append(ParsedDocument(level=level, rank=ranks[level], paragraphs=list(paragraphs.values()),
                                        meta=meta))
    return documents, index
