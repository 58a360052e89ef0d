"""docker-compose.yml: the production services, their wiring, and (where a client exists) validation."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

COMPOSE = Path(__file__).resolve().parents[1] / "docker-compose.yml"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_it_defines_the_five_production_services(compose):
    assert set(compose["services"]) == {"postgres", "redis", "web", "worker-cpu", "worker-gpu"}
    assert all("healthcheck" in service for service in compose["services"].values())


def test_the_workers_consume_one_queue_each_and_the_gpu_worker_reserves_a_gpu(compose):
    services = compose["services"]
    assert services["worker-cpu"]["command"][services["worker-cpu"]["command"].index("-Q") + 1] == "cpu"
    assert services["worker-gpu"]["command"][services["worker-gpu"]["command"].index("-Q") + 1] == "gpu"
    devices = services["worker-gpu"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"]


def test_the_app_runs_in_production_mode_against_postgres_and_redis(compose):
    env = compose["services"]["web"]["environment"]
    assert env["ALIGNAPP_ENV"] == "production"
    assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:5432/" in env["DATABASE_URL"]
    assert env["CELERY_BROKER_URL"] == "redis://redis:6379/0"
    assert {"pgdata", "models"} <= set(compose["volumes"])


def test_docker_compose_config_validates_the_file():
    client = None
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        client = ["docker", "compose"]
    elif shutil.which("docker-compose"):
        client = ["docker-compose"]
    if client is None:
        pytest.skip("no docker compose client installed (apt-get install docker-compose)")
    env = {**os.environ, "SECRET_KEY": "validate-only", "POSTGRES_PASSWORD": "validate-only"}
    result = subprocess.run([*client, "-f", str(COMPOSE), "config", "-q"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
