"""Handles on server-side work (alignment runs, background jobs, exports): poll, show progress, wait."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .errors import AlignappError, JobFailed

if TYPE_CHECKING:
    from pathlib import Path

    from .client import Client

#: Statuses after which the server changes nothing more.
FINISHED = frozenset({"succeeded", "failed", "cancelled"})


class Handle:
    """Work the server runs: an alignment run, a background job (import, training, scoring) or an export.

    ``data`` is the latest answer of its status endpoint (``GET /api/runs/<id>/``, ``/api/jobs/<id>/``
    or ``/api/projects/<p>/exports/<id>/``): ``status``, ``progress`` (0-100), ``message``, and once it
    finished ``result`` (or ``error``).
    """

    kind = "job"

    def __init__(self, client: Client, data: dict[str, Any], status_url: str | None) -> None:
        self.client = client
        self.data: dict[str, Any] = data
        self.status_url = status_url

    @property
    def id(self) -> int | None:
        """The run's, job's or export's id (None for an import that was done at once)."""
        return self.data.get("id")

    @property
    def status(self) -> str:
        return str(self.data.get("status", "succeeded"))

    @property
    def progress(self) -> float:
        return float(self.data.get("progress") or 0.0)

    @property
    def message(self) -> str:
        return str(self.data.get("message") or "")

    @property
    def done(self) -> bool:
        return self.status in FINISHED

    @property
    def result(self) -> dict[str, Any]:
        return dict(self.data.get("result") or {})

    def refresh(self) -> dict[str, Any]:
        """Ask the server for the current state (no-op once finished)."""
        if self.status_url is not None and not self.done:
            self.data = self.client.get(self.status_url)
        return self.data

    def cancel(self) -> dict[str, Any]:
        """Stop queued or running work (``POST .../cancel/``)."""
        if self.status_url is None:
            raise AlignappError("this work finished before the server answered; nothing to cancel")
        self.data = self.client.post(self.status_url.rstrip("/") + "/cancel/", json={})
        return self.data

    def wait(self, *, timeout: float | None = None, poll: float | None = None, progress: bool | None = None) -> dict[str, Any]:
        """Poll the status endpoint until the work finishes, with a progress bar (``tqdm.auto``: a
        terminal bar or a notebook widget).

        Args:
            timeout: seconds to wait at most (default: no limit); then :class:`TimeoutError`.
            poll: seconds between two polls (default: the client's ``poll_interval``).
            progress: show the bar (default: the client's ``progress``).

        Returns:
            The final state (``data``), e.g. ``result`` with the job's counts.

        Raises:
            JobFailed: the work failed or was cancelled; the message is the server's.
            TimeoutError: still running after ``timeout`` seconds.
        """
        show = self.client.progress if progress is None else progress
        interval = self.client.poll_interval if poll is None else poll
        deadline = None if timeout is None else time.monotonic() + timeout
        bar = self._bar() if show else None
        try:
            while True:
                self.refresh()
                if bar is not None:
                    bar.update(max(0.0, min(100.0, self.progress) - bar.n))
                    if self.message:
                        bar.set_postfix_str(self.message[:60], refresh=True)
                if self.done:
                    break
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"{self.describe()} still {self.status} after {timeout} s: {self.message}")
                time.sleep(interval)
        finally:
            if bar is not None:
                bar.close()
        if self.status != "succeeded":
            raise JobFailed(self.failure(), status=self.status, payload=self.data)
        return self.data

    def failure(self) -> str:
        """The server's explanation of a failed or cancelled run or job."""
        problems = self.result.get("problems") or []
        reason = str(self.data.get("error") or "").strip() or self.message or self.status
        if problems:
            reason += "\n" + "\n".join(str(p) for p in problems)
        return f"{self.describe()} {self.status}: {reason}"

    def describe(self) -> str:
        return f"{self.kind} #{self.id}" if self.id is not None else self.kind

    def _bar(self):
        from tqdm.auto import tqdm

        return tqdm(total=100.0, desc=self.describe(), unit="%",
                    bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}] {postfix}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()} {self.status} {self.progress:.0f}%>"


class RunHandle(Handle):
    """An alignment run (``/api/runs/<id>/``): ``result``, ``pair_count`` and ``timings`` once done."""

    kind = "run"

    @property
    def pair_count(self) -> int:
        return int(self.data.get("pair_count") or 0)


class JobHandle(Handle):
    """A background job (``/api/jobs/<id>/``): an import, a training, a scoring job."""

    kind = "job"

    def describe(self) -> str:
        kind = self.data.get("kind")
        return f"{kind} job #{self.id}" if kind and self.id is not None else super().describe()

    @property
    def model_version(self) -> int | None:
        """A finished training job's new model version."""
        return self.result.get("model_version")


class ImportHandle(JobHandle):
    """An import: done at once for small uploads (``data`` has the counts and ``gold_summary``), else a
    background ``import`` job whose ``result`` has them once it finished."""

    kind = "import"

    @property
    def summary(self) -> dict[str, Any]:
        """The counts: ``articles``, ``documents``, ``sentences``, ``pairs``, ``gold_summary``, ..."""
        return self.result if self.status_url is not None else self.data


class ExportHandle(Handle):
    """An export (``/api/projects/<p>/exports/<id>/``): ``pairs``, ``counts`` and a zip to download."""

    kind = "export"

    def download(self, path: str | Path) -> Path:
        """Write the finished export's zip to ``path`` (a file, or a folder to put it in)."""
        from pathlib import Path

        if not self.done:
            self.wait()
        url = self.data.get("download_url")
        if not url:
            raise AlignappError(f"{self.describe()} has no archive to download")
        target = Path(path)
        if target.is_dir():
            target = target / f"export-{self.id}.zip"
        target.write_bytes(self.client.get_bytes(url))
        return target
