"""The export job (``export/__init__.py``): every format's files, the manifest and README in one zip, no empty
split, and the refusals of a bad request before anything is written."""
from __future__ import annotations

import zipfile

import pytest

from annotation.services import export
from tests.annotation.services.export.helpers import run

pytestmark = pytest.mark.django_db


def test_every_file_is_in_the_zip_with_the_manifest(newsela, settings, tmp_path):
    done, root = run(newsela["project"], settings, tmp_path)
    with zipfile.ZipFile(tmp_path / done.archive) as zf:
        names = set(zf.namelist())
    assert f"export-{done.pk}/manifest.json" in names and f"export-{done.pk}/hf/train/state.json" in names
    assert f"export-{done.pk}/wiki-manual/test.tsv" in names and f"export-{done.pk}/parquet/train.parquet" in names
    assert not any(name.startswith(f"export-{done.pk}/") and "/dev" in name for name in names)  # no empty split


def test_a_queued_export_job_writes_the_export_and_records_its_summary(newsela, settings, tmp_path):
    from annotation.models import Job, Status

    settings.MEDIA_ROOT = str(tmp_path)
    rita = newsela["project"].memberships.get(user__username="rita").user
    options = export.ExportOptions.parse({"formats": ["jsonl"], "split_policy": {"mode": "counts", "train": 1, "dev": 0,
                                                                                 "test": 1, "seed": 0}})
    done = export.start_export(newsela["project"], options, user=rita)
    job = done.job
    assert job.kind == "export" and job.params["export"] == done.pk and done.archive == ""
    export.run_export_job(job.pk)
    job.refresh_from_db()
    done.refresh_from_db()
    assert job.status == Status.SUCCEEDED, job.error
    assert job.result == export.summary(done) and job.result["pairs"] == done.pair_count > 0
    assert export.archive_path(done).is_file() and (export.export_dir(done) / "jsonl").is_dir()
    export.run_export_job(job.pk)  # delivered twice: the finished job is not claimed again
    assert Job.objects.get(pk=job.pk).finished_at == job.finished_at


def test_an_export_job_whose_creator_lost_access_fails_with_the_reason(newsela, settings, tmp_path):
    from annotation.models import Status
    from annotation.services.projects.job_access import AccessLost

    settings.MEDIA_ROOT = str(tmp_path)
    project = newsela["project"]
    rita = project.memberships.get(user__username="rita").user
    done = export.start_export(project, export.ExportOptions.parse({"formats": ["jsonl"]}), user=rita)
    project.memberships.filter(user=rita).delete()
    with pytest.raises(AccessLost):
        export.run_export_job(done.job.pk)
    done.job.refresh_from_db()
    assert done.job.status == Status.FAILED and "no longer have access to project 'Newsela sample'" in done.job.error
    assert not export.export_dir(done).exists()


def test_a_rerun_export_starts_over_and_without_an_archive_has_none(newsela, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    options = export.ExportOptions.parse({"formats": ["tsv"]})
    first = export.run_export(newsela["project"], options, archive=False)
    stale = export.export_dir(first) / "jsonl" / "train.jsonl"
    stale.parent.mkdir()
    stale.write_text("left from an earlier try\n")
    again = export.run_export(newsela["project"], options, export=first, archive=False)
    assert again.pk == first.pk and not stale.exists() and (export.export_dir(again) / "manifest.json").is_file()
    assert export.archive_path(again) is None and export.format_names()[0] == "tsv"


def test_the_collector_is_paused_while_writing_and_the_cycles_made_are_still_collected(newsela, settings, tmp_path,
                                                                                        monkeypatch):
    """Issue 37: the cyclic garbage collector is paused while the batches are written (its full passes cost a third
    of an hf export), its young generations collected every ``COLLECT_EVERY`` articles and it is enabled again
    after — also when a writer fails; a reference cycle a writer makes is gone before the export ends."""
    import gc
    import weakref

    from annotation.services import export
    from annotation.services.export.formats.jsonl import JsonlWriter

    from .helpers import run

    monkeypatch.setattr(export, "COLLECT_EVERY", 1)
    cycles, seen, write = [], [], JsonlWriter.write

    class Node:
        pass

    def writing(self, batch, records):
        seen.append((gc.isenabled(), [ref() is None for ref in cycles]))
        node = Node()
        node.me = node  # a cycle: only the collector frees it
        cycles.append(weakref.ref(node))
        write(self, batch, records)

    monkeypatch.setattr(JsonlWriter, "write", writing)
    assert gc.isenabled()
    done, _ = run(newsela["project"], settings, tmp_path, formats=["jsonl"])
    assert done.pair_count and len(seen) >= 2 and gc.isenabled()
    assert not any(enabled for enabled, _ in seen)  # paused while writing
    assert all(all(gone) for _, gone in seen)  # each earlier article's cycle collected by then

    def failing(self, batch, records):
        raise RuntimeError("disk full")

    monkeypatch.setattr(JsonlWriter, "write", failing)
    with pytest.raises(RuntimeError):
        run(newsela["project"], settings, tmp_path / "again", formats=["jsonl"])
    assert gc.isenabled()
