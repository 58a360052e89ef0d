"""The background tests' broker: a filesystem broker in the test's folder whose messages the test reads."""
from __future__ import annotations

import json

import pytest

from tests.worker_process import app_broker


@pytest.fixture
def sent(db, tmp_path):
    """``sent()`` → the task names of the messages on the broker so far (oldest first); messages
    queued on commit go out first (the test's transaction never commits)."""
    folder = tmp_path / "broker"
    from django.db import connection

    done = [len(connection.run_on_commit)]
    with app_broker("filesystem://", folder):
        def names() -> list[str]:
            for _, callback, *_ in connection.run_on_commit[done[0]:]:
                callback()
            done[0] = len(connection.run_on_commit)
            files = sorted((folder / "out").glob("*.msg"), key=lambda f: f.stat().st_mtime_ns)
            return [json.loads(f.read_text())["headers"]["task"] for f in files]
        yield names
