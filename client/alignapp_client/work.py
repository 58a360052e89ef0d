"""Work the server does for you: alignment runs, background jobs (imports, training), exports.

Each object polls its status endpoint; ``wait()`` shows a progress bar and returns what the work
made, the same whether it ran at once or in the background:

* :class:`Run` — ``wait()`` returns the finished run; ``run.scores()``, ``run.pairs()``.
* :class:`Job` (and :class:`Import`) — ``wait()`` returns the job's result: an import's counts, a
  training's ``model_version``, ...
* :class:`Export` — ``wait()`` returns the finished export; ``export.download(folder)``.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import AlignappError, JobFailed, plain

if TYPE_CHECKING:
    from .client import Client

#: Statuses after which the server changes nothing more.
FINISHED = frozenset({"succeeded", "failed", "cancelled"})


class Work:
    """Server-side work; ``data`` is the latest answer of its status endpoint (``status``,
    ``progress`` 0-100, ``message``, and once finished ``result`` or ``error``). ``work["key"]`` reads it."""

    kind = "job"

    def __init__(self, client: Client, data: dict[str, Any], status_url: str | None) -> None:
        self.client = client
        self.data: dict[str, Any] = data
        self.status_url = status_url

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

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
        return plain(str(self.data.get("message") or ""))

    @property
    def done(self) -> bool:
        return self.status in FINISHED

    @property
    def result(self) -> dict[str, Any]:
        return dict(self.data.get("result") or {})

    #: query parameters of a poll (:meth:`refresh`)
    poll_params: dict[str, str] = {}

    def refresh(self) -> Work:
        """Ask the server for the current state (nothing to ask once it finished)."""
        if self.status_url is not None and not self.done:
            self.data = self.client.get(self.status_url, **self.poll_params)
        return self

    def cancel(self) -> Work:
        """Stop queued or running work (``POST .../cancel/``)."""
        if self.status_url is None:
            raise AlignappError("this work finished before the server answered; nothing to cancel")
        self.data = self.client.post(self.status_url.rstrip("/") + "/cancel/", json={})
        return self

    def wait(self, *, timeout: float | None = None, poll: float | None = None, progress: bool | None = None) -> Any:
        """Poll until the work finishes, with a progress bar (``tqdm.auto``: terminal or notebook).

        Args:
            timeout: seconds to wait at most (default: no limit); then :class:`TimeoutError`.
            poll: seconds between two polls (default: the client's ``poll_interval``).
            progress: show the bar (default: the client's ``progress``).

        Returns:
            What the work made (see each kind).

        Raises:
            JobFailed: the work failed or was cancelled, with the server's message.
            TimeoutError: still running after ``timeout`` seconds.
        """
        self._poll(timeout, self.client.poll_interval if poll is None else poll,
                   self.client.progress if progress is None else progress)
        return self

    def _poll(self, timeout: float | None, interval: float, show: bool) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        bar = self._bar() if show and not self.done else None
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

    def failure(self) -> str:
        """The server's explanation of failed or cancelled work (the last line of a traceback)."""
        error = str(self.data.get("error") or "").strip()
        if "Traceback (most recent call last)" in error:
            error = error.splitlines()[-1]
        reason = plain(error) or self.message or self.status
        problems = [plain(str(p)) for p in self.result.get("problems") or []]
        return "\n".join([f"{self.describe()} {self.status}: {reason}", *problems])

    def describe(self) -> str:
        return f"{self.kind} #{self.id}" if self.id is not None else self.kind

    def _bar(self) -> Any:
        from tqdm.auto import tqdm

        return tqdm(total=100.0, desc=self.describe(), unit="%",
                    bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}] {postfix}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()} {self.status} {self.progress:.0f}%>"


class Run(Work):
    """An alignment run (``/api/runs/<id>/``)."""

    kind = "run"
    # a poll need not score the run against the gold each time: :meth:`scores` asks for them
    poll_params = {"scores": "0"}

    @property
    def pair_count(self) -> int:
        return int(self.data.get("pair_count") or 0)

    @property
    def project(self) -> int:
        return int(self.data["project"])

    def wait(self, **options: Any) -> Run:
        """Wait for the run (see :meth:`Work.wait`); the finished run."""
        super().wait(**options)
        return self

    def scores(self) -> dict[str, Any] | None:
        """The run's scores against the project's exhaustive gold as ``GET /api/runs/<id>/`` gives them
        (``scores``), or None where the server gives none."""
        if self.status_url is not None:
            self.data = self.client.get(self.status_url)
        return self.data.get("scores")

    def pairs(self, **filters: Any) -> Iterator[dict[str, Any]]:
        """The pairs this run predicted, a page at a time (``GET /api/pairs/?run=<id>``)."""
        return self.client.pairs(self.project, run=self.id, **filters)


class Job(Work):
    """A background job (``/api/jobs/<id>/``): an import, a training, a scoring job, ..."""

    kind = "job"

    def describe(self) -> str:
        kind = self.data.get("kind")
        return f"{kind} job #{self.id}" if kind and self.id is not None else super().describe()

    @property
    def result(self) -> dict[str, Any]:
        return {k: v for k, v in (self.data.get("result") or {}).items() if k != "article_ids"}

    def wait(self, **options: Any) -> dict[str, Any]:
        """Wait for the job (see :meth:`Work.wait`); its result, e.g. a training's ``model_version``."""
        super().wait(**options)
        return self.result

    @property
    def model_version(self) -> int | None:
        """A finished training job's new model version."""
        return self.result.get("model_version")


class Import(Job):
    """An import: done at once for a small upload, else a background ``import`` job. ``wait()`` returns
    the same counts either way: ``articles``, ``documents``, ``sentences``, ``pairs``, ``summary``,
    ``gold_summary``, ``warnings``, ..."""

    kind = "import"

    @classmethod
    def done_now(cls, client: Client, counts: dict[str, Any]) -> Import:
        return cls(client, {"kind": "import", "status": "succeeded", "progress": 100.0, "message": "done",
                            "result": counts}, None)

    @property
    def summary(self) -> dict[str, Any]:
        return self.result


class Export(Work):
    """An export (``/api/projects/<p>/exports/<id>/``): ``pairs``, ``counts`` and a zip to download."""

    kind = "export"

    def wait(self, **options: Any) -> Export:
        """Wait for the export (see :meth:`Work.wait`); the finished export."""
        super().wait(**options)
        return self

    def download(self, path: str | Path = ".") -> Path:
        """Write the export's zip (waiting for it first) and return where: into the folder ``path``
        (created when missing) as ``export-<id>.zip``, or to ``path`` itself when it ends in ``.zip``."""
        if not self.done:
            self.wait()
        url = self.data.get("download_url")
        if not url:
            raise AlignappError(f"{self.describe()} has no archive to download")
        target = Path(path)
        if target.suffix.lower() != ".zip" or target.is_dir():
            target = target / f"export-{self.id}.zip"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(self.client.get_bytes(url))
        return target


# The names of the first client version.
Handle, RunHandle, JobHandle, ImportHandle, ExportHandle = Work, Run, Job, Import, Export
