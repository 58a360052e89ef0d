"""The client sends its token only to the origin it was created with (issue 30, item 8): a server that
answers with ``next`` / ``status_url`` on another port gets a typed error, and the other port gets nothing."""
from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from alignapp_client import Client, OtherOrigin


def _serve(answer) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A tiny server on 127.0.0.1 answering ``answer(path)`` as JSON, recording each request's headers."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def _reply(self) -> None:
            seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
            body = json.dumps(answer(self.path)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _reply

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def elsewhere():
    """The other origin: records what arrives, answers an empty last page or a finished export."""
    yield from _serve(lambda path: {"results": [], "next": None, "id": 1, "status": "succeeded"})


@pytest.fixture
def home(elsewhere):
    """The client's server: its project list's ``next`` and its export's ``status_url`` point elsewhere."""
    other, _ = elsewhere

    def answer(path: str) -> dict:
        if path.startswith("/api/projects/1/exports/"):
            return {"id": 7, "status": "queued", "status_url": f"{other}/api/projects/1/exports/7/"}
        return {"results": [{"id": 1, "name": "p"}], "next": f"{other}/api/projects/?page=2"}

    yield from _serve(answer)


def test_it_refuses_a_next_page_on_another_origin_without_sending_the_token(home, elsewhere):
    url, _ = home
    with Client(url, "secret-token", progress=False) as client, pytest.raises(OtherOrigin, match="another origin"):
        list(client.projects())
    assert elsewhere[1] == []


def test_it_refuses_a_status_url_on_another_origin_without_sending_the_token(home, elsewhere):
    url, seen = home
    with Client(url, "secret-token", progress=False, poll_interval=0.01) as client:
        export = client.export(1)
        with pytest.raises(OtherOrigin):
            export.wait(timeout=5)
    assert elsewhere[1] == []
    assert seen and all(request["authorization"] == "Token secret-token" for request in seen)


def test_the_same_origin_written_differently_is_still_home(home):
    url, seen = home
    with Client(url + "/", "secret-token", progress=False) as client:
        client.get(url.replace("http://", "HTTP://") + "/api/projects/1/exports/7/")
    assert seen[-1]["authorization"] == "Token secret-token"
