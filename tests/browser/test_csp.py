"""The Content-Security-Policy holds in a real browser: every page of the app loads, runs its scripts
and styles, and Chromium reports no violation (a blocked inline script or style would be one)."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, Status
from annotation.services.corpus.demo import ensure_demo
from tests.browser.conftest import login

pytestmark = pytest.mark.browser

# collects every violation the page reports, before any of its own scripts run
LISTEN = """window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => window.__cspViolations.push(
  `${e.violatedDirective} blocked ${e.blockedURI || "inline"} (${e.sourceFile}:${e.lineNumber})`));"""


def _pages(project, article, run) -> list[str]:
    p = project.pk
    return [
        "/", f"/projects/{p}/", f"/projects/{p}/annotate/", f"/projects/{p}/my-labels/", f"/articles/{article.pk}/",
        f"/articles/{article.pk}/align/", f"/articles/{article.pk}/paragraphs/", f"/projects/{p}/runs/{run.pk}/",
        f"/projects/{p}/dashboard/", f"/projects/{p}/adjudicate/", f"/projects/{p}/export/", f"/projects/{p}/settings/",
        f"/projects/{p}/models/", f"/projects/{p}/runs/compare/", f"/projects/{p}/import/", "/people/", "/account/",
        "/no-such-page/", "/admin/", "/admin/auth/user/", f"/admin/annotation/project/{p}/change/",
        "/api/projects/",  # DRF's browsable API
    ]


def test_no_page_breaks_the_content_security_policy(page, transactional_db):
    project, _ = ensure_demo()
    article = project.articles.order_by("title").first()
    run = AlignmentRun.objects.create(project=project, method="tfidf", status=Status.FAILED, error="boom")
    page.add_init_script(LISTEN)
    console = []
    page.on("console", lambda msg: console.append(f"{page.url}: {msg.text}") if msg.type in ("error", "warning") else None)
    page.on("pageerror", lambda exc: console.append(f"{page.url}: {exc}"))

    page.goto("/login/")
    assert page.evaluate("window.__cspViolations") == []
    login(page, "admin", "admin")
    violations = []
    for url in _pages(project, article, run):
        response = page.goto(url)
        assert "default-src 'self'" in response.headers["content-security-policy"], url
        page.wait_for_load_state("networkidle")
        violations += [f"{url}: {v}" for v in page.evaluate("window.__cspViolations")]
    assert not violations, "\n".join(violations)
    assert not [line for line in console if "Content Security Policy" in line or "Content-Security-Policy" in line], console


def test_the_labelling_page_still_works_under_the_policy(page, transactional_db):
    """Its module script runs (it shows the item, or that the queue is done): script-src 'self' is enough."""
    project, _ = ensure_demo()
    page.add_init_script(LISTEN)
    login(page, "annotator", "annotator")
    page.goto(f"/projects/{project.pk}/annotate/")
    page.locator("#item:not([hidden]), #done:not([hidden])").first.wait_for()
    assert page.evaluate("window.__cspViolations") == []
