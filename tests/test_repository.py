"""Running the app, its worker or the tests writes nothing into the work tree: every runtime output
(SQLite file, media, models, static files, kombu's broker folders including its ``control`` exchange
tables) lands under ``var/``, which git ignores, and nothing there or in ``./control`` is tracked."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import require_service

ROOT = Path(__file__).resolve().parents[1]
# variables that move runtime output; the checks below run on the defaults, so they are dropped
RUNTIME_ENV = ("ALIGNAPP_VAR_DIR", "DATABASE_URL", "MEDIA_ROOT", "STATIC_ROOT", "MODEL_ROOT", "CELERY_BROKER_URL",
               "CELERY_BROKER_DIR", "REDIS_URL", "ALIGNAPP_ENV", "SECRET_KEY")


def git(*args: str) -> str:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        require_service("not a git checkout (git ls-files / check-ignore need one)")
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in RUNTIME_ENV}
    return {**env, "DJANGO_SETTINGS_MODULE": "alignapp.settings", "PYTHONPATH": str(ROOT), **extra}


def test_nothing_under_var_or_control_is_tracked_and_both_are_ignored():
    assert git("ls-files", "var", "control") == ""
    ignored = git("check-ignore", "var/broker/control/x.exchange", "var/alignapp.sqlite3", "control/x.exchange").split()
    assert ignored == ["var/broker/control/x.exchange", "var/alignapp.sqlite3", "control/x.exchange"]


def test_every_default_runtime_path_resolves_under_var():
    code = """if True:
        import json, django
        django.setup()
        from django.conf import settings
        from alignapp.celery import app
        app.loader.import_default_modules()
        paths = {"sqlite": str(settings.DATABASES["default"]["NAME"]), "media": str(settings.MEDIA_ROOT),
                 "models": str(settings.MODEL_ROOT), "static": str(settings.STATIC_ROOT),
                 "broker": str(settings.CELERY_BROKER_DIR)}
        paths.update({k: v for k, v in app.conf.broker_transport_options.items() if k.endswith("folder")
                      or k.startswith("data_folder")})
        print(json.dumps({"url": app.conf.broker_url, "paths": paths}))"""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=clean_env())
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["url"].startswith("filesystem")  # the embedded default: kombu's folders are in play
    assert {"data_folder_in", "data_folder_out", "processed_folder", "control_folder"} <= set(found["paths"])
    outside = {k: p for k, p in found["paths"].items() if not Path(p).resolve().is_relative_to(ROOT / "var")}
    assert outside == {}


@pytest.mark.services
@pytest.mark.slow
def test_a_worker_running_a_job_writes_nothing_outside_its_var_dir(transactional_db, tmp_path):
    """A real worker, started in an empty directory on the embedded broker, runs a real job: afterwards
    that directory holds only ``var/`` (kombu's default ``./control`` would show up beside it)."""
    from django.db import transaction

    from annotation.management.commands.run_demo import stop_process
    from annotation.models import Job, Status
    from annotation.services.background import jobs
    from tests import factories
    from tests.worker_process import app_broker, database_url, wait_for

    tree = tmp_path / "tree"
    tree.mkdir()
    var = tree / "var"
    log = tmp_path / "worker.log"
    env = clean_env(ALIGNAPP_VAR_DIR=str(var), DATABASE_URL=database_url(), HF_HUB_OFFLINE="1")
    cmd = [sys.executable, "-m", "celery", "-A", "alignapp", "worker", "-Q", "cpu,gpu", "--pool", "threads",
           "--concurrency", "1", "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel", "INFO"]
    with open(log, "ab") as out:
        worker = subprocess.Popen(cmd, cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while "ready." not in log.read_text(errors="replace"):
            assert worker.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.3)
        assert any((var / "broker" / "control").iterdir())  # the worker's exchange tables went to var/broker/control
        rita = factories.make_user("rita", researcher=True)
        project = factories.make_project("Stats", rita="researcher")
        factories.make_article(project, "Bees", {"adv": [["Bees make honey."]], "ele": [["Bees make food."]]})
        with app_broker("filesystem://", var / "broker"), transaction.atomic():
            job = jobs.start_job(project, "corpus-stats", user=rita)
        wait_for(lambda: Job.objects.get(pk=job.pk).is_finished, 60, log, "the stats job")
        assert Job.objects.get(pk=job.pk).status == Status.SUCCEEDED
    finally:
        stop_process(worker)
    assert sorted(p.name for p in tree.iterdir()) == ["var"]
