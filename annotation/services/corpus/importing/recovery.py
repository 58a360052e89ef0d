"""After a crash, an import is all or nothing: its partial writes are undone, its staged files swept.

Every upload's import is a ``Job`` of kind ``import`` (``uploads``): one run now in the web process
(``params["resumable"] = False``) or by a worker. The articles it writes carry its ``token`` (each
article's ``meta["import"]``). When the process running it dies (SIGKILL, out of memory), its
heartbeat stops and the liveness sweep (``background.liveness``) either re-queues it — a background
job, whose next attempt first undoes what the lost one wrote, then imports everything — or fails it
and calls :func:`job_lost` (an import done now, or a job lost ``MAX_ATTEMPTS`` times), which deletes
what it wrote and its staged upload, so the same files can be uploaded again. On PostgreSQL an
import is one transaction, so a dead one has written nothing; on SQLite its batches committed one
by one and are deleted here.

Files under ``IMPORT_DIR`` that a dead request or job left — staged uploads (``upload-*``), work
folders (``work-*``) and Django's upload spools (``tmp*.upload*``) — are removed by
:func:`sweep_stale_files` (each liveness pass) once untouched for ``IMPORT_STALE_SECONDS``, unless a
queued or running import job names them. A running import keeps its work folder's time fresh (:func:`touch`).
"""
from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation.models import Article, Job, Project, Status
from annotation.services.corpus.importing.archive import import_root
from annotation.services.corpus.importing.gold_meanings import drop_run

logger = logging.getLogger(__name__)

IMPORT_JOB = "import"


def undo_import(project: Project, token: str) -> None:
    """Undo a failed import committed batch by batch: delete its articles (a hundred at a time, so
    memory and lock times stay small), except any someone labelled in the meantime."""
    articles = Article.objects.filter(project=project, meta__import=token)
    keep = set(articles.filter(pairs__labels__isnull=False).values_list("pk", flat=True))
    if keep:
        logger.warning("import %s failed; keeping %d article(s) it wrote that were labelled meanwhile", token, len(keep))
    while ids := list(articles.exclude(pk__in=keep).values_list("pk", flat=True)[:100]):
        with transaction.atomic():
            Article.objects.filter(pk__in=ids).delete()
    if not keep:
        drop_run(project, token)


def remove_upload(params: dict) -> None:
    """Remove the staged upload an import job's ``params`` name (if still there)."""
    key = str(params.get("upload", ""))
    if key.startswith("upload-") and "/" not in key and "\\" not in key:
        shutil.rmtree(import_root() / key, ignore_errors=True)


def job_lost(job_id: int) -> None:
    """The liveness sweep failed this import job (its process died): delete what it had written
    and its staged upload, so the same files can be imported again."""
    job = Job.objects.select_related("project").filter(pk=job_id).first()
    if job is None:
        return
    params = job.params or {}
    if params.get("token"):
        undo_import(job.project, params["token"])
    remove_upload(params)


def touch(folder: Path) -> None:
    """Mark a work folder as in use (its time is what :func:`sweep_stale_files` goes by)."""
    try:
        os.utime(folder)
    except OSError:
        pass


def _is_staged(name: str) -> bool:
    return name.startswith(("upload-", "work-")) or (name.startswith("tmp") and ".upload" in name)


def sweep_stale_files(now: float | None = None) -> list[str]:
    """Remove staged import files no live import uses, untouched for ``IMPORT_STALE_SECONDS``;
    returns their names."""
    root = import_root()
    cutoff = (now or time.time()) - int(getattr(settings, "IMPORT_STALE_SECONDS", 3600))
    live = {str((params or {}).get("upload", "")) for params in Job.objects.filter(
        kind=IMPORT_JOB, status__in=[Status.QUEUED, Status.RUNNING]).values_list("params", flat=True)}
    removed: list[str] = []
    for entry in root.iterdir():
        if not _is_staged(entry.name) or entry.name in live:
            continue
        try:
            info = entry.lstat()
            if info.st_mtime >= cutoff:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except FileNotFoundError:
            continue  # its import ended meanwhile and removed it
        except OSError as exc:
            logger.warning("could not remove stale import file %s: %s", entry.name, exc)
            continue
        removed.append(entry.name)
    if removed:
        logger.info("removed %d stale import file(s): %s", len(removed), ", ".join(removed[:10]))
    return removed
