"""``Client``: alignapp's REST API from Python (scripts and notebooks)."""
from __future__ import annotations

import contextlib
import io
import json
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from .errors import AlignappError, message_of
from .handles import ExportHandle, ImportHandle, JobHandle, RunHandle

Project = int | dict[str, Any]


def project_id(project: Project) -> int:
    """A project's id from an id or a project as :meth:`Client.project` returns it."""
    return int(project["id"] if isinstance(project, dict) else project)


class Client:
    """alignapp's API, signed in with an API token (``Authorization: Token <key>``).

    >>> client = Client("http://127.0.0.1:8000", token)            # doctest: +SKIP
    >>> run = client.align(3, "crf").wait()                        # doctest: +SKIP

    Args:
        url: the server, e.g. ``http://127.0.0.1:8000``.
        token: an API token (the account page, or :meth:`login`).
        poll_interval: seconds between two polls of a run's or job's status in ``wait()``.
        progress: whether ``wait()`` shows a progress bar by default.
        timeout: seconds for one HTTP request.
    """

    def __init__(self, url: str, token: str, *, poll_interval: float = 1.0, progress: bool = True,
                 timeout: float = 120.0, transport: httpx.BaseTransport | None = None) -> None:
        self.url = url.rstrip("/")
        self.poll_interval = poll_interval
        self.progress = progress
        self.http = httpx.Client(base_url=self.url, timeout=timeout, transport=transport, follow_redirects=True,
                                 headers={"Authorization": f"Token {token}", "Accept": "application/json"})

    @classmethod
    def login(cls, url: str, username: str, password: str, **options: Any) -> Client:
        """A client with the user's API token (``POST /api/token/``)."""
        with httpx.Client(base_url=url.rstrip("/"), timeout=options.get("timeout", 120.0),
                          transport=options.get("transport")) as http:
            answer = http.post("/api/token/", json={"username": username, "password": password})
        data = _checked(answer)
        return cls(url, data["token"], **options)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- HTTP -----------------------------------------------------------------------------------
    def get(self, path: str, **params: Any) -> Any:
        """``GET`` a path of the API (or an absolute URL the server gave); the JSON answer."""
        return _checked(self.http.get(path, params={k: v for k, v in params.items() if v is not None}))

    def post(self, path: str, **kwargs: Any) -> Any:
        return _checked(self.http.post(path, **kwargs))

    def patch(self, path: str, **kwargs: Any) -> Any:
        return _checked(self.http.patch(path, **kwargs))

    def get_bytes(self, path: str) -> bytes:
        answer = self.http.get(path)
        if answer.status_code >= 400:
            _checked(answer)
        return answer.content

    def pages(self, path: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Every item of a paginated list (``results``, following ``next``)."""
        page: Any = self.get(path, **params)
        while True:
            if isinstance(page, list):
                yield from page
                return
            yield from page.get("results", [])
            if not page.get("next"):
                return
            page = self.get(page["next"])

    # -- projects -------------------------------------------------------------------------------
    def projects(self) -> list[dict[str, Any]]:
        """The projects the user can see (``GET /api/projects/``), with the user's ``role`` in each."""
        return list(self.pages("/api/projects/"))

    def project(self, project: Project) -> dict[str, Any]:
        """One project (``GET /api/projects/<id>/``): name, language, label scheme, config."""
        return self.get(f"/api/projects/{project_id(project)}/")

    def create_project(self, name: str, *, language: str = "en", label_scheme: str = "aligned-partial-not",
                       **fields: Any) -> dict[str, Any]:
        """A new project (``POST /api/projects/``; members of the researchers group and admins)."""
        return self.post("/api/projects/", json={"name": name, "language": language, "label_scheme": label_scheme,
                                                 **fields})

    def update_project(self, project: Project, **fields: Any) -> dict[str, Any]:
        """``PATCH /api/projects/<id>/``; ``config`` is merged as a JSON merge patch."""
        return self.patch(f"/api/projects/{project_id(project)}/", json=fields)

    # -- work with progress ---------------------------------------------------------------------
    def import_corpus(self, project: Project, path: str | os.PathLike[str], *, format: str = "auto",  # noqa: A002
                      **options: Any) -> ImportHandle:
        """Upload a file, a folder (every file in it) or an archive (``POST /api/projects/<id>/import/``).

        Args:
            project: the project (id or dict).
            path: what to import.
            format: ``auto`` (from the file names) or a format the server lists (``jsonl``, ``levels``, ...).
            **options: ``gold_meaning`` (sparse, exhaustive, predictions), ``test_questions``, ``language``,
                ``on_conflict`` (error, skip).

        Returns:
            A handle; ``wait()`` returns at once for a small upload the server imported right away,
            else follows the background ``import`` job. An import the server refuses raises
            :class:`AlignappError` with every ``file:line: field: message`` problem.
        """
        fields = {"format": format, **{k: _form(v) for k, v in options.items() if v is not None}}
        with _upload(Path(path)) as files:
            answer = self.http.post(f"/api/projects/{project_id(project)}/import/", data=fields, files=files)
        data = _checked(answer)
        if answer.status_code == 202:
            return ImportHandle(self, data["job"], data.get("status_url") or f"/api/jobs/{data['job']['id']}/")
        return ImportHandle(self, {**data, "status": "succeeded", "progress": 100.0}, None)

    def align(self, project: Project, method: str = "crf", params: dict[str, Any] | None = None, *,
              level_pairs: list[list[str]] | None = None, model_version: int | None = None,
              queue: str | None = None) -> RunHandle:
        """Start an alignment run (``POST /api/runs/``); ``wait()`` follows ``/api/runs/<id>/``."""
        body: dict[str, Any] = {"project": project_id(project), "method": method, "params": params or {}}
        for key, value in (("level_pairs", level_pairs), ("model_version", model_version), ("queue", queue)):
            if value is not None:
                body[key] = value
        run = self.post("/api/runs/", json=body)
        return RunHandle(self, run, f"/api/runs/{run['id']}/")

    def train(self, project: Project, config: dict[str, Any] | None = None, *, seed: int = 0,
              base_version: int | None = None) -> JobHandle:
        """Retrain the aligner on the project's annotations (``POST /api/projects/<id>/train/``);
        ``wait()`` follows the training job; its ``model_version`` is the new version."""
        job = self.post(f"/api/projects/{project_id(project)}/train/",
                        json={"config": config or {}, "seed": seed, "base_version": base_version})
        return JobHandle(self, job, f"/api/jobs/{job['id']}/")

    def export(self, project: Project, **options: Any) -> ExportHandle:
        """Start an export (``POST /api/projects/<id>/exports/``) with the export options: ``kind``
        (gold, auto), ``formats``, ``splits``, ``label_policy``, ``runs``, ``lock``, ... (the README's
        export section). ``wait()`` follows it; ``download(path)`` fetches its zip."""
        data = self.post(f"/api/projects/{project_id(project)}/exports/", json={"options": options})
        return ExportHandle(self, data, data.get("status_url")
                            or f"/api/projects/{project_id(project)}/exports/{data['id']}/")

    def job(self, job: int) -> JobHandle:
        """A handle on an existing background job."""
        return JobHandle(self, self.get(f"/api/jobs/{int(job)}/"), f"/api/jobs/{int(job)}/")

    def run(self, run: int) -> RunHandle:
        """A handle on an existing alignment run."""
        return RunHandle(self, self.get(f"/api/runs/{int(run)}/"), f"/api/runs/{int(run)}/")

    # -- data -----------------------------------------------------------------------------------
    def gold_records(self, project: Project, split: str | list[str] | None = None, *,
                     progress: bool | None = None, **options: Any) -> list[dict[str, Any]]:
        """The gold pairs as dicts, through a ``jsonl`` gold export (one record per pair: ids, levels,
        ``complex``/``simple`` texts, ``label``, provenance, votes..., plus ``split``).

        Args:
            split: ``train``, ``dev``, ``test``, a list of them, or None for all three.
            **options: more export options (``label_policy``, ``provenance``, ``lock``, ...). As any
                export, it gives articles without a split one and locks the exported splits
                (``lock=False`` leaves them unlocked).
        """
        splits = [split] if isinstance(split, str) else list(split or ["train", "dev", "test"])
        handle = self.export(project, **{"kind": "gold", **options, "formats": ["jsonl"], "splits": splits})
        handle.wait(progress=progress)
        archive = zipfile.ZipFile(io.BytesIO(self.get_bytes(handle.data["download_url"])))
        records = []
        for name in splits:
            members = [m for m in archive.namelist() if m.endswith(f"jsonl/{name}.jsonl")]
            for member in members:
                for line in archive.read(member).decode("utf-8").splitlines():
                    if line.strip():
                        records.append({**json.loads(line), "split": name})
        return records

    def gold(self, project: Project, split: str | list[str] | None = None, **options: Any) -> Any:
        """The gold pairs (see :meth:`gold_records`) as a ``datasets.Dataset`` when ``datasets`` is
        installed, else a pandas ``DataFrame``, else a list of dicts."""
        records = self.gold_records(project, split, **options)
        return _table(records)

    def labels(self, project: Project, **filters: Any) -> list[dict[str, Any]]:
        """Every raw vote of the project (``GET /api/labels/?project=<id>``; researchers see all
        annotators' labels). ``filters``: ``value``, ``article``, ``since``, ``until``, ``q``, ``mine``."""
        return list(self.pages("/api/labels/", project=project_id(project), **filters))

    def pairs(self, project: Project, **filters: Any) -> list[dict[str, Any]]:
        """Candidate pairs (``GET /api/pairs/?project=<id>``); filters such as ``run``, ``label``, ``labelled``."""
        return list(self.pages("/api/pairs/", project=project_id(project), **filters))

    # -- labelling ------------------------------------------------------------------------------
    def next_item(self, project: Project) -> dict[str, Any]:
        """The next pair to label (``GET /api/projects/<id>/queue/next/``): ``item`` (None when done)."""
        return self.get(f"/api/projects/{project_id(project)}/queue/next/")

    def submit(self, project: Project, pair: int, value: str, *, seconds: float = 0.0,
               comment: str = "") -> dict[str, Any]:
        """Label a pair served to this user (``POST .../queue/submit/``); the answer carries the next item."""
        return self.post(f"/api/projects/{project_id(project)}/queue/submit/",
                         json={"pair": pair, "value": value, "seconds": seconds, "comment": comment})


def _checked(answer: httpx.Response) -> Any:
    """The JSON of a successful answer; :class:`AlignappError` with the server's message otherwise."""
    try:
        payload: Any = answer.json()
    except ValueError:
        payload = answer.text
    if answer.status_code >= 400:
        fallback = f"{answer.status_code} {answer.reason_phrase} for {answer.request.method} {answer.request.url}"
        raise AlignappError(message_of(payload, fallback), status=answer.status_code, payload=payload)
    return payload


def _form(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


@contextlib.contextmanager
def _upload(path: Path) -> Iterator[list[tuple[str, tuple[str, Any, str]]]]:
    """The multipart ``files`` of a file, or of every (not hidden) file under a folder, named by
    their path relative to it."""
    if not path.exists():
        raise FileNotFoundError(path)
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file()
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
        named = [(p, p.relative_to(path).as_posix()) for p in found]
    else:
        named = [(path, path.name)]
    with contextlib.ExitStack() as stack:
        yield [("files", (name, stack.enter_context(p.open("rb")), "application/octet-stream")) for p, name in named]


def _table(records: list[dict[str, Any]]) -> Any:
    try:
        import datasets
    except ImportError:
        pass
    else:
        return datasets.Dataset.from_list(records)
    try:
        import pandas
    except ImportError:
        return records
    return pandas.DataFrame.from_records(records)
