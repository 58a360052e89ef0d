"""Corpus import: files in one of the registered formats (``formats/``, a module each) → articles, documents, paragraphs, sentences and
(for formats that carry them) imported candidate pairs with their gold labels.

Everything is validated before anything is written, so a bad file imports nothing. Inputs are
streamed, never read whole into memory: archives are unpacked to a work folder (``archive``), every
file is checked once a line at a time (UTF-8, binary, ``IMPORT_MAX_LINES``), then parsed one
article at a time (checked against ``IMPORT_MAX_SENTENCES_PER_DOCUMENT`` and
``IMPORT_MAX_ARTICLES``) into a spool on disk, and finally written from the spool in batches. Memory
stays bounded by the largest article, whatever the size of the import (``limits``).

The write is all or nothing. On PostgreSQL (and inside a caller's transaction) it is one
transaction. On SQLite, where a writer locks the whole database, one long transaction would make
every annotator's submit wait and then fail with "database is locked"; there each batch commits on
its own (a lock held for a fraction of a second) and a failure — or a cancelled import job —
deletes the articles the import had written (they carry ``meta["import"]``, the import's id), so a
failed import still leaves nothing, although its articles appear batch by batch while it runs. A
process killed mid-import is cleaned up after by the liveness sweep (``recovery``): an upload's
import is a job whose partial writes and staged files are removed. Labelled articles are kept.

Shared by the API upload view, the upload page (both through ``uploads``: small uploads now, large
ones as an ``import`` background job), the demo loader and the ``import_corpus`` management command.

Example:
    >>> result = import_path(project, "annotation/fixtures/demo_corpus")  # doctest: +SKIP
    >>> result.describe()  # doctest: +SKIP
    '4 articles, 12 documents, 123 sentences, 0 pairs (levels)'
"""
from __future__ import annotations

import contextlib
import logging
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction

from annotation.label_schemes import UNKNOWN_KIND, class_values, scheme_kind, value_classes
from annotation.models import Article, Project
from annotation.services import audit
from annotation.services.background.progress import Superseded
from annotation.services.corpus.importing import formats as registry
from annotation.services.corpus.importing import gold_meanings
from annotation.services.corpus.importing.archive import bytes_inputs, collect, import_root
from annotation.services.corpus.importing.base import InputFile, ParseContext, ParsedArticle
from annotation.services.corpus.importing.formats import detect_format
from annotation.services.corpus.importing.limits import Limits, over
from annotation.services.corpus.importing.problems import CorpusImportError, Problem, Problems
from annotation.services.corpus.importing.recovery import touch, undo_import
from annotation.services.corpus.importing.request import ON_CONFLICT, ImportRequest
from annotation.services.corpus.importing.spool import Spool
from annotation.services.corpus.importing.validation import TITLE_MAX, check_article, check_file, is_ignorable
from annotation.services.corpus.importing.writer import GoldImport, Written, write_articles

logger = logging.getLogger(__name__)

__all__ = [
    "GOLD_MEANINGS", "ON_CONFLICT", "CorpusImportError", "ImportResult", "Limits", "Problem",
    "ImportRequest", "detect_format", "format_names", "import_files", "import_inputs", "import_path", "path_inputs", "read_path",
    "undo_import",
]

GOLD_MEANINGS = gold_meanings.GOLD_MEANINGS
BATCH_SENTENCES = 5000  # rows written per batch (one short transaction each on SQLite)
BATCH_ARTICLES = 500
SQLITE_PAUSE = 0.1  # seconds between batches on SQLite: longer than its busy handler's polling interval


@dataclass
class ImportResult:
    format: str
    articles: int
    documents: int
    sentences: int
    pairs: int
    warnings: list[str] = field(default_factory=list)
    article_ids: list[int] = field(default_factory=list)
    gold_meaning: str = gold_meanings.DEFAULT_MEANING
    test_questions: bool = False
    gold: dict[str, int] = field(default_factory=dict)  # what the gold links were stored as (writer.Written.gold)
    # the meaning each article got, the file's own where it states one: meaning → {articles, links}
    gold_applied: dict[str, dict[str, int]] = field(default_factory=dict)
    run: int | None = None  # the alignment run holding the links (gold meaning "predictions")

    def describe(self) -> str:
        """``"3 articles, 9 documents, 412 sentences, 0 pairs (levels)"``."""
        return (
            f"{self.articles} articles, {self.documents} documents, {self.sentences} sentences, "
            f"{self.pairs} pairs ({self.format})"
        )

    def gold_summary(self) -> str:
        """What the file's gold links were stored as, under the meaning applied (see ``gold.summary``)."""
        return gold_meanings.summary(self.gold_meaning, self.test_questions, self.gold, self.gold_applied)


def format_names() -> tuple[str, ...]:
    """The import formats (``importing/formats/``, one module each), in list order."""
    return registry.names()


@contextlib.contextmanager
def work_folder() -> Iterator[Path]:
    """A fresh folder under :func:`import_root` for extracted members and the parse spool, removed afterwards."""
    path = import_root() / f"work-{uuid.uuid4().hex}"
    path.mkdir()
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def path_inputs(path: str | Path, *, label: str | None = None) -> list[InputFile]:
    """The files of ``path`` — a file, or a folder (recursively, sorted, hidden files skipped) — as inputs read from where
    they are (archives among them are expanded by ``collect``). A refusal names ``label`` (an upload: never the server
    folder it was staged in), else ``path``."""
    path = Path(path)
    label = str(path) if label is None else label
    if path.is_dir():
        files = []
        for p in sorted(path.rglob("*")):
            rel = p.relative_to(path).as_posix()
            if p.is_file() and not is_ignorable(rel):
                files.append(InputFile(rel, p.stat().st_size, path=p))
        if not files:
            raise CorpusImportError.one(label, "folder holds no files to import")
        return files
    if not path.is_file():
        raise CorpusImportError.one(label, "no such file or folder")
    return [InputFile(path.name, path.stat().st_size, path=path)]


def read_path(path: str | Path) -> list[tuple[str, bytes]]:
    """The files to import from ``path`` (a file, a folder: recursively, sorted, hidden files skipped, or a .zip/.tar.gz
    archive) as ``(name relative to the folder/archive, bytes)``: for small inputs (tests, the demo corpus)."""
    with work_folder() as work:
        out = []
        for f in collect(path_inputs(path), work, Limits.from_settings()):
            with f.open() as fh:
                out.append((f.name, fh.read()))
        return out


def _batches(articles: Iterable[ParsedArticle], skip: set[str]) -> Iterator[list[ParsedArticle]]:
    batch: list[ParsedArticle] = []
    sentences = 0
    for a in articles:
        if a.title in skip:
            continue
        batch.append(a)
        sentences += sum(d.sentence_count for d in a.documents)
        if sentences >= BATCH_SENTENCES or len(batch) >= BATCH_ARTICLES:
            yield batch
            batch, sentences = [], 0
    if batch:
        yield batch


Progress = Callable[[float, str], None]


def _write(recorder: _Recorder, spool: Spool, skip: set[str], *, total: int, progress: Progress | None,
           checkpoint: Callable[[], None] | None) -> Written:
    """Write the spooled articles (less ``skip``) in batches, all or nothing; the recorder's audit event with them."""
    project, source, token = recorder.project, recorder.request.source, recorder.request.token
    audit_event, gold = recorder.audit_event, recorder.gold
    written = Written()
    committing = False

    def write_all(pause: float = 0.0) -> None:
        meaning = gold()  # (predictions) creates the run, inside the write
        for batch in _batches(spool, skip):
            if checkpoint is not None:
                checkpoint()
            with transaction.atomic():
                written.add(write_articles(project, batch, source=source, token=token, gold=meaning))
            if pause:
                time.sleep(pause)  # let writers waiting for SQLite's lock (annotators' submits) go first
            if progress is not None:
                progress(0.5 + 0.5 * written.articles / max(total, 1), f"written {written.articles:,} of {total:,} articles")

    try:
        if connection.vendor == "sqlite" and not connection.in_atomic_block:
            try:
                write_all(SQLITE_PAUSE)
                with transaction.atomic():
                    audit_event(written)
            except Superseded:
                raise  # another attempt of the job took over this import: its batches are its own now
            except BaseException:
                undo_import(project, token)
                raise
        else:
            with transaction.atomic():
                write_all()
                audit_event(written)
                committing = True  # an error after this line came from COMMIT: its outcome is unknown
    except IntegrityError as exc:  # the readers refuse duplicates with their line: this is another writer's
        logger.warning("import into project %s hit a unique constraint: %s", project.pk, exc)
        raise CorpusImportError.one("", "the corpus changed during the import (another import or edit stored one of "
                                        "its articles or pairs meanwhile); nothing was imported") from exc
    except (OperationalError, InterfaceError) as exc:  # e.g. the connection dropped: the transaction was rolled back
        if committing:
            raise
        raise CorpusImportError.one("", f"the database connection failed during the import ({exc}); nothing was "
                                        "imported: import the files again") from exc
    return written


def import_inputs(project: Project, files: list[InputFile], request: ImportRequest, *, actor=None,
                  progress: Progress | None = None, checkpoint: Callable[[], None] | None = None) -> ImportResult:
    """Validate ``files`` as one corpus and write it into ``project`` as ``request`` says, all or nothing.

    Args:
        project: where the articles go.
        files: the inputs; names may be relative paths (``folder/A-adv.txt``). Archives (.zip,
            .tar.gz) among them are expanded; hidden files are skipped.
        request: the parsed options (:class:`ImportRequest`: format, language, on_conflict, gold_meaning,
            test_questions, source, columns, and the import's ``token``).
        actor: who imports (the audit log's actor; None = a command or script).
        progress: ``progress(fraction, message)``, called as the import advances.
        checkpoint: called between batches; raising there (a cancelled job) undoes the import.

    Raises:
        CorpusImportError: with every problem found (up to 50); nothing was written.
    """
    limits = Limits.from_settings()
    request = replace(request, token=request.token or uuid.uuid4().hex)
    given = checkpoint
    with work_folder() as work:
        def alive() -> None:  # the caller's checkpoint, also marking the work folder in use (recovery.sweep_stale_files)
            touch(work)
            if given is not None:
                given()

        checkpoint = alive
        inputs, fmt = _inputs(files, work, limits, request.format)
        request = replace(request, format=fmt)
        total_bytes = sum(f.size for f in inputs) or 1
        problems = Problems()
        ctx = _parse_context(project, problems, limits, request)
        inputs = _check_files(inputs, ctx, registry.get(fmt), total_bytes=total_bytes, progress=progress)
        problems.raise_if_any()

        spool = Spool(work)
        try:
            seen, unlabelled = _spool_articles(registry.get(fmt).parse(inputs, ctx), spool, ctx, total_bytes=total_bytes,
                                               progress=progress, checkpoint=checkpoint)
            problems.raise_if_any()
            skip = _check_titles(project, seen, request.on_conflict, problems, ctx.warnings)
            problems.raise_if_any()
            if unlabelled:
                ctx.warnings.append(_unlabelled_warning(project, unlabelled))
            recorder = _Recorder(project, [f.name for f in inputs], request, actor)
            written = _write(recorder, spool, skip, total=len(seen) - len(skip), progress=progress,
                             checkpoint=checkpoint)
        finally:
            spool.close()
    return ImportResult(
        format=fmt, articles=written.articles, documents=written.documents, sentences=written.sentences,
        pairs=written.pairs, warnings=ctx.warnings, article_ids=written.article_ids,
        gold_meaning=request.gold_meaning, test_questions=request.test_questions, gold=dict(written.gold),
        gold_applied=written.applied, run=recorder.run,
    )


def _inputs(files: list[InputFile], work: Path, limits: Limits, fmt: str) -> tuple[list[InputFile], str]:
    """The files to import (archives expanded, hidden files left out) and their format."""
    inputs = [f for f in collect(files, work, limits) if not is_ignorable(f.name)]
    if not inputs:
        raise CorpusImportError.one("", "no files to import")
    return inputs, detect_format([f.name for f in inputs]) if fmt == "auto" else fmt


def _parse_context(project: Project, problems: Problems, limits: Limits, request: ImportRequest) -> ParseContext:
    """What every format's parser is given: language, the project's scheme and gold values, limits, options.

    ``gold_values``: the scheme value each engine label ("aligned", "partial") is stored as (the first value that
    counts as it); ``scheme_values``: scheme value → class (aligned / partial / not) for a scheme with gold, empty
    for one without (Likert)."""
    scheme = project.label_scheme
    gold = {kind: value for kind, value in class_values(scheme).items() if kind in ("aligned", "partial")}
    return ParseContext(language=request.language or project.language or "en", problems=problems,
                        gold_values={**gold, UNKNOWN_KIND: UNKNOWN_KIND} if gold else gold, scheme=scheme.slug,
                        scheme_values=value_classes(scheme) if scheme_kind(scheme).gold else {}, limits=limits,
                        gold_meaning=request.gold_meaning, columns=request.columns or ())


def _check_files(inputs: list[InputFile], ctx: ParseContext, fmt: registry.ImportFormat, *, total_bytes: int,
                 progress: Progress | None) -> list[InputFile]:
    """Check every text file once, a line at a time (binary formats are read by their own library);
    the files to parse: a ``record_files`` format's empty files are left out (warned) unless all are empty."""
    checked = 0
    empty: list[str] = []
    for f in inputs:
        lines = None if fmt.binary else check_file(f, ctx.problems, ctx.limits, empty_ok=fmt.record_files)
        if lines == 0:
            empty.append(f.name)
        elif lines is not None:
            ctx.line_counts[f.name] = lines
        checked += f.size
        if progress is not None:
            progress(0.1 * checked / total_bytes, f"checked {f.name}")
    if empty and len(empty) == len(inputs):
        for name in empty:
            ctx.problems.add(name, "file is empty")
    elif empty:
        ctx.warnings.append(f"left out {len(empty)} empty file(s) (no records): {', '.join(empty[:5])}")
    return [f for f in inputs if f.name not in empty]


# how to import the rest when titles are already in the project, in each place an import starts
SKIP_EXISTING = ('remove or rename it, or import again skipping the articles already there: tick "Skip articles '
                 'already in the project" on the import page, --on-conflict skip on import_corpus, '
                 '"on_conflict": "skip" in the API')


def _existing_titles(project: Project, titles: list[str]) -> set[str]:
    existing: set[str] = set()
    for start in range(0, len(titles), 500):
        chunk = titles[start : start + 500]
        existing.update(Article.objects.filter(project=project, title__in=chunk).values_list("title", flat=True))
    return existing


@dataclass(frozen=True)
class SeenArticle:
    """What is kept of every parsed article until the write: where its title came from."""

    title: str
    file: str
    line: int | None


def _check_titles(project: Project, seen: list[SeenArticle], on_conflict: str, problems: Problems, warnings: list[str]) -> set[str]:
    """Titles too long, twice in the import or already in the project; returns the titles to skip."""
    first: dict[str, SeenArticle] = {}
    for a in seen:
        field_name = "id" if a.line is not None else None
        if len(a.title) > TITLE_MAX:
            problems.add(a.file, f"article title is longer than {TITLE_MAX} characters", line=a.line, field=field_name)
        elif a.title in first:
            other = first[a.title]
            where = f"{other.file}:{other.line}" if other.line is not None else other.file
            problems.add(a.file, f"duplicate article title {a.title!r} (also from {where})", line=a.line, field=field_name)
        else:
            first[a.title] = a
    existing = _existing_titles(project, list(first))
    if not existing:
        return set()
    if on_conflict == "skip":
        skipped = sorted(existing)
        warnings.append(
            f"skipped {len(skipped)} article(s) already in project {project.name!r}: "
            + ", ".join(skipped[:10]) + (", …" if len(skipped) > 10 else "")
        )
        return existing
    hint = f" ({SKIP_EXISTING})"  # said once, on the first such article
    for a in seen:
        if a.title in existing:
            problems.add(a.file, f"article {a.title!r} already exists in project {project.name!r}{hint}",
                         line=a.line, field="id" if a.line is not None else None)
            hint = ""
    return existing


def _spool_articles(articles: Iterable[ParsedArticle], spool: Spool, ctx: ParseContext, *, total_bytes: int,
                    progress: Progress | None, checkpoint: Callable[[], None] | None,
                    ) -> tuple[list[SeenArticle], list[str]]:
    """Check each parsed article and spool it while no problem was found; every article's title and
    origin, and the labels of links the project's scheme has no gold value for."""
    problems, limits = ctx.problems, ctx.limits
    seen: list[SeenArticle] = []
    unlabelled: list[str] = []
    for article in articles:
        if len(seen) >= limits.articles:
            problems.add("", over(f"the import holds more than {limits.articles:,} articles", "IMPORT_MAX_ARTICLES",
                                  limits.articles), limit="IMPORT_MAX_ARTICLES")
            break
        seen.append(SeenArticle(article.title, article.file, article.line))
        if not check_article(article, limits, problems) or problems:
            continue  # keep validating, stop spooling: nothing will be written
        if not ctx.produced(article):
            break  # past the import's sentences or characters: read no further
        unlabelled.extend(p.label for p in article.pairs if p.label and not p.gold)
        spool.add(article)
        if progress is not None and len(seen) % 200 == 0:
            progress(0.1 + 0.4 * min(1.0, ctx.bytes_read / total_bytes), f"read {len(seen):,} articles")
        if checkpoint is not None and len(seen) % 1000 == 0:
            checkpoint()
    return seen, unlabelled


def _unlabelled_warning(project: Project, unlabelled: list[str]) -> str:
    classes = sorted({label for label in unlabelled if label in ("aligned", "partial", "not", UNKNOWN_KIND)})
    return (f"the project's label scheme {project.label_scheme.slug!r} has no value that counts as "
            f"{' / '.join(classes) or 'an alignment class'}; {len(unlabelled)} labelled link(s) were imported "
            "as pairs without a gold label")


@dataclass
class _Recorder:
    """The import's gold run (gold meaning "predictions": created inside the write) and its audit record."""

    project: Project
    names: list[str]
    request: ImportRequest
    actor: object
    run: int | None = None

    def gold(self) -> GoldImport:
        meaning = self.request.gold_meaning
        if meaning == gold_meanings.PREDICTIONS and self.run is None:
            self.run = gold_meanings.start_run(self.project, self.names, self.request.token, self.actor).pk
        return GoldImport(meaning, self.request.test_questions, self.run)

    def audit_event(self, written: Written) -> None:
        if self.run is not None:
            gold_meanings.finish_run(self.run, written.articles, written.gold["predictions"])
        names, request = self.names, self.request
        audit.record("import", actor=self.actor, project=self.project,
                     target=(request.source or ", ".join(names))[:300],
                     files=names[:20], file_count=len(names), articles=written.articles,
                     sentences=written.sentences, pairs=written.pairs, format=request.format,
                     gold_meaning=request.gold_meaning, test_questions=request.test_questions, gold=dict(written.gold),
                     gold_applied=written.applied,
                     gold_summary=gold_meanings.summary(request.gold_meaning, request.test_questions, written.gold,
                                                        written.applied))


def import_files(project: Project, files: list[tuple[str, bytes]], fmt: str = "auto", *, actor=None,
                 progress: Progress | None = None, **options: Any) -> ImportResult:
    """:func:`import_inputs` over files in memory (``(name, bytes)``: tests, small scripts); ``options`` are
    parsed here into the :class:`ImportRequest` (a script's edge; ``token``: the import's id)."""
    token = options.pop("token", None)
    request = replace(ImportRequest.parse({"format": fmt, **options}), token=token)
    return import_inputs(project, bytes_inputs(list(files)), request, actor=actor, progress=progress)


def import_path(project: Project, path: str | Path, fmt: str = "auto", *, actor=None,
                progress: Progress | None = None, **options: Any) -> ImportResult:
    """:func:`import_inputs` over a file, folder or archive on disk, read from where it is (streamed);
    ``options`` are parsed here into the :class:`ImportRequest` (``token``: the import's id)."""
    token = options.pop("token", None)
    request = replace(ImportRequest.parse({"format": fmt, **options}), token=token)
    return import_inputs(project, path_inputs(path), request, actor=actor, progress=progress)
