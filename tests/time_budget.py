"""A time budget per test: a test that runs longer than ``TEST_TIME_BUDGET_S`` (60 s) without the ``slow``
marker fails, naming its time, so a new slow test shows up the day it arrives instead of as a slower CI.

Loaded with ``-p tests.time_budget`` (pytest.ini). The budget counts the test's own setup, call and
teardown, less the set-up of fixtures shared wider than the test (a session's browser, a module's corpus):
those are paid once, by whichever test happens to come first.
"""
from __future__ import annotations

import os
import time

import pytest

DEFAULT_BUDGET_S = 60.0


def budget_s() -> float:
    return float(os.environ.get("TEST_TIME_BUDGET_S", DEFAULT_BUDGET_S))


def over_budget(seconds: float, marked_slow: bool, budget: float) -> bool:
    return not marked_slow and seconds > budget


_wide_setup_s = 0.0  # set-up time of fixtures wider than a test, during the current test's set-up


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest):
    global _wide_setup_s
    start = time.perf_counter()
    yield
    if fixturedef.scope != "function":
        _wide_setup_s += time.perf_counter() - start


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    global _wide_setup_s
    outcome = yield
    report = outcome.get_result()
    own = call.duration
    if report.when == "setup":
        own, _wide_setup_s = max(0.0, own - _wide_setup_s), 0.0
        item._budget_spent, item._budget_clean = 0.0, True
    item._budget_spent = getattr(item, "_budget_spent", 0.0) + own
    item._budget_clean = getattr(item, "_budget_clean", True) and report.passed
    if report.when != "teardown" or not item._budget_clean:
        return
    spent, budget = item._budget_spent, budget_s()
    if over_budget(spent, item.get_closest_marker("slow") is not None, budget):
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} took {spent:.1f} s, over the {budget:g} s budget for a test without "
                           "@pytest.mark.slow: make it cheaper (smaller input, shared fixture) or mark it slow")
