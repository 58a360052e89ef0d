"""Fixtures of the client tests: a researcher with an API token, a live server with a real worker."""
from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

from annotation.services.projects.accounts import issue_token
from tests import factories
from tests.worker_process import app_broker, running_worker

# this checkout's client, not the one the shared virtualenv installed in editable mode from another checkout
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "client"))


@pytest.fixture
def researcher(transactional_db):
    user = factories.make_user("rita", researcher=True)
    return user, issue_token(user).key


@pytest.fixture
def server(live_server, researcher, settings, tmp_path):
    """``(url, token, worker log)``: the live server, a worker on the filesystem broker sharing its media folder."""
    media = tmp_path / "media"
    settings.MEDIA_ROOT = media
    folder = tmp_path / "broker"
    with app_broker("filesystem://", folder), running_worker("filesystem://", tmp_path, folder,
                                                            env={"MEDIA_ROOT": str(media)}) as (_, log):
        yield live_server.url, researcher[1], log


class Counting(httpx.HTTPTransport):
    """httpx's own transport, counting the requests sent; past ``most`` it refuses to send more (the
    first client refetched page 1 forever, so a test of it stopped only here)."""

    def __init__(self, most: int = 200) -> None:
        super().__init__()
        self.requests: list[str] = []
        self.most = most

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(f"{request.method} {request.url}")
        if len(self.requests) > self.most:
            raise RuntimeError(f"more than {self.most} requests: {self.requests[-3:]}")
        return super().handle_request(request)
