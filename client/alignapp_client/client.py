"""``Client``: alignapp's REST API from Python (scripts and notebooks)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx

from .errors import Invalid, Unauthorized
from .files import form_value, gold_tables, upload
from .http import Http, Pages, checked
from .project import Project
from .work import Export, Import, Job, Run

ProjectRef = int | dict[str, Any] | Project


def project_id(project: ProjectRef) -> int:
    """A project's id from an id, a :class:`Project`, or a project dict."""
    if isinstance(project, Project):
        return project.id
    return int(project["id"] if isinstance(project, dict) else project)


class Client:
    """alignapp's API, signed in with an API token (``Authorization: Token <key>``).

    >>> client = Client("http://127.0.0.1:8000", token)            # doctest: +SKIP
    >>> project = client.project(3)                                # doctest: +SKIP
    >>> run = project.runs.create("tfidf").wait()                  # doctest: +SKIP

    Args:
        url: the server, e.g. ``http://127.0.0.1:8000``.
        token: an API token (the account page, or :meth:`login`).
        poll_interval: seconds between two polls of a run's or job's status in ``wait()``.
        progress: whether ``wait()`` shows a progress bar by default.
        timeout: seconds for one HTTP request.
        retries: how many more times a GET is tried when the server does not answer (or answers
            502/503/504) before :class:`~alignapp_client.Unavailable` is raised.
        page_size: items per request of the lists (1–1000; None: the server's default, 100).
        computing_timeout: seconds a request waits for an answer the server is still computing (a big project's
            first figures: ``202 Accepted``, computed by a background job) before
            :class:`~alignapp_client.StillComputing` is raised; meanwhile it asks again after each ``Retry-After``.
    """

    def __init__(self, url: str, token: str, *, poll_interval: float = 1.0, progress: bool = True,
                 timeout: float = 120.0, retries: int = 3, transport: httpx.BaseTransport | None = None,
                 page_size: int | None = None, computing_timeout: float = 600.0) -> None:
        self.url = url.rstrip("/")
        self.page_size = page_size
        self.poll_interval = poll_interval
        self.progress = progress
        self.http = Http(self.url, token, timeout=timeout, retries=retries, transport=transport,
                         computing_timeout=computing_timeout)

    @classmethod
    def login(cls, url: str, username: str, password: str, **options: Any) -> Client:
        """A client with the user's API token (``POST /api/token/``); a wrong username or password raises
        :class:`~alignapp_client.Unauthorized` (the server answers 400 with its reason)."""
        http = Http(url, None, timeout=options.get("timeout", 120.0), transport=options.get("transport"))
        try:
            token = http.post("/api/token/", json={"username": username, "password": password})["token"]
        except Invalid as refused:
            raise Unauthorized(str(refused), status=refused.status, payload=refused.payload) from None
        finally:
            http.close()
        return cls(url, token, **options)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- HTTP (see Http) ------------------------------------------------------------------------
    def get(self, path: str, **params: Any) -> Any:
        """``GET`` a path of the API (or an absolute URL the server gave); the JSON answer."""
        return self.http.get(path, **params)

    def post(self, path: str, **kwargs: Any) -> Any:
        return self.http.post(path, **kwargs)

    def patch(self, path: str, **kwargs: Any) -> Any:
        return self.http.patch(path, **kwargs)

    def get_bytes(self, path: str) -> bytes:
        return self.http.get_bytes(path)

    def pages(self, path: str, *, page_size: int | None = None, read_ahead: bool | None = None,
              **params: Any) -> Pages[Any]:
        """Each item of a paginated list, fetching the next page when needed (or, from 1000 a page, while
        the current one is read: ``read_ahead``); ``len()`` is the list's total, and an iterator that hit
        an error resumes from where it stopped (:class:`Pages`)."""
        return self.http.pages(path, page_size=page_size or self.page_size, read_ahead=read_ahead, **params)

    # -- projects -------------------------------------------------------------------------------
    def projects(self) -> Pages[Project]:
        """The projects the user can see (``GET /api/projects/``), with the user's ``role`` in each."""
        return self.pages("/api/projects/").map(lambda data: Project(self, data))

    def project(self, project: ProjectRef) -> Project:
        """One project (``GET /api/projects/<id>/``): name, language, label scheme, config."""
        return Project(self, self.get(f"/api/projects/{project_id(project)}/"))

    def create_project(self, name: str, *, language: str = "en", label_scheme: str = "aligned-partial-not",
                       **fields: Any) -> Project:
        """A new project (``POST /api/projects/``; members of the researchers group and admins)."""
        return Project(self, self.post("/api/projects/", json={"name": name, "language": language,
                                                               "label_scheme": label_scheme, **fields}))

    def update_project(self, project: ProjectRef, **fields: Any) -> Project:
        """``PATCH /api/projects/<id>/``; ``config`` is merged as a JSON merge patch."""
        return Project(self, self.patch(f"/api/projects/{project_id(project)}/", json=fields))

    # -- work with progress ---------------------------------------------------------------------
    def import_corpus(self, project: ProjectRef, path: str | os.PathLike[str], *, format: str = "auto",  # noqa: A002
                      **options: Any) -> Import:
        """Upload a file, a folder (every file in it) or an archive (``POST /api/projects/<id>/import/``).

        Args:
            project: the project.
            path: what to import.
            format: ``auto`` (from the file names) or a format the server lists (``jsonl``, ``levels``, ...).
            **options: ``gold_meaning`` (sparse, exhaustive, predictions), ``test_questions``, ``language``,
                ``on_conflict`` (error, skip), ``columns``.

        Returns:
            An :class:`Import`; its ``wait()`` returns the counts, at once for a small upload the server
            imported right away, else after the background ``import`` job. A refused import raises
            :class:`~alignapp_client.Invalid` (``problems``: each ``file:line: field: message``).
        """
        fields = {"format": format, **{k: form_value(v) for k, v in options.items() if v is not None}}
        with upload(Path(path)) as files:
            answer = self.http.send("POST", f"/api/projects/{project_id(project)}/import/", data=fields, files=files)
        data = checked(answer)
        if answer.status_code == 202:
            return Import(self, data["job"], data.get("status_url") or f"/api/jobs/{data['job']['id']}/")
        return Import.done_now(self, data)

    def align(self, project: ProjectRef, method: str = "crf", params: dict[str, Any] | None = None, *,
              level_pairs: list[list[str]] | None = None, model_version: int | None = None,
              queue: str | None = None) -> Run:
        """Start an alignment run (``POST /api/runs/``); ``wait()`` follows ``/api/runs/<id>/``."""
        body: dict[str, Any] = {"project": project_id(project), "method": method, "params": params or {}}
        for key, value in (("level_pairs", level_pairs), ("model_version", model_version), ("queue", queue)):
            if value is not None:
                body[key] = value
        run = self.post("/api/runs/", json=body)
        return Run(self, run, f"/api/runs/{run['id']}/")

    def train(self, project: ProjectRef, config: dict[str, Any] | None = None, *, seed: int = 0,
              base_version: int | None = None) -> Job:
        """Retrain the aligner on the project's gold (``POST /api/projects/<id>/train/``); ``wait()``
        returns the training's result, ``model_version`` the new version."""
        job = self.post(f"/api/projects/{project_id(project)}/train/",
                        json={"config": config or {}, "seed": seed, "base_version": base_version})
        return Job(self, job, f"/api/jobs/{job['id']}/")

    def export(self, project: ProjectRef, **options: Any) -> Export:
        """Start an export (``POST /api/projects/<id>/exports/``) with the export options: ``kind``
        (gold, auto), ``formats``, ``splits``, ``label_policy``, ``runs``, ``lock``, ... (the README's
        export section). ``wait()`` follows it; ``download(folder)`` fetches its zip."""
        data = self.post(f"/api/projects/{project_id(project)}/exports/", json={"options": options})
        return Export(self, data, data.get("status_url") or f"/api/projects/{project_id(project)}/exports/{data['id']}/")

    def job(self, job: int) -> Job:
        """An existing background job."""
        return Job(self, self.get(f"/api/jobs/{int(job)}/"), f"/api/jobs/{int(job)}/")

    def run(self, run: int) -> Run:
        """An existing alignment run."""
        return Run(self, self.get(f"/api/runs/{int(run)}/"), f"/api/runs/{int(run)}/")

    # -- lists, a page at a time ----------------------------------------------------------------
    def runs(self, project: ProjectRef | None = None) -> Pages[Run]:
        """Alignment runs, newest first (``GET /api/runs/[?project=<id>]``)."""
        return self.pages("/api/runs/", project=_maybe_id(project)).map(lambda d: Run(self, d, f"/api/runs/{d['id']}/"))

    def jobs(self, project: ProjectRef | None = None) -> Pages[Job]:
        """Background jobs of the projects the user researches (``GET /api/jobs/[?project=<id>]``)."""
        return self.pages("/api/jobs/", project=_maybe_id(project)).map(lambda d: Job(self, d, f"/api/jobs/{d['id']}/"))

    def exports(self, project: ProjectRef) -> Pages[Export]:
        """The project's latest 50 exports (``GET /api/projects/<id>/exports/``)."""
        base = f"/api/projects/{project_id(project)}/exports/"
        return self.pages(base).map(lambda d: Export(self, d, f"{base}{d['id']}/"))

    def articles(self, project: ProjectRef, *, page_size: int | None = None) -> Pages[dict[str, Any]]:
        """The project's articles with their documents (``GET /api/articles/?project=<id>``)."""
        return self.pages("/api/articles/", project=project_id(project), page_size=page_size)

    def labels(self, project: ProjectRef, **filters: Any) -> Pages[dict[str, Any]]:
        """Every raw vote of the project (``GET /api/labels/?project=<id>``; researchers see all
        annotators' labels). ``filters``: ``value``, ``article``, ``since``, ``until``, ``q``, ``mine``,
        ``page_size``."""
        return self.pages("/api/labels/", project=project_id(project), **filters)

    def pairs(self, project: ProjectRef, *, read_ahead: bool | None = None, **filters: Any) -> Pages[dict[str, Any]]:
        """Candidate pairs (``GET /api/pairs/?project=<id>``); filters such as ``run``, ``label``, ``labelled``;
        ``page_size`` (up to 1000) for fewer requests. ``len()`` is the number of pairs. From 1000 a page the
        next page is read while this one is iterated (``read_ahead``, see :class:`~alignapp_client.http.Pages`):
        ``page_size=1000`` is the fast way through a big project."""
        return self.pages("/api/pairs/", project=project_id(project), read_ahead=read_ahead, **filters)

    # -- gold -----------------------------------------------------------------------------------
    def gold_records(self, project: ProjectRef, split: str | list[str] | None = None, *, lock: bool = False,
                     progress: bool | None = None, **options: Any) -> list[dict[str, Any]]:
        """The gold pairs as dicts, the records of a ``jsonl`` gold export (one per pair: ids, levels,
        ``complex``/``simple`` texts, ``label``, provenance, votes..., plus ``split``), streamed from
        ``/api/projects/<id>/gold/rows/``: reading changes nothing on the server (no export is made, no split
        assigned or locked; articles without a split are read in the one the project's policy would give them).

        Args:
            split: ``train``, ``dev``, ``test``, a list of them, or None for all three.
            lock: assign the missing splits and lock the read articles' splits (as an export for a paper
                would); by default reading the gold locks nothing.
            progress: unused (the rows arrive as they are read); kept for older callers.
            **options: more export options (``label_policy``, ``provenance``, ``split_policy``, ...).
        """
        splits = [split] if isinstance(split, str) else list(split or ["train", "dev", "test"])
        path = f"/api/projects/{project_id(project)}/gold/rows/"
        body = {"options": {**options, "splits": splits}, "lock": lock}
        rows = self.http.json_lines("POST", path, json=body) if lock else self.http.json_lines(
            "GET", path, params={"options": json.dumps(body["options"])})
        order = {name: k for k, name in enumerate(splits)}
        return sorted(rows, key=lambda r: order.get(r.get("split"), len(order)))

    def gold(self, project: ProjectRef, split: str | list[str] | None = None, **options: Any) -> Any:
        """The gold pairs (see :meth:`gold_records`), one table per split: a ``datasets.DatasetDict``
        (``train``/``dev``/``test``) when ``datasets`` is installed — every split with the same
        features, ``label`` a ``ClassLabel`` whose names are the project's label scheme's values (then
        any other value the gold holds, e.g. ``undecided``) — else a dict of pandas ``DataFrame``s, else
        of lists of dicts. ``split="test"`` gives that split's table alone."""
        records = self.gold_records(project, split, **options)
        names = [split] if isinstance(split, str) else list(split or ["train", "dev", "test"])
        tables = gold_tables(records, names, self.label_names(project))
        return tables[split] if isinstance(split, str) else tables

    def label_names(self, project: ProjectRef) -> list[str]:
        """The values of the project's label scheme, in the scheme's order."""
        data = project.data if isinstance(project, Project) else self.get(f"/api/projects/{project_id(project)}/")
        for scheme in self.pages("/api/label-schemes/"):
            if scheme.get("slug") == data.get("label_scheme"):
                return [str(v["value"]) for v in scheme.get("values") or [] if isinstance(v, dict) and "value" in v]
        return []

    # -- labelling ------------------------------------------------------------------------------
    def next_item(self, project: ProjectRef) -> dict[str, Any]:
        """The next pair to label (``GET /api/projects/<id>/queue/next/``): ``item`` (None when done)."""
        return self.get(f"/api/projects/{project_id(project)}/queue/next/")

    def submit(self, project: ProjectRef, pair: int, value: str, *, seconds: float = 0.0,
               comment: str = "") -> dict[str, Any]:
        """Label a pair served to this user (``POST .../queue/submit/``); the answer carries the next item."""
        return self.post(f"/api/projects/{project_id(project)}/queue/submit/",
                         json={"pair": pair, "value": value, "seconds": seconds, "comment": comment})


def _maybe_id(project: ProjectRef | None) -> int | None:
    return None if project is None else project_id(project)
