"""Reading an export's files back in the tests."""
from __future__ import annotations

import json
from pathlib import Path

from annotation.services import export


def run(project, settings, tmp_path, **options):
    """Export with ``options`` into ``tmp_path``; returns (Export, its folder)."""
    settings.MEDIA_ROOT = str(tmp_path)
    options.setdefault("split_policy", {"mode": "counts", "train": 1, "dev": 0, "test": 1, "seed": 0})
    done = export.run_export(project, export.ExportOptions.parse(options, allow_paths=True))
    return done, export.export_dir(done)


def jsonl(path: Path) -> list[dict]:
    """The lines of a split file; none for a split the export wrote no file for (it writes no empty split)."""
    if not path.exists():
        return []
    text = path.read_text()
    assert text.strip(), f"{path} is an empty split file"
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def all_pairs(root: Path) -> list[dict]:
    return [row for split in ("train", "dev", "test") for row in jsonl(root / "jsonl" / f"{split}.jsonl")]
