"""The export preview kept per state, a big project's computed by one ``export-preview`` job (issue 37): an auto
preview reads a run's every pair (its 20-s budget at a million pairs), a first gold one every article with evidence."""
from __future__ import annotations

import pytest

from annotation.errors import BeingComputed
from annotation.models import Job, Status
from annotation.services import export
from annotation.services.export import kept_preview
from annotation.services.review import review_state

from .conftest import make_pair, vote

pytestmark = pytest.mark.django_db


def same(found: dict, fresh: dict) -> bool:
    """Equal but for this call's time and whether it is the state before's."""
    def plain(d: dict) -> dict:
        return {k: v for k, v in d.items() if k not in ("seconds", "updating")}
    return plain(found) == plain(fresh)


def test_a_big_projects_auto_preview_is_one_jobs_and_after_a_change_the_one_before_is_shown_updating(
        auto_run, monkeypatch):
    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    monkeypatch.setattr(review_state, "REFRESH_EVERY_S", 0)
    project = auto_run["project"]
    options = export.ExportOptions.parse({"kind": "auto", "runs": [auto_run["run"].pk]})
    for _ in range(2):
        with pytest.raises(BeingComputed):
            export.preview(project, options, background=True)
    job = Job.objects.get(kind=kept_preview.PREVIEW_JOB)  # one, however often asked
    export.preview_job(job.pk)
    assert Job.objects.get(pk=job.pk).status == Status.SUCCEEDED
    first = export.preview(project, options, background=True)
    assert first["updating"] is False and same(first, export.compute_preview(project, options))
    make_pair(auto_run["bees"], "0", "1", [2], [1], run=auto_run["run"], score=0.8, predicted_label="aligned")
    stale = export.preview(project, options, background=True)
    assert stale["updating"] is True and stale["pairs"] == first["pairs"]  # the one before, said so
    export.preview_job(Job.objects.get(kind=kept_preview.PREVIEW_JOB, status=Status.QUEUED).pk)
    now = export.preview(project, options, background=True)
    assert now["updating"] is False and now["pairs"] == first["pairs"] + 1
    assert same(now, export.compute_preview(project, options))
    assert same(export.preview(project, options), export.compute_preview(project, options))  # the command's: at once


def test_a_big_projects_first_gold_preview_is_one_jobs_then_later_states_are_computed_from_the_parts(
        newsela, monkeypatch):
    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    project, options = newsela["project"], export.ExportOptions.parse({"derived": False, "drop_identical": False})
    with pytest.raises(BeingComputed):
        export.preview(project, options, background=True)
    export.preview_job(Job.objects.get(kind=kept_preview.PREVIEW_JOB).pk)
    assert same(export.preview(project, options, background=True), export.compute_preview(project, options))
    vote(make_pair(newsela["owls"], "0", "1", [1], [1]), "dan", "partial")
    changed = export.preview(project, options, background=True)  # no job: the parts, only the changed article
    assert same(changed, export.compute_preview(project, options)) and Job.objects.count() == 1
