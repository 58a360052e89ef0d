"""The dashboard's score distribution kept per state of the data (issue 37: 9–12 s at a million pairs on every open
of the dashboard): equal to a fresh computation after a change; a big project's first one from one job (202)."""
from __future__ import annotations

import pytest
from django.core.cache import cache

from annotation.errors import BeingComputed
from annotation.models import Job, Membership, Status
from annotation.services.review import review_state
from annotation.services.scoring import calibration, kept_distribution
from tests import factories
from tests.annotation.services.review.test_adjudication import make_pairs, vote

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored(project, users):
    bob = factories.make_user("bob")
    Membership.objects.create(project=project, user=bob, role="annotator")
    pairs = make_pairs(project, 3, scores=[0.9, 0.6, 0.2])
    vote(pairs[0], users["anna"], "aligned"), vote(pairs[1], users["anna"], "partial")
    return pairs, bob


def kept(project, run=None) -> dict:
    found = kept_distribution.distribution(project, run)
    assert found.pop("as_of") and found.pop("updating") is False
    return found


def test_the_kept_distribution_equals_a_fresh_one_after_a_label_and_a_calibration(project, users, scored):
    pairs, bob = scored
    cache.clear()
    assert kept(project) == calibration.score_distribution(project)
    vote(pairs[2], bob, "not-aligned")
    assert kept(project) == calibration.score_distribution(project) and kept(project)["pairs"] == 3
    calibration.calibrate(project, "max-f1")
    project.refresh_from_db()
    assert kept(project) == calibration.score_distribution(project) and kept(project)["current"]["method"] == "max-f1"
    cache.clear()  # a restarted server reads the kept row
    assert kept(project) == calibration.score_distribution(project)
    with pytest.raises(calibration.CalibrationError, match="not a run of this project"):
        kept_distribution.distribution(project, 999999)
    assert not Job.objects.exists()  # a small project's: computed while it answers


def test_a_big_projects_first_distribution_is_one_jobs_and_a_change_shows_the_one_before(project, users, scored,
                                                                                          monkeypatch, api):
    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    monkeypatch.setattr(review_state, "REFRESH_EVERY_S", 0)
    pairs, bob = scored
    for _ in range(2):
        with pytest.raises(BeingComputed):
            kept_distribution.distribution(project)
    answer = api(users["rita"]).get(f"/api/projects/{project.pk}/score-distribution/")
    assert answer.status_code == 202 and answer.json()["job"]["kind"] == kept_distribution.DISTRIBUTION_JOB
    job = Job.objects.get(kind=kept_distribution.DISTRIBUTION_JOB)  # one, however often asked
    kept_distribution.distribution_job(job.pk)
    assert Job.objects.get(pk=job.pk).status == Status.SUCCEEDED
    first = kept(project)
    assert first == calibration.score_distribution(project) and first["pairs"] == 2
    vote(pairs[2], bob, "not-aligned")
    stale = kept_distribution.distribution(project)
    assert stale["updating"] is True and stale["pairs"] == 2  # the one before, said so, while a job computes anew
    kept_distribution.distribution_job(Job.objects.get(kind=kept_distribution.DISTRIBUTION_JOB, status=Status.QUEUED).pk)
    assert kept(project)["pairs"] == 3 and kept(project) == calibration.score_distribution(project)
