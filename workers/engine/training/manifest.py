"""``manifest.json`` of a trained MODEL_DIR: what was trained on what, how, and how well.

Records the training and held-out article ids with a SHA-256 of their content, the
hyper-parameters, the seed, per-epoch history, held-out metrics (trained vs untrained), the
tuned thresholds, timings, the device and the library versions — enough to tell two model
versions apart and to reproduce one.
"""
from __future__ import annotations

import json
import platform
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from ..types import ArticlePair
from .data import data_fingerprint

__all__ = ["MANIFEST_FILE", "MANIFEST_FORMAT", "data_summary", "library_versions", "write_manifest",
           "read_manifest"]

MANIFEST_FILE = "manifest.json"
MANIFEST_FORMAT = "alignapp-trained-aligner"

_LIBRARIES = ("torch", "transformers", "sentence-transformers", "accelerate", "numpy",
              "scikit-learn")


def data_summary(pairs: Sequence[ArticlePair]) -> dict[str, Any]:
    """Ids, content hash and link counts of a set of article pairs."""
    links = [lab for p in pairs for lab in (p.gold_labels or ("aligned",) * len(p.gold or ()))]
    return {"ids": [p.id for p in pairs], "sha256": data_fingerprint(pairs),
            "n_articles": len(pairs), "n_links": len(links),
            "n_partial": sum(lab == "partial" for lab in links),
            "n_simple_sentences": sum(len(p.simple) for p in pairs),
            "n_complex_sentences": sum(len(p.complex) for p in pairs)}


def library_versions() -> dict[str, str]:
    """Python and the installed versions of the libraries training depends on."""
    out = {"python": platform.python_version()}
    for name in _LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def write_manifest(directory: str | Path, content: dict[str, Any]) -> dict[str, Any]:
    """Write ``manifest.json`` (adds format, version, creation time and platform)."""
    manifest = {"format": MANIFEST_FORMAT, "version": 1,
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
                "platform": {"system": platform.system(), "machine": platform.machine()},
                **content}
    path = Path(directory) / MANIFEST_FILE
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True, default=float), encoding="utf-8")
    return manifest


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """The manifest of a trained MODEL_DIR."""
    return json.loads((Path(directory) / MANIFEST_FILE).read_text(encoding="utf-8"))
