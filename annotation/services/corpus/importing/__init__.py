"""Corpus import: files in one of four formats → articles, documents, paragraphs, sentences and
(for formats that carry them) imported candidate pairs with their gold labels.

Everything is validated before anything is written; the write is one transaction, so a bad file
imports nothing. Shared by the API upload view, the upload page, the demo loader and the
``import_corpus`` management command.

Example:
    >>> result = import_files(project, read_path("annotation/fixtures/demo_corpus"))  # doctest: +SKIP
    >>> result.describe()  # doctest: +SKIP
    '4 articles, 12 documents, 123 sentences, 0 pairs (levels)'
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import IntegrityError, transaction

from annotation.models import Article, LabelScheme, Project
from annotation.services.corpus.importing import jsonl, levels, parallel, stories
from annotation.services.corpus.importing.archive import expand_archives, read_path
from annotation.services.corpus.importing.base import ParseContext, ParsedArticle, TextFile, language_problem
from annotation.services.corpus.importing.problems import CorpusImportError, Problem, Problems
from annotation.services.corpus.importing.validation import check_sizes, decode, is_ignorable
from annotation.services.corpus.importing.writer import write_articles

__all__ = [
    "FORMATS", "ON_CONFLICT", "CorpusImportError", "ImportResult", "Problem",
    "detect_format", "import_files", "read_path",
]

FORMATS: tuple[str, ...] = ("jsonl", "levels", "stories", "parallel")
ON_CONFLICT: tuple[str, ...] = ("error", "skip")

_PARSERS: dict[str, Callable[[list[TextFile], ParseContext], list[ParsedArticle]]] = {
    "jsonl": jsonl.parse,
    "levels": levels.parse,
    "stories": stories.parse,
    "parallel": parallel.parse,
}
_EXTENSION_FORMATS: dict[str, str] = {
    **{ext: "jsonl" for ext in jsonl.EXTENSIONS},
    **{ext: "levels" for ext in levels.EXTENSIONS},
    **{ext: "stories" for ext in stories.EXTENSIONS},
    **{ext: "parallel" for ext in parallel.EXTENSIONS},
}
_TITLE_MAX = 500


@dataclass
class ImportResult:
    format: str
    articles: int
    documents: int
    sentences: int
    pairs: int
    warnings: list[str] = field(default_factory=list)
    article_ids: list[int] = field(default_factory=list)

    def describe(self) -> str:
        """``"3 articles, 9 documents, 412 sentences, 0 pairs (levels)"``."""
        return (
            f"{self.articles} articles, {self.documents} documents, {self.sentences} sentences, "
            f"{self.pairs} pairs ({self.format})"
        )


def _known_extensions() -> str:
    return ", ".join(f".{ext} ({fmt})" for ext, fmt in _EXTENSION_FORMATS.items())


def detect_format(names: list[str]) -> str:
    """The format of a set of files, from their extensions.

    Raises:
        CorpusImportError: no files, an unknown extension, or files of several formats.
    """
    names = [n for n in names if not is_ignorable(n)]
    if not names:
        raise CorpusImportError.one("", "no files to import")
    found: dict[str, list[str]] = {}
    unknown: list[Problem] = []
    for name in names:
        ext = TextFile(name, "").extension
        fmt = _EXTENSION_FORMATS.get(ext)
        if fmt is None:
            shown = f".{ext}" if ext else "(none)"
            unknown.append(Problem(name, None, None, f"unknown extension {shown}; known extensions: {_known_extensions()}"))
        else:
            found.setdefault(fmt, []).append(name)
    if unknown:
        raise CorpusImportError(unknown[:50])
    if len(found) > 1:
        listing = "; ".join(f"{fmt} ({', '.join(ns[:3])}{', …' if len(ns) > 3 else ''})" for fmt, ns in found.items())
        raise CorpusImportError.one("", f"mixed formats: {listing}; import one format at a time")
    return next(iter(found))


def _scheme_values(project: Project) -> dict[str, str]:
    """Scheme value → class (aligned / partial / not) of a categorical scheme; empty for Likert."""
    scheme = project.label_scheme
    if scheme.kind == LabelScheme.LIKERT:
        return {}
    return {v["value"]: v.get("counts_as", "not") for v in scheme.values}


def _gold_values(project: Project) -> dict[str, str]:
    """The scheme value each engine label ("aligned", "partial") is stored as: the first value that counts as it."""
    out: dict[str, str] = {}
    for value in project.label_scheme.values:
        counts_as = value.get("counts_as")
        if counts_as in ("aligned", "partial") and counts_as not in out:
            out[counts_as] = value["value"]
    return out


def _existing_titles(project: Project, titles: list[str]) -> set[str]:
    existing: set[str] = set()
    for start in range(0, len(titles), 500):
        chunk = titles[start : start + 500]
        existing.update(Article.objects.filter(project=project, title__in=chunk).values_list("title", flat=True))
    return existing


def _check_titles(project: Project, articles: list[ParsedArticle], on_conflict: str, problems: Problems, warnings: list[str]) -> list[ParsedArticle]:
    first: dict[str, ParsedArticle] = {}
    for a in articles:
        field_name = "id" if a.line is not None else None
        if len(a.title) > _TITLE_MAX:
            problems.add(a.file, f"article title is longer than {_TITLE_MAX} characters", line=a.line, field=field_name)
        elif a.title in first:
            other = first[a.title]
            where = f"{other.file}:{other.line}" if other.line is not None else other.file
            problems.add(a.file, f"duplicate article title {a.title!r} (also from {where})", line=a.line, field=field_name)
        else:
            first[a.title] = a
    existing = _existing_titles(project, list(first))
    if not existing:
        return articles
    if on_conflict == "skip":
        skipped = sorted(existing)
        warnings.append(
            f"skipped {len(skipped)} article(s) already in project {project.name!r}: "
            + ", ".join(skipped[:10]) + (", …" if len(skipped) > 10 else "")
        )
        return [a for a in articles if a.title not in existing]
    for a in articles:
        if a.title in existing:
            problems.add(
                a.file,
                f"article {a.title!r} already exists in project {project.name!r} (remove it, rename it, or skip existing articles)",
                line=a.line, field="id" if a.line is not None else None,
            )
    return articles


def import_files(
    project: Project,
    files: list[tuple[str, bytes]],
    fmt: str = "auto",
    *,
    language: str | None = None,
    source: str = "",
    on_conflict: str = "error",
) -> ImportResult:
    """Validate ``files`` as one corpus of format ``fmt`` and write it into ``project``, all or nothing.

    Args:
        project: where the articles go.
        files: ``(name, bytes)``; names may be relative paths (``folder/A-adv.txt``). Archives
            (.zip, .tar.gz) among them are expanded; hidden files are skipped.
        fmt: one of :data:`FORMATS` or ``"auto"`` (from the extensions, see :func:`detect_format`).
        language: sentence-splitting language (ISO 639-1); defaults to the project's.
        source: recorded as each article's ``source`` (default: the file it came from).
        on_conflict: ``"error"`` (an article title already in the project is a problem) or
            ``"skip"`` (such articles are left out, with a warning).

    Raises:
        CorpusImportError: with every problem found (up to 50); nothing was written.
    """
    if fmt != "auto" and fmt not in FORMATS:
        raise CorpusImportError.one("", f"unknown format {fmt!r}; choose auto or one of: {', '.join(FORMATS)}", field="format")
    if on_conflict not in ON_CONFLICT:
        raise CorpusImportError.one("", f"unknown on_conflict {on_conflict!r}; choose one of: {', '.join(ON_CONFLICT)}", field="on_conflict")
    if language is not None:
        message = language_problem(language)
        if message:
            raise CorpusImportError.one("", message, field="language")

    problems = Problems()
    files = [(n, d) for n, d in expand_archives(list(files), problems) if not is_ignorable(n)]
    problems.raise_if_any()
    if not files:
        raise CorpusImportError.one("", "no files to import")
    check_sizes(files, problems)
    problems.raise_if_any()
    if fmt == "auto":
        fmt = detect_format([n for n, _ in files])

    decoded: list[TextFile] = []
    for name, data in files:
        text = decode(name, data, problems)
        if text is not None:
            decoded.append(TextFile(name, text))
    problems.raise_if_any()

    ctx = ParseContext(language=language or project.language or "en", problems=problems, gold_values=_gold_values(project),
                       scheme=project.label_scheme.slug, scheme_values=_scheme_values(project))
    articles = _PARSERS[fmt](decoded, ctx)
    problems.raise_if_any()
    articles = _check_titles(project, articles, on_conflict, problems, ctx.warnings)
    problems.raise_if_any()
    unlabelled = [p.label for a in articles for p in a.pairs if p.label and not p.gold]
    if unlabelled:
        classes = sorted({label for label in unlabelled if label in ("aligned", "partial", "not")})
        ctx.warnings.append(
            f"the project's label scheme {project.label_scheme.slug!r} has no value that counts as "
            f"{' / '.join(classes) or 'an alignment class'}; {len(unlabelled)} labelled link(s) were imported "
            "as pairs without a gold label"
        )

    try:
        with transaction.atomic():
            written = write_articles(project, articles, source=source)
    except IntegrityError as exc:
        raise CorpusImportError.one("", f"the corpus changed during the import ({exc}); nothing was imported") from exc
    return ImportResult(
        format=fmt, articles=written.articles, documents=written.documents, sentences=written.sentences,
        pairs=written.pairs, warnings=ctx.warnings, article_ids=written.article_ids,
    )


def import_path(project: Project, path: str | Path, fmt: str = "auto", **options: object) -> ImportResult:
    """:func:`import_files` over :func:`read_path` (a file, folder or archive on disk)."""
    return import_files(project, read_path(path), fmt, **options)  # type: ignore[arg-type]
