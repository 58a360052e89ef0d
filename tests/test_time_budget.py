"""The per-test time budget (tests/time_budget.py): over budget without ``slow`` fails and says why;
``slow`` may take longer; time spent building a fixture shared wider than the test is not the test's."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.time_budget import over_budget

ROOT = Path(__file__).resolve().parents[1]

CASES = '''
import time
import pytest

@pytest.fixture(scope="module")
def shared():
    time.sleep(0.6)  # a module's corpus, paid once

def test_quick(shared):
    pass

def test_sleeps():
    time.sleep(0.6)

@pytest.mark.slow
def test_marked_slow():
    time.sleep(0.6)

@pytest.fixture
def own():
    time.sleep(0.6)

def test_own_fixture(own):
    pass
'''


def test_over_budget_only_without_the_slow_marker():
    assert over_budget(61.0, marked_slow=False, budget=60.0)
    assert not over_budget(61.0, marked_slow=True, budget=60.0)
    assert not over_budget(59.0, marked_slow=False, budget=60.0)


def test_a_test_over_budget_fails_naming_its_time_and_the_marker(tmp_path):
    (tmp_path / "test_cases.py").write_text(CASES)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.time_budget", "-p", "no:cacheprovider", "-p", "no:django",
         "-rA", "-q", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "TEST_TIME_BUDGET_S": "0.4"})
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "PASSED test_cases.py::test_quick" in out  # the module fixture's 0.6 s is not its own
    assert "PASSED test_cases.py::test_marked_slow" in out
    assert "ERROR test_cases.py::test_sleeps" in out and "ERROR test_cases.py::test_own_fixture" in out
    assert "took 0.6 s, over the 0.4 s budget for a test without @pytest.mark.slow" in out
