"""An import's options, declared once and parsed once at the edge into an :class:`ImportRequest`.

The API upload view, the import page, ``manage.py import_corpus`` and the ``import`` job (from its params) each
call :meth:`ImportRequest.parse` once; the services (``uploads.receive``, ``start_import_job``, ``import_inputs``)
take the parsed object, so an upload's options are checked once and travel as one value. A bad option is a
:class:`~annotation.services.corpus.importing.problems.CorpusImportError` whose problem names the field.

Example:
    >>> ImportRequest.parse({"format": "jsonl", "test_questions": "on"}, text=True).test_questions
    True
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from annotation.requests import Option, parse_request
from annotation.services.corpus.importing import formats as registry
from annotation.services.corpus.importing import gold_meanings
from annotation.services.corpus.importing.base import language_problem
from annotation.services.corpus.importing.problems import CorpusImportError, Problem
from workers.engine import OptionError

ON_CONFLICT: tuple[str, ...] = ("error", "skip")
AUTO = "auto"


def _language(code: str) -> str:
    problem = language_problem(code)
    if problem:
        raise ValueError(problem)
    return code


def _columns(text: str) -> tuple[str, ...] | None:
    names = tuple(c.strip() for c in text.split(",") if c.strip())
    if len(names) > 3:
        raise ValueError(f"give complex,simple[,label]: at most three column names, got {len(names)}")
    return names or None


class _FormatChoices(Sequence):
    """``auto`` and the registered formats, read from the registry each time they are asked for (a format
    registered after this module was imported is a choice), so the import's declarations are built once."""

    def _names(self) -> tuple[str, ...]:
        return (AUTO, *registry.names())

    def __getitem__(self, index):  # type: ignore[override]
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, value: object) -> bool:
        return value in self._names()

    def __eq__(self, other: object) -> bool:
        return tuple(self) == tuple(other) if isinstance(other, Sequence) else NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))


IMPORT_OPTIONS: tuple[Option, ...] = (
    Option("format", "str", AUTO, choices=_FormatChoices(),  # type: ignore[arg-type]
           help="input format (default: from the file extensions)"),
    Option("language", "str", None, nullable=True, clean=_language,
           help="sentence-splitting language, ISO 639-1 (default: the project's)"),
    Option("on_conflict", "str", "error", choices=ON_CONFLICT,
           help="an article title already in the project: error (default) or skip it"),
    Option("gold_meaning", "str", gold_meanings.DEFAULT_MEANING, choices=gold_meanings.GOLD_MEANINGS,
           help="what the file's gold links mean: " + "; ".join(gold_meanings.HELP.values())),
    Option("test_questions", "bool", False, help="use the imported gold links as hidden test questions"),
    Option("source", "str", "", help="recorded as each article's source (default: the files' names)"),
    Option("columns", "str", None, nullable=True, clean=_columns,
           help="format hf: a pair dataset's text columns, complex,simple[,label] (default: the usual names)"),
)
"""The import's options, declared once (the format's choices are the registered formats, read when asked)."""


def import_options() -> tuple[Option, ...]:
    """The import's options (:data:`IMPORT_OPTIONS`)."""
    return IMPORT_OPTIONS


def _refused(exc: OptionError) -> CorpusImportError:
    return CorpusImportError([Problem("", None, key, why) for key, why in exc.problems.items()])


@dataclass(frozen=True)
class ImportRequest:
    """What to import and how: the parsed options of one import.

    Attributes:
        format: one of the registered formats or ``"auto"`` (from the extensions).
        language: sentence-splitting language; None = the project's.
        on_conflict: ``"error"`` (a title already in the project is a problem) or ``"skip"`` (left out, warned).
        gold_meaning: what the file's gold links mean (``gold``): sparse, exhaustive or predictions.
        test_questions: imported gold links become hidden test questions.
        source: recorded as each article's ``source`` (default: the file it came from).
        columns: format hf: a pair dataset's text columns (complex, simple[, label]); None = the usual names.
        token: the import's id, stored as each article's ``meta["import"]`` (None: a new one); not an option.
    """

    format: str = AUTO
    language: str | None = None
    on_conflict: str = "error"
    gold_meaning: str = gold_meanings.DEFAULT_MEANING
    test_questions: bool = False
    source: str = ""
    columns: tuple[str, ...] | None = None
    token: str | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None, *, text: bool = False) -> ImportRequest:
        """The request of ``raw`` (``text``: a form's or multipart body's strings), defaults for what is absent.

        Raises:
            CorpusImportError: a problem per bad option, naming it (``field``); nothing was read.
        """
        return parse_request(cls, "import", IMPORT_OPTIONS, raw, text=text, error=_refused)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> ImportRequest:
        """The request an ``import`` job was queued with (:meth:`as_params`)."""
        keys = {o.name for o in IMPORT_OPTIONS}
        raw = {k: v for k, v in params.items() if k in keys and v is not None}
        if isinstance(raw.get("columns"), (list, tuple)):
            raw["columns"] = ",".join(raw["columns"])
        return replace(cls.parse(raw), token=params.get("token"))

    def as_params(self) -> dict[str, Any]:
        """JSON for a job's params (``columns`` as its text)."""
        data = asdict(self)
        data["columns"] = ",".join(self.columns) if self.columns else None
        return data
