"""The labelling page says when the queue is narrowed to a review of changes (issue 27 item 6: one
annotator's queue went from 760 to 281 items left and nothing on their page said why)."""
from __future__ import annotations

from annotation.models import AuditEvent
from tests.annotation.services.alignment.test_run_comparison import two_runs  # noqa: F401 (fixture)
from tests.annotation.services.review.test_queue import set_qc


def test_a_review_of_changes_is_shown_on_every_annotators_queue_page_and_recorded(api, client, users, project,
                                                                                 two_runs):  # noqa: F811
    set_qc(project)
    old, new = two_runs["old"].pk, two_runs["new"].pk
    url = f"/api/projects/{project.pk}/review-changes/"
    assert api(users["rita"]).post(url, {"old": old, "new": new}, format="json").status_code == 200
    event = AuditEvent.objects.get(action="queue.review_changes")
    assert (event.actor, event.details["old"], event.details["new"], event.details["pairs"]) == (users["rita"], old, new, 3)

    client.force_login(users["anna"])
    page = client.get(f"/projects/{project.pk}/annotate/").content.decode()
    assert f"Reviewing changes of run #{old} → #{new}, 3 items</b>" in page and "(3 left for you)" in page
    assert "set by rita" in page and "A researcher of the project can bring back the whole queue" in page
    client.force_login(users["rita"])
    page = client.get(f"/projects/{project.pk}/annotate/").content.decode()
    assert f"runs/compare/?old={old}&amp;new={new}\">Back to the whole queue</a>" in page

    assert api(users["rita"]).post(url, {"clear": True}, format="json").status_code == 200
    assert AuditEvent.objects.filter(action="queue.whole", actor=users["rita"]).exists()
    assert "Reviewing changes" not in client.get(f"/projects/{project.pk}/annotate/").content.decode()
