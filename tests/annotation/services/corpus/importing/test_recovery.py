"""After a crash an import is all or nothing (``corpus/importing/recovery.py``): what a lost import wrote is undone
(except articles someone labelled meanwhile), its staged upload removed, and staged files nobody uses swept after
``IMPORT_STALE_SECONDS``. The same on SQLite, where an import commits batch by batch (``tests/conftest.py``'s
``BACKEND_MODULES``)."""
from __future__ import annotations

import os
import time

import pytest

from annotation.models import AlignmentRun, Article, Job, Label
from annotation.services.corpus.importing import ImportRequest, import_files, recovery, uploads
from annotation.services.corpus.importing.gold_meanings import IMPORT_METHOD
from tests import factories
from tests.annotation.views.test_api_import import jsonl
from tests.annotation.views.test_import_crash_safety import MemoryUpload

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("import_dir")]


def test_stale_staged_files_are_swept_after_the_grace_period_and_live_ones_kept(users, project, settings, import_dir):
    settings.IMPORT_STALE_SECONDS = 60
    old = time.time() - 120
    stale = [import_dir / "upload-dead", import_dir / "work-dead", import_dir / "tmpabc.upload.jsonl"]
    stale[0].mkdir(), stale[1].mkdir(), stale[2].write_bytes(b"half")
    (stale[1] / "member.jsonl").write_bytes(b"x")
    fresh = import_dir / "work-running"
    fresh.mkdir()
    other = import_dir / "notes.txt"
    other.write_text("not ours")
    queued = uploads.stage_uploads([MemoryUpload("q.jsonl", jsonl(1))])
    uploads.start_import_job(project, queued, ImportRequest(), enqueue=False)
    for path in [*stale, other, queued.folder]:
        os.utime(path, (old, old))
    swept = recovery.sweep_stale_files()
    assert sorted(swept) == sorted(p.name for p in stale)
    assert sorted(p.name for p in import_dir.iterdir()) == sorted(["notes.txt", "work-running", queued.key])


def test_recovery_undo_is_idempotent_for_a_job_that_wrote_nothing(project, import_dir):
    import_files(project, [("other.jsonl", jsonl(2))], token="another-import")  # what another import wrote
    staged = import_dir / "upload-none"
    staged.mkdir()
    (staged / "in.jsonl").write_bytes(jsonl(1))
    job = Job.objects.create(project=project, kind="import", params={"token": "nothing", "upload": "upload-none"})
    recovery.job_lost(job.pk)
    assert not staged.exists()  # its staged upload is removed
    recovery.job_lost(job.pk)  # a second sweep of the same job: nothing left to do, and no error
    assert not staged.exists()
    assert sorted(Article.objects.filter(project=project).values_list("meta__import", flat=True)) == [
        "another-import", "another-import"]  # nobody else's articles are touched, either time
    job.refresh_from_db()
    assert job.params == {"token": "nothing", "upload": "upload-none"}


def test_undoing_an_import_deletes_its_articles_and_its_run_and_nothing_of_another_project(project, users):
    other = factories.make_project("Elsewhere")
    import_files(project, [("mine.jsonl", jsonl(3))], token="mine")
    import_files(other, [("theirs.jsonl", jsonl(1))], token="mine")  # the same token in another project
    AlignmentRun.objects.create(project=project, method=IMPORT_METHOD, params={"import": "mine"})
    recovery.undo_import(project, "mine")
    assert list(Article.objects.values_list("project__name", flat=True)) == ["Elsewhere"]
    assert not AlignmentRun.objects.filter(method=IMPORT_METHOD, params__import="mine").exists()


def test_an_article_labelled_meanwhile_is_kept_with_the_imports_run(project, users):
    import_files(project, [("mine.jsonl", jsonl(2))], token="mine")
    run = AlignmentRun.objects.create(project=project, method=IMPORT_METHOD, params={"import": "mine"})
    labelled = Article.objects.order_by("pk").first()
    pair = labelled.pairs.first() or pytest.fail("the import wrote no pair")
    Label.objects.create(pair=pair, annotator=users["anna"], value="aligned")
    recovery.undo_import(project, "mine")
    assert list(Article.objects.values_list("pk", flat=True)) == [labelled.pk]
    assert AlignmentRun.objects.filter(pk=run.pk).exists()  # its predictions may be what was labelled


@pytest.mark.parametrize("key", ["upload-x/../victim", "upload-x/", "../upload-x", "work-1", ""])
def test_only_a_staged_upload_folder_by_its_plain_name_is_removed(import_dir, key):
    for name in ("victim", "upload-x", "work-1"):
        (import_dir / name).mkdir()
    recovery.remove_upload({"upload": key})
    assert all((import_dir / name).exists() for name in ("victim", "upload-x", "work-1"))
    recovery.remove_upload({"upload": "upload-x"})
    assert not (import_dir / "upload-x").exists()
    recovery.remove_upload({"upload": "upload-x"})  # already gone: no error


def test_a_lost_job_that_no_longer_exists_is_nothing_to_undo(project):
    recovery.job_lost(999999)
    assert not Job.objects.exists()


def test_touch_keeps_a_running_imports_work_folder_from_the_sweep(import_dir, settings):
    settings.IMPORT_STALE_SECONDS = 60
    work = import_dir / "work-live"
    work.mkdir()
    old = time.time() - 120
    os.utime(work, (old, old))
    recovery.touch(work)
    recovery.touch(import_dir / "work-gone")  # a folder removed meanwhile: no error
    assert recovery.sweep_stale_files() == [] and work.exists()
    assert recovery.sweep_stale_files(now=time.time() + 120) == ["work-live"]
