"""A project and what is in it: ``project.runs``, ``project.jobs``, ``project.exports``, pairs, gold.

>>> project = client.project(3)                                  # doctest: +SKIP
>>> run = project.runs.create("tfidf").wait()                    # doctest: +SKIP
>>> for pair in project.pairs(run=run.id): ...                   # doctest: +SKIP
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .work import Export, Import, Job, Run

if TYPE_CHECKING:
    from .client import Client


class Project:
    """A project as ``GET /api/projects/<id>/`` gives it (``data``; ``project["name"]`` reads it), with
    its runs, jobs and exports as collections and its data as iterators."""

    def __init__(self, client: Client, data: dict[str, Any]) -> None:
        self.client = client
        self.data = data
        self.runs = Runs(self)
        self.jobs = Jobs(self)
        self.exports = Exports(self)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    @property
    def id(self) -> int:
        return int(self.data["id"])

    @property
    def name(self) -> str:
        return str(self.data.get("name", ""))

    def __repr__(self) -> str:
        return f"<Project #{self.id} {self.name!r}>"

    def refresh(self) -> Project:
        self.data = self.client.get(f"/api/projects/{self.id}/")
        return self

    def update(self, **fields: Any) -> Project:
        """``PATCH /api/projects/<id>/`` (``config`` is merged as a JSON merge patch)."""
        self.data = self.client.patch(f"/api/projects/{self.id}/", json=fields)
        return self

    def import_file(self, path: str | os.PathLike[str], *, format: str = "auto", **options: Any) -> Import:  # noqa: A002
        """Import a file, a folder or an archive; see :meth:`Client.import_corpus`."""
        return self.client.import_corpus(self, path, format=format, **options)

    def train(self, config: dict[str, Any] | None = None, **options: Any) -> Job:
        """Retrain the aligner on this project's gold; see :meth:`Client.train`."""
        return self.client.train(self, config, **options)

    def pairs(self, **filters: Any) -> Iterator[dict[str, Any]]:
        """Each candidate pair, a page at a time; see :meth:`Client.pairs`."""
        return self.client.pairs(self, **filters)

    def labels(self, **filters: Any) -> Iterator[dict[str, Any]]:
        """Each raw vote, a page at a time; see :meth:`Client.labels`."""
        return self.client.labels(self, **filters)

    def articles(self) -> Iterator[dict[str, Any]]:
        """Each article with its documents (``GET /api/articles/?project=<id>``)."""
        return self.client.articles(self)

    def gold(self, split: str | list[str] | None = None, **options: Any) -> Any:
        """The gold pairs as a ``datasets.Dataset``; see :meth:`Client.gold`."""
        return self.client.gold(self, split, **options)

    def gold_records(self, split: str | list[str] | None = None, **options: Any) -> list[dict[str, Any]]:
        return self.client.gold_records(self, split, **options)

    def next_item(self) -> dict[str, Any]:
        return self.client.next_item(self)

    def submit(self, pair: int, value: str, **options: Any) -> dict[str, Any]:
        return self.client.submit(self, pair, value, **options)


class Runs:
    """``project.runs``: iterate the project's alignment runs, start one, or get one by id."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def __iter__(self) -> Iterator[Run]:
        return self.project.client.runs(self.project)

    def create(self, method: str = "crf", params: dict[str, Any] | None = None, **options: Any) -> Run:
        """Start a run (``level_pairs``, ``model_version``, ``queue`` as :meth:`Client.align` takes them)."""
        return self.project.client.align(self.project, method, params, **options)

    def get(self, run: int) -> Run:
        return self.project.client.run(run)


class Jobs:
    """``project.jobs``: iterate the project's background jobs, or get one by id."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def __iter__(self) -> Iterator[Job]:
        return self.project.client.jobs(self.project)

    def get(self, job: int) -> Job:
        return self.project.client.job(job)


class Exports:
    """``project.exports``: iterate the project's exports (the latest 50), start one, or get one by id."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def __iter__(self) -> Iterator[Export]:
        return self.project.client.exports(self.project)

    def create(self, **options: Any) -> Export:
        """Start an export with the export options (``kind``, ``formats``, ``splits``, ...)."""
        return self.project.client.export(self.project, **options)

    def get(self, export: int) -> Export:
        url = f"/api/projects/{self.project.id}/exports/{int(export)}/"
        return Export(self.project.client, self.project.client.get(url), url)
