"""The HTTP layer: JSON answers or typed errors, idempotent requests retried, list pages followed to the end."""
from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx

from .errors import AlignappError, OtherOrigin, Unavailable, error_for

#: Answers after which a GET is tried again: the server (or a proxy before it) is restarting or overloaded.
RETRY_STATUSES = frozenset({502, 503, 504})


class Http:
    """``httpx.Client`` with the API's conventions.

    Args:
        url: the server, e.g. ``http://127.0.0.1:8000``.
        token: an API token (``Authorization: Token <key>``), or None before signing in.
        timeout: seconds for one request.
        retries: how many more times a GET is tried when the server does not answer or answers
            502/503/504 (a pause of ``backoff``, doubling, between tries); POST and PATCH are sent once.
    """

    def __init__(self, url: str, token: str | None, *, timeout: float = 120.0, retries: int = 3,
                 backoff: float = 0.5, transport: httpx.BaseTransport | None = None) -> None:
        self.url = url.rstrip("/")
        self.retries = retries
        self.backoff = backoff
        headers = {"Accept": "application/json", **({"Authorization": f"Token {token}"} if token else {})}
        self.client = httpx.Client(base_url=self.url, timeout=timeout, transport=transport, follow_redirects=True,
                                   headers=headers)

    def close(self) -> None:
        self.client.close()

    def get(self, path: str, **params: Any) -> Any:
        """The JSON of ``GET path`` (a path of the API, or an absolute URL the server gave, sent as is)."""
        return checked(self._get(path, _query(params)))

    def get_bytes(self, path: str) -> bytes:
        """The body of ``GET path`` (a download)."""
        answer = self._get(path, None)
        checked(answer, json=False)
        return answer.content

    def post(self, path: str, **kwargs: Any) -> Any:
        return checked(self.send("POST", path, **kwargs))

    def patch(self, path: str, **kwargs: Any) -> Any:
        return checked(self.send("PATCH", path, **kwargs))

    def pages(self, path: str, **params: Any) -> Iterator[Any]:
        """Each item of a list, a page at a time: ``results`` of each page, following ``next`` (an
        absolute URL carrying its own query string) until the last page."""
        url: str | None = path
        query: dict[str, Any] | None = _query(params)
        seen: set[str] = set()
        while url:
            page = checked(self._get(url, query))
            if isinstance(page, list):
                yield from page
                return
            yield from page.get("results", [])
            url, query = page.get("next"), None
            if url in seen:
                raise AlignappError(f"the server gave {url} as the next page twice")
            seen.add(url or "")

    def send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request; a server that does not answer raises :class:`Unavailable`, a URL on another
        origin than the client's :class:`OtherOrigin` (before anything, the token included, is sent)."""
        self.check_origin(path)
        try:
            return self.client.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise Unavailable(f"{self.url} did not answer {method} {path}: {exc or type(exc).__name__}") from exc

    def check_origin(self, path: str) -> None:
        """Refuse an absolute URL whose scheme, host or port differ from the client's server."""
        target = httpx.URL(path)
        if not target.is_absolute_url:
            return
        if origin(target) != origin(httpx.URL(self.url)):
            raise OtherOrigin(f"the server pointed to {path}, on another origin than {self.url}; "
                              "the client sends its requests (and token) only to the server it was created with")

    def _get(self, path: str, params: dict[str, Any] | None) -> httpx.Response:
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                answer = self.send("GET", path, params=params)
            except Unavailable:
                if last:
                    raise
            else:
                if answer.status_code not in RETRY_STATUSES or last:
                    return answer
            time.sleep(self.backoff * 2 ** attempt)
        raise AssertionError("unreachable")  # pragma: no cover


def checked(answer: httpx.Response, *, json: bool = True) -> Any:
    """The JSON of a successful answer; the error of its status (:mod:`.errors`) with the server's message."""
    if answer.status_code < 400 and not json:
        return None
    try:
        payload: Any = answer.json()
    except ValueError:
        payload = answer.text
    if answer.status_code >= 400:
        fallback = f"{answer.status_code} {answer.reason_phrase} for {answer.request.method} {answer.request.url}"
        raise error_for(answer.status_code, payload, fallback)
    return payload


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``, the default port of its scheme filled in."""
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host.lower(), port


def _query(params: dict[str, Any]) -> dict[str, Any]:
    return {k: (("true" if v else "false") if isinstance(v, bool) else v) for k, v in params.items() if v is not None}
