"""A researcher adjudicates disagreements with the keyboard, applies a threshold from the score
distribution chart and watches a run finish on the dashboard (real headless Chromium)."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, AlignmentRun, Membership, Project, Status
from annotation.services.review import adjudication
from tests import factories
from tests.annotation.services.review.test_adjudication import make_pairs, vote
from tests.browser.conftest import login, screenshot

pytestmark = pytest.mark.browser


@pytest.fixture
def review_project(transactional_db):
    """rita researches; anna and bob disagree on two pairs and agree on six more of one run."""
    for name in ("rita", "anna", "bob"):
        factories.make_user(name)
    project = factories.make_project("Review project", rita="researcher", anna="annotator", bob="annotator")
    anna, bob = (Membership.objects.get(project=project, user__username=n).user for n in ("anna", "bob"))
    scores = [0.62, 0.35, 0.91, 0.84, 0.87, 0.55, 0.21, 0.15]
    run = AlignmentRun.objects.create(project=project, method="wivico", status=Status.SUCCEEDED)
    pairs = make_pairs(project, len(scores), scores=scores, run=run)
    vote(pairs[0], anna, "aligned", seconds=14, comment="same facts"), vote(pairs[0], bob, "partial", seconds=22)
    vote(pairs[1], anna, "partial"), vote(pairs[1], bob, "not-aligned")
    for pair, value in zip(pairs[2:], ["aligned", "aligned", "aligned", "partial", "not-aligned", "not-aligned"]):
        vote(pair, anna, value), vote(pair, bob, value)
    return project, pairs


def test_a_researcher_adjudicates_disagreements_with_a_key_press(page, review_project):
    project, pairs = review_project
    login(page, "rita", "pw-rita")
    page.goto(f"/projects/{project.pk}/")
    page.click("#open-adjudication")
    page.locator("#item").wait_for(state="visible")
    assert page.locator("#pair-id").inner_text() == f"#{pairs[0].pk}"
    votes = page.locator("#votes tbody").inner_text()
    assert "anna" in votes and "bob" in votes and "same facts" in votes
    assert page.locator("#remaining").inner_text() == "2 to adjudicate"
    screenshot(page, "adjudicate")

    page.keyboard.press("n")
    page.keyboard.type("bob is right: a clause is dropped")
    page.keyboard.press("Escape")
    page.keyboard.press("2")  # partial
    page.locator("#pair-id", has_text=f"#{pairs[1].pk}").wait_for()  # the next one, without a reload
    gold = Adjudication.objects.get(pair=pairs[0])
    assert (gold.value, gold.provenance, gold.reviewer.username, gold.note) == (
        "partial", Adjudication.ADJUDICATED, "rita", "bob is right: a clause is dropped")

    page.click("#decision .choice[data-value='not-aligned']")
    page.locator("#done").wait_for(state="visible")
    assert Adjudication.objects.get(pair=pairs[1]).value == "not-aligned"
    assert page.locator("#remaining").inner_text() == "0 to adjudicate"


def test_a_researcher_applies_a_threshold_from_the_distribution_chart(page, review_project):
    project, pairs = review_project
    adjudication.decide(pairs[0], "aligned", project.memberships.get(role="researcher").user)
    login(page, "rita", "pw-rita")
    page.goto(f"/projects/{project.pk}/dashboard/")
    # the vendor scripts (make setup) loaded and Chart.js drew the box plot on the canvas
    page.wait_for_function("() => window.Chart && Chart.getChart(document.querySelector('#score-chart'))")
    types = page.evaluate("() => Chart.getChart(document.querySelector('#score-chart')).data.datasets.map(d => d.type)")
    assert types[0] == "boxplot" and "line" in types
    assert page.locator("#chart-message").is_hidden()
    assert "anna" in page.locator("#annotators").inner_text()
    assert page.locator("#agreement-summary .kappa").first.inner_text() != ""
    row = page.locator("#thresholds tr[data-method='mean-valid']")
    expected = (0.62 + 0.91 + 0.84 + 0.87) / 4  # 0.81
    row.locator(".aligned", has_text=f"{expected:.3f}").wait_for()
    row.locator("button.apply").click()
    page.locator("#stored-thresholds .value", has_text=f"{expected:.4f}").wait_for()
    project.refresh_from_db()
    assert project.config["thresholds"]["method"] == "mean-valid"
    assert project.config["thresholds"]["aligned"] == pytest.approx(expected)
    screenshot(page, "dashboard")


def test_wivicos_rule_is_not_offered_for_a_run_of_another_method(page, review_project):
    project, pairs = review_project
    AlignmentRun.objects.filter(project=project).update(method="jaccard")
    adjudication.decide(pairs[0], "aligned", project.memberships.get(role="researcher").user)
    login(page, "rita", "pw-rita")
    page.goto(f"/projects/{project.pk}/dashboard/")
    row = page.locator("#thresholds tr[data-method='mean-valid']")
    row.locator(".basis", has_text="WIVICO's rule is for wivico runs").wait_for()
    assert row.locator("button.apply").is_disabled()
    assert page.locator("#thresholds tr[data-method='max-f1'] button.apply").is_enabled()


def test_the_dashboard_shows_a_runs_progress_until_it_finishes(page, review_project):
    project, _ = review_project
    run = AlignmentRun.objects.create(project=project, method="sbert", status=Status.RUNNING, progress=40,
                                      message="embedding")
    login(page, "rita", "pw-rita")
    page.goto(f"/projects/{project.pk}/dashboard/")
    row = page.locator(f"#runs tr[data-run='{run.pk}']")
    assert row.locator(".status").inner_text() == "running"
    AlignmentRun.objects.filter(pk=run.pk).update(status=Status.SUCCEEDED, progress=100, pair_count=12, message="done")
    row.locator(".status", has_text="succeeded").wait_for()
    assert row.locator(".pct").inner_text() == "100%" and row.locator(".pairs").inner_text() == "12"


def test_an_annotator_cannot_open_the_review_pages(page, review_project):
    project, _ = review_project
    login(page, "anna", "pw-anna")
    assert page.goto(f"/projects/{project.pk}/adjudicate/").status == 403
    assert page.goto(f"/projects/{project.pk}/dashboard/").status == 403
    page.goto(f"/projects/{project.pk}/")
    assert page.locator("#open-dashboard").count() == 0
    assert Project.objects.count() == 1


def test_adjudication_revert_a_researcher_changes_a_decided_pair_sees_its_history_and_reverts(page, review_project):
    project, pairs = review_project
    rita = project.memberships.get(role="researcher").user
    adjudication.decide(pairs[0], "aligned", rita, "same facts")
    login(page, "rita", "pw-rita")
    page.goto(f"/projects/{project.pk}/adjudicate/")
    page.locator(f"#decided tr[data-pair='{pairs[0].pk}']").wait_for()
    page.locator("#remaining", has_text="1 to adjudicate").wait_for()

    page.click(f"#decided tr[data-pair='{pairs[0].pk}'] button.open")
    page.locator("#opened-bar").wait_for(state="visible")
    assert page.locator("#pair-id").inner_text() == f"#{pairs[0].pk}"
    assert "Revert (remove the gold)" in page.locator("#revert").inner_text()

    page.keyboard.press("2")  # change the gold to partial
    page.locator("#history tbody tr[data-action='change']").wait_for()
    assert Adjudication.objects.get(pair=pairs[0]).value == "partial"
    assert page.locator("#revert").inner_text() == "Revert to Aligned (adjudicated)"
    rows = page.locator("#history tbody tr")
    assert rows.count() == 2 and "rita" in rows.nth(1).inner_text()
    screenshot(page, "adjudication-history")

    page.click("#revert")
    page.locator("#history tbody tr[data-action='revert']").wait_for()
    gold = Adjudication.objects.get(pair=pairs[0])
    assert (gold.value, gold.note) == ("aligned", "same facts")
    assert "reverted: Aligned (adjudicated)" in page.locator("#status").inner_text()

    page.click("#revert")  # the first decision: reverting it takes the gold away
    page.locator("#revert-none").wait_for(state="visible")
    assert not Adjudication.objects.filter(pair=pairs[0]).exists()
    assert page.locator("#remaining").inner_text() == "2 to adjudicate"
    page.locator(f"#decided tr[data-pair='{pairs[0].pk}']", has_text="no gold").wait_for()
    page.keyboard.press("Escape")  # back to the queue, where the pair is again
    page.locator("#opened-bar").wait_for(state="hidden")
    assert page.locator("#pair-id").inner_text() == f"#{pairs[0].pk}"


def test_majority_as_gold_says_how_many_items_it_decides_and_asks_first(page, review_project):
    project, pairs = review_project
    login(page, "rita", "pw-rita")
    page.goto(f"/projects/{project.pk}/adjudicate/")
    page.locator("#item").wait_for(state="visible")
    questions = []

    def answer(accept):
        def handler(dialog):
            questions.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()
        return handler

    page.once("dialog", answer(False))
    page.click("#auto-gold [data-policy='majority']")
    page.locator("#auto-gold-result", has_text="Cancelled").wait_for()
    assert questions == ["This will decide 6 items (0 updated, 0 removed). Continue?"]
    assert not Adjudication.objects.exists()

    page.once("dialog", answer(True))
    page.click("#auto-gold [data-policy='majority']")
    page.locator("#auto-gold-result", has_text="6 created").wait_for()
    assert Adjudication.objects.filter(provenance=Adjudication.MAJORITY).count() == 6
    page.click("#auto-gold [data-policy='majority']")  # nothing left: no question
    page.locator("#auto-gold-result", has_text="Nothing to decide").wait_for()
    assert len(questions) == 2


def test_a_big_projects_first_dashboard_says_computing_and_shows_the_figures_once_the_job_ran(page, review_project,
                                                                                                monkeypatch):
    """Issue 37: nothing computed while the page answers; its script polls the API (202) and reloads once kept."""
    from annotation.models import Job
    from annotation.services.review import dashboard, review_state

    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    project, _ = review_project
    login(page, "rita", "pw-rita")
    page.goto(f"/projects/{project.pk}/dashboard/")
    assert "Computing the figures" in page.locator("#figures-computing").inner_text()
    assert page.locator("#annotators").count() == 0
    dashboard.run_figures_job(Job.objects.get(kind=dashboard.FIGURES_JOB).pk)  # as a worker runs it
    page.locator("#annotators").wait_for(state="visible", timeout=15_000)  # the page reloaded by itself
    assert page.locator("#figures-computing").count() == 0 and "anna" in page.locator("#annotators").inner_text()
