"""The HTTP layer: JSON answers or typed errors, idempotent requests retried, list pages followed to the end."""
from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

import httpx

try:  # orjson parses a page several times faster than json; optional
    from orjson import loads as json_loads
except ImportError:  # pragma: no cover - without orjson
    from json import loads as json_loads

from .errors import AlignappError, OtherOrigin, StillComputing, Unavailable, error_for

T = TypeVar("T")

#: From this page size on, a list reads its next page while the current one is being consumed (issue 37:
#: iterating a million pairs, the server's work on a page and the caller's on the previous one overlap).
READ_AHEAD_FROM = 1000

#: Answers after which a GET is tried again: the server (or a proxy before it) is restarting or overloaded.
RETRY_STATUSES = frozenset({502, 503, 504})

#: Seconds between two asks of an answer being computed, when the server's ``Retry-After`` says none.
COMPUTING_POLL_S = 2.0


class Http:
    """``httpx.Client`` with the API's conventions.

    Args:
        url: the server, e.g. ``http://127.0.0.1:8000``.
        token: an API token (``Authorization: Token <key>``), or None before signing in.
        timeout: seconds for one request.
        retries: how many more times a GET is tried when the server does not answer or answers
            502/503/504 (a pause of ``backoff``, doubling, between tries); POST and PATCH are sent once.
        computing_timeout: seconds :meth:`get` and :meth:`post` wait for an answer the server is computing
            (``202 Accepted`` with ``"status": "computing"``: a big project's first dashboard figures, run scores,
            comparison or export preview, which a background job computes), asking again after its
            ``Retry-After``; then :class:`~alignapp_client.StillComputing`. Callers see the answer, as before.
    """

    def __init__(self, url: str, token: str | None, *, timeout: float = 120.0, retries: int = 3,
                 backoff: float = 0.5, transport: httpx.BaseTransport | None = None,
                 computing_timeout: float = 600.0) -> None:
        self.url = url.rstrip("/")
        self.retries = retries
        self.backoff = backoff
        self.computing_timeout = computing_timeout
        headers = {"Accept": "application/json", **({"Authorization": f"Token {token}"} if token else {})}
        self.client = httpx.Client(base_url=self.url, timeout=timeout, transport=transport, follow_redirects=True,
                                   headers=headers)

    def close(self) -> None:
        self.client.close()

    def get(self, path: str, **params: Any) -> Any:
        """The JSON of ``GET path`` (a path of the API, or an absolute URL the server gave, sent as is); an answer
        being computed is waited for (``computing_timeout``)."""
        query = _query(params)
        return checked(self.computed(lambda: self._get(path, query), f"GET {path}"))

    def get_bytes(self, path: str) -> bytes:
        """The body of ``GET path`` (a download)."""
        answer = self._get(path, None)
        checked(answer, json=False)
        return answer.content

    def post(self, path: str, **kwargs: Any) -> Any:
        """The JSON of ``POST path``; an answer being computed (a read such as the export preview: nothing was
        done but start the job computing it) is asked for again until it comes (``computing_timeout``)."""
        return checked(self.computed(lambda: self.send("POST", path, **kwargs), f"POST {path}"))

    def computed(self, ask: Callable[[], httpx.Response], what: str) -> httpx.Response:
        """``ask()``'s answer, asked again after the server's ``Retry-After`` while it is ``202 Accepted`` with
        ``"status": "computing"``, for at most ``computing_timeout`` seconds (then :class:`StillComputing`, with the
        job the server named). Any other answer (a 202 of a job the request started, too) is returned as it is."""
        deadline = time.monotonic() + self.computing_timeout
        while True:
            answer = ask()
            body = _computing(answer)
            if body is None:
                return answer
            left = deadline - time.monotonic()
            if left <= 0:
                job = body.get("job") or {}
                raise StillComputing(f"{what}: still being computed after {self.computing_timeout:g} s (job #{job.get('id')}, "
                                     f"{job.get('status')}); ask again later or raise computing_timeout", status=202, payload=body)
            try:
                wait = float(answer.headers.get("Retry-After") or body.get("retry_after") or COMPUTING_POLL_S)
            except ValueError:
                wait = COMPUTING_POLL_S
            time.sleep(max(0.0, min(wait, left)))

    def patch(self, path: str, **kwargs: Any) -> Any:
        return checked(self.send("PATCH", path, **kwargs))

    def json_lines(self, method: str, path: str, **kwargs: Any) -> Iterator[Any]:
        """Each JSON value of a streamed ``application/x-ndjson`` answer, parsed as its lines arrive (an error
        answer raises its typed error before the first); sent once (no retry: a stream is not resumable)."""
        self.check_origin(path)
        try:
            with self.client.stream(method, path, **kwargs) as answer:
                if answer.status_code >= 400:
                    answer.read()
                    checked(answer)
                for line in answer.iter_lines():
                    if line:
                        yield json_loads(line)
        except httpx.TransportError as exc:
            raise Unavailable(f"{self.url} did not answer {method} {path}: {exc or type(exc).__name__}") from exc

    def pages(self, path: str, *, page_size: int | None = None, read_ahead: bool | None = None, **params: Any) -> Pages:
        """Each item of a list, a page at a time (see :class:`Pages`)."""
        return Pages(self, path, {**params, "page_size": page_size}, read_ahead=read_ahead)

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
        payload: Any = json_loads(answer.content)
    except ValueError:
        payload = answer.text
    if answer.status_code >= 400:
        fallback = f"{answer.status_code} {answer.reason_phrase} for {answer.request.method} {answer.request.url}"
        raise error_for(answer.status_code, payload, fallback)
    return payload


def _computing(answer: httpx.Response) -> dict | None:
    """The body of a "being computed" answer (``202``, ``{"status": "computing", ...}``), else None."""
    if answer.status_code != 202:
        return None
    try:
        body = json_loads(answer.content)
    except ValueError:
        return None
    return body if isinstance(body, dict) and body.get("status") == "computing" else None


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``, the default port of its scheme filled in."""
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host.lower(), port


def _query(params: dict[str, Any]) -> dict[str, Any]:
    return {k: (("true" if v else "false") if isinstance(v, bool) else v) for k, v in params.items() if v is not None}


class Pages(Iterator[T], Generic[T]):
    """The items of a list API, fetched a page at a time as they are read, following each page's ``next``
    (an absolute URL carrying the server's cursor) until the last.

    * ``len(pages)`` / ``pages.count``: the total the server counted on the first page (fetched then if
      it was not yet), without reading the rest.
    * ``page_size``: items per request (the server allows 1–1000; None: its default, 100).
    * ``read_ahead``: while the items of a page are being read, the next page is already asked for (one
      request in flight, in a background thread), so the server's work and the caller's overlap. None
      (the default): on from :data:`READ_AHEAD_FROM` items a page, where a list is being iterated
      rather than looked at; smaller pages are fetched strictly when needed.
    * An error while fetching a page (the server down past the retries, a timeout) propagates, but the
      iterator is not spent: the next ``next()`` asks for the same page again, so a loop can resume
      where it stopped without repeating or skipping an item (a page read ahead that failed is raised
      when the loop reaches it, and asked for again by the next ``next()``).

    >>> pairs = client.pairs(project, page_size=1000)   # doctest: +SKIP
    >>> len(pairs), next(pairs)["id"]                     # doctest: +SKIP
    """

    def __init__(self, http: Http, path: str, params: dict[str, Any], wrap: Callable[[Any], T] | None = None, *,
                 read_ahead: bool | None = None) -> None:
        self.http = http
        self.page_size = params.get("page_size")
        self.url: str | None = path
        self.query: dict[str, Any] | None = _query(params)
        self.wrap = wrap
        self.buffer: deque[Any] = deque()
        self.fetched = 0  # pages read
        self.seen: set[str] = set()
        self._count: int | None = None
        self.read_ahead = read_ahead if read_ahead is not None else (self.page_size or 0) >= READ_AHEAD_FROM
        self._ahead: _Ahead | None = None  # the next page, asked for in the background

    def __iter__(self) -> Pages[T]:
        return self

    def __next__(self) -> T:
        while not self.buffer:
            if self.url is None:
                raise StopIteration
            self.fetch()
        item = self.buffer.popleft()
        return self.wrap(item) if self.wrap else item

    def __len__(self) -> int:
        return self.count

    @property
    def count(self) -> int:
        """The number of items in the list (the server's total, counted when the first page was read)."""
        if self._count is None and self.fetched == 0:
            self.fetch()
        return self._count if self._count is not None else len(self.buffer)

    def map(self, wrap: Callable[[Any], Any]) -> Pages[Any]:
        """The same pages, each item passed through ``wrap`` (e.g. into a :class:`~alignapp_client.Run`)."""
        self.wrap = wrap
        return self

    def fetch(self) -> None:
        """Read the next page into the buffer; on an error nothing moves (the same page is asked again)."""
        assert self.url is not None
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead.asked == (self.url, self.query):
            page = ahead.result()  # its error, if it failed: raised here, and the next fetch asks again
        else:
            page = self._read(self.url, self.query)
        self.fetched += 1
        if isinstance(page, list):
            self.buffer.extend(page)
            self._count = len(page) if self._count is None else self._count
            self.url = None
            return
        if self._count is None and isinstance(page.get("count"), int):
            self._count = page["count"]
        self.buffer.extend(page.get("results", []))
        url = page.get("next")
        if url is not None and url in self.seen:
            raise AlignappError(f"the server gave {url} as the next page twice")
        self.seen.add(url or "")
        self.url, self.query = url, None
        if url is not None and self.read_ahead:
            self._ahead = _Ahead(self._read, url)

    def _read(self, url: str, query: dict[str, Any] | None) -> Any:
        return checked(self.http._get(url, query))


class _Ahead:
    """One page asked for in a daemon thread: :meth:`result` waits for it and returns it or raises its error."""

    def __init__(self, read: Callable[[str, None], Any], url: str) -> None:
        self.asked: tuple[str, None] = (url, None)
        self.page: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(read, url), daemon=True, name="alignapp-read-ahead")
        self.thread.start()

    def _run(self, read: Callable[[str, None], Any], url: str) -> None:
        try:
            self.page = read(url, None)
        except BaseException as exc:  # noqa: BLE001 - handed to the reader of the page, in its thread
            self.error = exc

    def result(self) -> Any:
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.page
