"""What every export writer shares: the :class:`Writer` base (lazily opened text files per split),
one-line text cleaning and :func:`pair_dict`, everything known about one exported pair."""
from __future__ import annotations

import re
from pathlib import Path

from annotation.services.export.records import ArticleBatch, PairRecord

LINKING = ("aligned", "partial", "aligned-or-partial")  # the last: imported links of unknown kind (Task 1 only)


_BREAK = re.compile("[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def clean_line(text: str) -> str:
    """One line without tabs (what a line- or tab-separated file can hold)."""
    return " ".join(text.split()) if _BREAK.search(text) else text


class Writer:
    """Base: lazily opened text files per split; ``close()`` returns the written paths."""

    folder = ""

    def __init__(self, root: Path, splits: list[str]) -> None:
        self.root = root / self.folder
        self.splits = splits
        self.files: dict[str, object] = {}

    @classmethod
    def for_export(cls, root: Path, splits: list[str], project, options) -> Writer:
        """The writer for one export of ``project`` with ``options`` (a format that needs more than
        the folder and the splits, such as ``hf``'s typed attribute columns, overrides this)."""
        return cls(root, splits)

    def _file(self, name: str):
        handle = self.files.get(name)
        if handle is None:
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = self.files[name] = open(path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 - closed in close()
        return handle

    def open(self) -> None:
        """Nothing up front: a split's file is created with its first line, so no export holds an empty
        split file (``datasets.load_dataset(<format>, data_dir=…)`` refuses a split without data)."""

    def names(self, split: str) -> list[str]:
        return []

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        raise NotImplementedError

    def complete_back(self) -> tuple[int, int] | None:
        """``(complete document pairs written, those its re-import reads back complete)``; None: the
        format carries no completeness (the manifest's ``reimport``)."""
        return None

    def left_out(self) -> dict[str, int]:
        """Pairs this format had to leave out because it cannot carry their value, by reason."""
        return {}

    def close(self) -> list[Path]:
        paths = []
        for name, handle in self.files.items():
            handle.close()
            paths.append(self.root / name)
        return paths


def pair_dict(r: PairRecord) -> dict:
    """Everything known about one exported pair (the JSONL line and the HF row's source)."""
    return {
        "id": f"p{r.pair_id}" if r.pair_id is not None else "d" + "-".join(map(str, r.derived_from)),
        "pair": r.pair_id,
        "split": r.split,
        "article": r.article,
        "complex_level": r.complex_level,
        "simple_level": r.simple_level,
        "complex_ids": list(r.complex_ids),
        "simple_ids": list(r.simple_ids),
        "complex": r.complex,
        "simple": r.simple,
        "label": r.label,
        "class": r.counts_as,
        "provenance": r.provenance,
        "vote_count": r.vote_count,
        "votes": r.votes,
        "reviewer": r.reviewer,
        "note": r.note,
        "score": r.score,
        "predicted_label": r.predicted_label,
        "attributes": r.features,
        "origin": r.origin,
        "run": r.run,
        "derived": r.derived,
        "derived_from": r.derived_from,
        "group": r.group,
    }
