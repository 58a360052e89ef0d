"""A big project's first figures come from a background job (issue 37): the server answers ``202 Accepted`` with
``"status": "computing"`` meanwhile, and the client asks again after each ``Retry-After`` until they come, so its
callers see the figures as before — or, past ``computing_timeout``, a clear :class:`StillComputing`."""
from __future__ import annotations

import pytest
from alignapp_client import Client, StillComputing

from annotation.models import Adjudication, CandidatePair, Job, Status, indices_key
from annotation.services.review import dashboard, review_state
from tests import factories
from tests.client.conftest import Counting


@pytest.fixture
def big(researcher, monkeypatch):
    """A project the server treats as big (``LAZY_ARTICLES`` 1): its first figures are left to a job."""
    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    project = factories.make_project("Big", rita="researcher")
    for a in range(2):
        article = factories.make_article(project, f"a{a}", {"0": [["Complex one here."]], "1": [["Simple one."]]})
        docs = {d.level: d for d in article.documents.all()}
        pair = CandidatePair.objects.create(article=article, complex_document=docs["0"], simple_document=docs["1"],
                                            complex_key=indices_key([0]), simple_key=indices_key([0]))
        Adjudication.objects.create(pair=pair, value="aligned", provenance="adjudicated")
    return project


def test_the_client_waits_for_figures_a_job_computes_and_gives_them_as_before(server, big, monkeypatch):
    url, token, _ = server
    monkeypatch.setattr("annotation.errors.BeingComputed.retry_after_s", 1)
    counted = Counting()
    figures = Client(url, token, transport=counted, computing_timeout=120).get(f"/api/projects/{big.pk}/dashboard/")
    assert figures["progress"]["pairs"] == 2 and figures["progress"]["gold"] and figures["updating"] is False
    assert len(counted.requests) >= 2  # a 202 first, then the figures the real worker's job kept
    assert Job.objects.get(kind=dashboard.FIGURES_JOB).status == Status.SUCCEEDED  # one job


def test_past_its_timeout_the_client_says_what_is_still_being_computed(live_server, researcher, big):
    """No worker here: the job stays queued."""
    client = Client(live_server.url, researcher[1], computing_timeout=0.2)
    with pytest.raises(StillComputing, match=r"still being computed after 0.2 s \(job #\d+, queued\)") as waited:
        client.get(f"/api/projects/{big.pk}/dashboard/")
    assert waited.value.status == 202 and waited.value.payload["job"]["kind"] == dashboard.FIGURES_JOB
    with pytest.raises(StillComputing):
        client.post(f"/api/projects/{big.pk}/exports/preview/", json={})
    assert Job.objects.filter(status=Status.QUEUED).count() == 2  # one each, however often asked
