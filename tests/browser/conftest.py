"""Real headless Chromium (Debian's) driven by Playwright against pytest-django's live server."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import require_service

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


@pytest.fixture(scope="session")
def chromium():
    path = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        require_service("Chromium not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


# The labelling page shows the project's guidelines on a first visit; tests about labelling start as an
# annotator who has read them (a test that asks for the ``unread_guidelines`` fixture sees them).
GUIDELINES_READ = """(() => {
  const getItem = Storage.prototype.getItem;
  Storage.prototype.getItem = function (key) {
    const cfg = document.getElementById("annotate-config");
    if (String(key).startsWith("alignapp.guidelines.") && cfg) return JSON.parse(cfg.textContent).guidelines_version;
    return getItem.call(this, key);
  };
})();"""


@pytest.fixture
def unread_guidelines():
    """Ask for this in a browser test to see the labelling page as an annotator's very first visit."""


@pytest.fixture
def page(chromium, live_server, request):
    context = chromium.new_context(viewport={"width": 1366, "height": 800}, base_url=live_server.url)
    context.set_default_timeout(15000)
    if "unread_guidelines" not in request.fixturenames:
        context.add_init_script(GUIDELINES_READ)
    page = context.new_page()
    yield page
    context.close()


def login(page, username: str, password: str) -> None:
    page.goto("/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url("**/")


def screenshot(page, name: str, *, full_page: bool = True) -> Path:
    """Save ``var/screenshots/<name>.png`` (git-ignored); README pictures are copied from there by hand into
    ``frontend/screenshots/``. ``full_page=False``: just the 1366×800 viewport, the size the README wants."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
