"""Uploaded corpora: bounded while they stream in, kept on disk, imported now or by a background job.

1. :class:`LimitedUploadHandler` (first of ``FILE_UPLOAD_HANDLERS``) watches the multipart upload
   as Django streams it to temporary files and cuts it off once it passes ``IMPORT_MAX_BYTES``,
   ``MAX_UPLOAD_BYTES`` for one (non-archive) file or ``IMPORT_MAX_FILES``; the view then answers
   413 with :func:`upload_problem`.
2. :func:`stage_uploads` moves the uploaded files into ``IMPORT_DIR/upload-<id>/`` (a rename, never
   a read into memory).
3. :func:`import_now` imports a staged upload in this process (the request waits); uploads larger
   than ``IMPORT_BACKGROUND_BYTES`` go to :func:`start_import_job` instead: a ``Job`` of kind ``import``
   on the cpu queue whose progress the page and ``GET /api/jobs/<id>/`` show, run by
   :func:`run_import_job`. An import done now is a recorded ``import`` job too (claimed here, with a
   heartbeat, never re-queued), so a web process killed mid-import is cleaned up after by the liveness
   sweep (``recovery``). Either way the staged folder is removed when the import ends.
"""
from __future__ import annotations

import shutil
import threading
import uuid
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from django.core.files.move import file_move_safe
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.db import connection, transaction

from annotation.models import Job, Project, Status
from annotation.services.background import jobs, progress
from annotation.services.corpus.importing import ImportResult, import_inputs, path_inputs
from annotation.services.corpus.importing.archive import import_root, is_archive
from annotation.services.corpus.importing.limits import Limits, over
from annotation.services.corpus.importing.problems import CorpusImportError, Problem, without_server_paths
from annotation.services.corpus.importing.recovery import IMPORT_JOB, remove_upload, undo_import
from annotation.services.corpus.importing.request import ImportRequest
from annotation.services.corpus.importing.validation import human_size

_FORM_SLACK = 1024 * 1024  # multipart headers and form fields besides the files


class ImportFailed(Exception):
    """An import job's unexpected error as stored on the job: its type and message, without server paths."""


class LimitedUploadHandler(FileUploadHandler):
    """Stops an upload past the import limits and records why on the request (``upload_problem``).

    It stores nothing itself: the next handler (``TemporaryFileUploadHandler``) writes the files
    to disk. After a stop Django reads and discards the rest of the body, so the client gets a
    413 answer rather than a reset connection."""

    def __init__(self, request=None) -> None:
        super().__init__(request)
        self.limits = Limits.from_settings()
        self.total = self.files = self.file_bytes = 0
        self.file_limit = self.limits.file_bytes
        self.refused = False

    def _refuse(self, problem: Problem) -> None:
        if self.request is not None:
            self.request.upload_problem = problem
        self.refused = True
        raise StopUpload(connection_reset=False)

    def _refuse_total(self) -> None:
        limit = self.limits.total_bytes
        self._refuse(Problem("", None, None, over(f"the upload is larger than {human_size(limit)}", "IMPORT_MAX_BYTES",
                                                  limit), "IMPORT_MAX_BYTES"))

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None) -> None:
        self.declared = content_length or 0  # checked once a file starts (StopUpload is not caught here)

    def new_file(self, field_name, file_name, *args, **kwargs) -> None:
        super().new_file(field_name, file_name, *args, **kwargs)
        if self.refused:
            raise StopUpload(connection_reset=False)
        if getattr(self, "declared", 0) > self.limits.total_bytes + _FORM_SLACK:
            self._refuse_total()
        self.files += 1
        if self.files > self.limits.files:
            self._refuse(Problem("", None, None, over(f"the upload holds more than {self.limits.files:,} files",
                                                      "IMPORT_MAX_FILES", self.limits.files), "IMPORT_MAX_FILES"))
        self.file_bytes = 0
        self.file_limit = self.limits.total_bytes if is_archive(file_name) else self.limits.file_bytes

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.file_bytes += len(raw_data)
        self.total += len(raw_data)
        if self.file_bytes > self.file_limit:
            setting = "IMPORT_MAX_BYTES" if self.file_limit == self.limits.total_bytes else "MAX_UPLOAD_BYTES"
            self._refuse(Problem(self.file_name, None, None,
                                 over(f"file is larger than {human_size(self.file_limit)}", setting, self.file_limit),
                                 setting))
        if self.total > self.limits.total_bytes:
            self._refuse_total()
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


def upload_problem(request) -> Problem | None:
    """Why :class:`LimitedUploadHandler` cut the request's upload off (None if it did not)."""
    return getattr(request, "upload_problem", None)


@dataclass(frozen=True)
class StagedUpload:
    """Uploaded files moved into their own folder under ``IMPORT_DIR``."""

    folder: Path
    names: tuple[str, ...]
    size: int

    @property
    def key(self) -> str:
        return self.folder.name

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def staged(key: str) -> StagedUpload:
    """A staged upload by its folder name (what an import job's params keep)."""
    if not key.startswith("upload-") or "/" in key or "\\" in key or key in (".", ".."):
        raise CorpusImportError.one("", f"no staged upload {key!r}")
    folder = import_root() / key
    if not folder.is_dir():
        raise CorpusImportError.one("", f"the uploaded files of this import are gone ({key}); upload them again")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return StagedUpload(folder, tuple(p.relative_to(folder).as_posix() for p in files), sum(p.stat().st_size for p in files))


def upload_names(uploads, paths: list[str] | None = None) -> list[str]:
    """Each upload's name in the staged folder: its relative path when ``paths`` gives them (a folder uploaded as a folder:
    the page's folder picker, the API's ``paths``, the client), else its file name: an HF ``save_to_disk`` folder, the hub
    converter's ``manual/dev/0000.parquet`` and every folder alignapp exports import as they are. Raises
    ``CorpusImportError`` for a path that is not a plain relative one, ``paths`` not one per file, or two files with one
    name (named as the problem it most likely is: a folder sent without its paths)."""
    if paths:
        if len(paths) != len(uploads):
            raise CorpusImportError.one("", f"'paths' gives {len(paths)} relative paths for {len(uploads)} files; "
                                            "give one per file, in the order of 'files'")
        names = [_relative(str(p)) for p in paths]
    else:
        names = [Path(u.name or "").name for u in uploads]
    if any(n in ("", ".", "..") for n in names):
        raise CorpusImportError.one("", "an uploaded file has no usable name")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated and paths:
        raise CorpusImportError.one(repeated[0], "two uploaded files have this path; send each file once")
    if repeated:
        raise CorpusImportError.one(repeated[0], "two uploaded files have this name: files of different folders? Upload the folder as "
                                                 "a folder (the page's folder choice, the API's 'paths' with each file's relative path, "
                                                 "the client's upload of a folder) or as a zip")
    clash = sorted(set(names) & {str(Path(n).parent) for n in names})
    if clash:
        raise CorpusImportError.one(clash[0], "is a file and a folder of the upload; rename one of them")
    return names


def _relative(path: str) -> str:
    """A relative upload path, cleaned (``./a//b`` → ``a/b``); one leaving the folder is refused."""
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if path.startswith(("/", "\\")) or ".." in parts or not parts or any(":" in p or "\x00" in p for p in parts):
        raise CorpusImportError.one(path[:200], "is not a relative path inside the uploaded folder")
    return "/".join(parts)


def stage_uploads(uploads, paths: list[str] | None = None) -> StagedUpload:
    """Move Django ``UploadedFile`` objects into a new ``IMPORT_DIR/upload-<id>/`` folder, each under
    its relative path when ``paths`` gives them (:func:`upload_names`: a folder stays a folder).

    A file Django spooled to disk is renamed into place; one it kept in memory (small uploads with
    a custom handler list) is written out a chunk at a time.

    Raises:
        CorpusImportError: two uploads with the same name or path, a bad path (nothing is kept).
    """
    names = upload_names(uploads, paths)
    folder = import_root() / f"upload-{uuid.uuid4().hex}"
    folder.mkdir()
    try:
        size = 0
        for upload, name in zip(uploads, names):
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if hasattr(upload, "temporary_file_path"):
                upload.file.flush()
                file_move_safe(upload.temporary_file_path(), str(target), allow_overwrite=False)
            else:
                with target.open("wb") as out:
                    for chunk in upload.chunks():
                        out.write(chunk)
            size += target.stat().st_size
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return StagedUpload(folder, tuple(names), size)


def import_now(project: Project, upload: StagedUpload, request: ImportRequest, *, user=None) -> ImportResult:
    """Import a staged upload in this process as an ``import`` job that is not resumable (it is
    removed afterwards, imported or not): if this process dies, the liveness sweep fails the job and
    removes what it wrote (``recovery.job_lost``).

    Raises:
        CorpusImportError: bad options or input (nothing was written), or the job was cancelled.
    """
    request = _identified(request, upload)  # the job's params and this import carry the same source and token
    job = start_import_job(project, upload, request, user=user, enqueue=False, resumable=False)
    if not progress.claim(Job, job.pk):  # pragma: no cover - the row was created just above
        raise CorpusImportError.one("", "the import could not start; upload the files again")
    try:
        result = _execute(job.pk, request=request, upload=upload)
    finally:
        progress.release(Job, job.pk)
    if result is None:
        raise CorpusImportError.one("", "the import was cancelled; nothing was imported")
    return result


#: what one value of a dataset (a cell, a list's item) costs an import, in bytes of its estimate: a
#: Python object, a row written, a sentence split
VALUE_BYTES = 100


def expanded_size(upload: StagedUpload) -> int:
    """What the staged files hold once unpacked and decoded, as far as their headers say (nothing is
    read but headers and footers, in milliseconds): a zip's members by its central directory, a gzip's
    size by its trailer, a parquet file's uncompressed bytes and ``VALUE_BYTES`` a value by its
    metadata; other files their size. A tiny file can hold a big import (issue 36 items 8-10): this,
    not the upload's size, decides whether it is imported in the web process."""
    import gzip
    import struct
    import zipfile

    from annotation.services.corpus.importing.dataset_files import column_values, uncompressed_size

    total = 0
    for name in upload.names:
        path, low = upload.folder / name, name.lower()
        size = path.stat().st_size
        try:
            if low.endswith(".zip"):
                with zipfile.ZipFile(path) as zf:
                    size = max(size, sum(info.file_size for info in zf.infolist()))
            elif low.endswith((".gz", ".tgz")):
                with open(path, "rb") as fh:
                    fh.seek(-4, 2)
                    size = max(size, struct.unpack("<I", fh.read(4))[0])
                    fh.seek(0)
                    gzip.GzipFile(fileobj=fh).peek(1)  # a gzip header at all
            elif low.endswith(".parquet"):
                from annotation.services.corpus.importing.base import InputFile

                f = InputFile(name, size, path=path)
                size = max(size, uncompressed_size(f)[1], VALUE_BYTES * sum(column_values(f).values()))
        except Exception:  # noqa: BLE001 - unreadable here: the import names what is wrong with it
            pass
        total += size
    return total


def precheck(upload: StagedUpload) -> None:
    """Refuse now, by their metadata alone, parquet files past the import's limits (their rows, values,
    uncompressed bytes: ``dataset_files.check_sizes``), so such an upload answers 413 at once rather
    than by a job. Raises CorpusImportError."""
    from annotation.services.corpus.importing.base import InputFile, ParseContext
    from annotation.services.corpus.importing.dataset_files import check_sizes
    from annotation.services.corpus.importing.problems import Problems

    files = [InputFile(name, (upload.folder / name).stat().st_size, path=upload.folder / name)
             for name in upload.names if name.lower().endswith(".parquet")]
    if not files:
        return
    ctx = ParseContext(language="en", problems=Problems())
    if not check_sizes(files, ctx) and any(p.limit for p in ctx.problems.items):
        ctx.problems.raise_if_any()  # an unreadable file is left to the import, which names it in its context


def runs_in_background(upload: StagedUpload) -> bool:
    """Whether the upload is imported by a background job: past ``IMPORT_BACKGROUND_BYTES`` uploaded, or
    once expanded (:func:`expanded_size`)."""
    limit = Limits.from_settings().background_bytes
    return upload.size > limit or expanded_size(upload) > limit


def _identified(request: ImportRequest, upload: StagedUpload) -> ImportRequest:
    """``request`` with what identifies its import: its ``source`` (default: the files' names) and its ``token`` (a
    new one unless it has one), stored on each article."""
    return replace(request, source=request.source or ", ".join(upload.names)[:200], token=request.token or uuid.uuid4().hex)


def start_import_job(project: Project, upload: StagedUpload, request: ImportRequest, *, user=None,
                     enqueue: bool = True, resumable: bool = True) -> Job:
    """Queue the import of a staged upload as a background job (kind ``import``, cpu queue) with the parsed
    ``request`` as its params; ``resumable=False``: the row of an import run now (:func:`import_now`), failed if
    its process dies."""
    request = _identified(request, upload)
    params = {"upload": upload.key, "files": list(upload.names)[:100], "bytes": upload.size, **request.as_params()}
    if not resumable:
        params["resumable"] = False
    with transaction.atomic():
        return jobs.start_job(project, IMPORT_JOB, params=params, user=user, enqueue=enqueue)


@dataclass(frozen=True)
class Received:
    """What became of an upload: imported now (``result``) or queued (``job``)."""

    result: ImportResult | None = None
    job: Job | None = None


def receive(project: Project, uploads, request: ImportRequest, *, user=None, paths: list[str] | None = None,
            ) -> Received:
    """The upload views' one call with the parsed ``request``: stage the files (under their relative ``paths``
    when given: a folder), then import them now or — past ``IMPORT_BACKGROUND_BYTES`` — queue an ``import`` job.

    Raises:
        CorpusImportError: (for an import done now) bad input; nothing was written.
    """
    upload = stage_uploads(uploads, paths)
    try:
        precheck(upload)
    except CorpusImportError:
        upload.remove()
        raise
    if runs_in_background(upload):
        return Received(job=start_import_job(project, upload, request, user=user))
    return Received(result=import_now(project, upload, request, user=user))


def result_data(result: ImportResult) -> dict:
    """An import's result as stored on its job (article ids are left out: there may be 200,000)."""
    data = asdict(result)
    data.pop("article_ids", None)
    data["summary"] = result.describe()
    data["gold_summary"] = result.gold_summary()
    return data


def run_import_job(job_id: int) -> None:
    """The ``import`` task's body: claim the job, import the staged upload with progress, record the
    result — or the problems (``result["problems"]``) when the input is refused; nothing is written
    then. A cancelled job stops at its next batch and its partial import is undone. An attempt that
    takes over from a lost worker (``progress.claim``) first drops what that worker had committed;
    an attempt that was itself taken over stops and leaves the upload to its successor."""
    if not progress.claim(Job, job_id):
        row = Job.objects.filter(pk=job_id).values("status", "params").first()
        if row is not None and row["status"] in (Status.CANCELLED, Status.SUCCEEDED, Status.FAILED):
            _cleanup(row["params"])  # cancelled while queued: nobody else will need the upload
        return
    _execute(job_id)


def _execute(job_id: int, *, request: ImportRequest | None = None, upload: StagedUpload | None = None,
             ) -> ImportResult | None:
    """Run a claimed import job; its result (None when cancelled or taken over). ``request`` and ``upload``: an
    import done now in this process passes the request it parsed and the upload it staged (a worker parses the
    job's params once and finds the upload by its key); a refused input's :class:`CorpusImportError` is then
    re-raised after it is recorded."""
    raise_problems = request is not None
    job = Job.objects.select_related("project", "project__label_scheme", "created_by").get(pk=job_id)
    params = job.params
    report = _ProgressWriter(job_id)
    try:
        if job.attempts > 1 and params.get("token"):  # a worker died mid-import: drop what it had committed
            undo_import(job.project, params["token"])
        upload = upload or staged(params["upload"])
        result = import_inputs(job.project, path_inputs(upload.folder, label="the upload"),
                               request or ImportRequest.from_params(params), actor=job.created_by, progress=report,
                               checkpoint=lambda: progress.check_cancelled(Job, job_id))
    except progress.Superseded:
        report.close()
        if params.get("resumable") is False:  # failed by the liveness sweep meanwhile: nobody resumes it
            undo_import(job.project, params["token"])
            _cleanup(params)
        return None  # another attempt owns the job (and needs the upload)
    except progress.Cancelled:
        report.close()
        _cleanup(params)
        return None
    except CorpusImportError as exc:
        report.close()
        _cleanup(params)
        progress.fail(Job, job_id, exc, result={"problems": [str(p) for p in exc.problems], "too_large": exc.too_large},
                      message=f"nothing was imported: {len(exc.problems)} problem(s)")
        if raise_problems:
            raise
        return None
    except Exception as exc:  # noqa: BLE001 - recorded on the row (without server paths), re-raised for the log
        report.close()
        _cleanup(params)
        progress.fail(Job, job_id, ImportFailed(without_server_paths(f"{type(exc).__name__}: {exc}")))
        raise
    report.close()
    _cleanup(params)
    progress.succeed(Job, job_id, result=result_data(result))
    return result


class _ProgressWriter:
    """The job's progress callback. On PostgreSQL an import writes in one transaction: a progress
    UPDATE from inside it would stay invisible until the end and lock the job row against the
    heartbeat thread. There the latest progress is written once a second from a thread with its own
    connection; on SQLite (batches committed one by one) and inside a caller's transaction, directly."""

    def __init__(self, job_id: int, every_seconds: float = 1.0) -> None:
        self.every = every_seconds
        self.latest: tuple[float, str] | None = None
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        if connection.vendor != "sqlite" and not connection.in_atomic_block:
            self.report = progress.reporter(Job, job_id, every_seconds=0.0)
            self.thread = threading.Thread(target=self._run, daemon=True, name=f"import-progress-{job_id}")
            self.thread.start()
        else:
            self.report = progress.reporter(Job, job_id, every_seconds=every_seconds)

    def __call__(self, fraction: float, message: str = "") -> None:
        if self.thread is None:
            self.report(fraction, message)
        else:
            self.latest = (fraction, message)

    def _flush(self) -> None:
        latest, self.latest = self.latest, None
        if latest is not None:
            self.report(*latest)

    def _run(self) -> None:
        try:
            while not self.stop.wait(self.every):
                self._flush()
            self._flush()
        finally:
            connection.close()

    def close(self) -> None:
        if self.thread is not None:
            self.stop.set()
            self.thread.join()


def _cleanup(params: dict) -> None:
    remove_upload(params)
