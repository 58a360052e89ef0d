"""The sign-in limit holds across web processes on the embedded default, without Redis (issue 30,
item 12): two processes on the same database count one username's failures together."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.core.cache import caches
from django.db import connection

ROOT = Path(__file__).resolve().parents[4]
ATTEMPTS = """
import sys
import django
django.setup()
from annotation.services.projects import accounts
tried = 0
for _ in range(int(sys.argv[1])):
    if accounts.begin_sign_in("10.0.0.1", "two-processes") == 0:
        accounts.login_failed("10.0.0.1", "two-processes")
        tried += 1
print(tried)
"""


def _database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def test_two_web_processes_share_one_failure_count(transactional_db):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "alignapp.settings", "DATABASE_URL": _database_url(),
           "LOGIN_FAILURE_LIMIT": "4", "LOGIN_ADDRESS_FAILURE_LIMIT": "0", "LOGIN_DELAY_SECONDS": "600"}
    env.pop("CACHE_URL", None)  # the embedded default: no Redis
    try:
        processes = [subprocess.Popen([sys.executable, "-c", ATTEMPTS, "6"], env=env, cwd=ROOT, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
        answers = [process.communicate(timeout=60) for process in processes]
        assert all(process.returncode == 0 for process in processes), answers
        assert sum(int(out) for out, _ in answers) == 4, answers  # per-process caches let 8 through
    finally:
        caches["limits"].clear()
