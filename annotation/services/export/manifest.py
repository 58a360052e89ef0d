"""The manifest written into every export (``manifest.json``): where the data came from and how it
was made — project, split policy and seed, label policy, filters and what each dropped, model
version and runs, the language tools and the features left out for want of one, counts per split /
label / class / provenance / level pair, annotator agreement, file checksums (sha256) and the
application version."""
from __future__ import annotations

import hashlib
import os
import subprocess
from collections import Counter, defaultdict
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from annotation.models import ModelVersion, Project

MANIFEST_VERSION = 1


def app_version() -> dict:
    """``APP_VERSION`` from the environment, else the git commit of the checkout, plus library versions."""
    version = os.environ.get("APP_VERSION", "")
    if not version:
        try:
            version = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=settings.BASE_DIR, capture_output=True,
                                     text=True, timeout=5, check=False).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            version = ""
    libraries = {}
    for name in ("Django", "datasets", "pyarrow", "sacrebleu"):
        try:
            libraries[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            libraries[name] = None
    return {"alignapp": version or "unknown", **libraries}


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checksums(root: Path, paths: list[Path]) -> dict[str, dict]:
    return {str(p.relative_to(root)): {"sha256": sha256(p), "bytes": p.stat().st_size} for p in sorted(paths)}


class Tally:
    """Counts of exported pairs, grown one record at a time (constant memory per distinct key)."""

    def __init__(self) -> None:
        self.total = 0
        self.per_split: dict[str, Counter] = defaultdict(Counter)
        self.articles: Counter = Counter()

    def add(self, record) -> None:
        self.total += 1
        c = self.per_split[record.split]
        c["pairs"] += 1
        c[f"label:{record.label}"] += 1
        c[f"class:{record.counts_as}"] += 1
        c[f"provenance:{record.provenance}"] += 1
        c[f"levels:{record.complex_level}-{record.simple_level}"] += 1
        if record.derived:
            c["derived"] += 1

    def as_dict(self) -> dict:
        out = {}
        for split, c in sorted(self.per_split.items()):
            groups: dict[str, dict] = defaultdict(dict)
            for key, n in sorted(c.items()):
                if ":" in key:
                    group, value = key.split(":", 1)
                    groups[group][value] = n
            out[split] = {"pairs": c["pairs"], "derived": c["derived"], "articles": self.articles[split],
                          "labels": groups["label"], "classes": groups["class"],
                          "provenance": groups["provenance"], "level_pairs": groups["levels"]}
        return out


def agreement_summary(project: Project) -> dict | None:
    """Project-wide agreement of counted labels (the review area's statistics, scalars only; no names)."""
    from annotation.errors import BeingComputed

    try:
        from annotation.services.review.dashboard import project_agreement  # the dashboard's, kept per state

        result = project_agreement(project)
    except BeingComputed as exc:  # a big project's first figures: its job computes them, the export does not wait
        return {"computing": True, "detail": str(exc)}
    except Exception as exc:  # noqa: BLE001 - agreement is informative; the export must not fail on it
        return {"error": f"{type(exc).__name__}: {exc}"}
    keep = ("items", "items_multi", "annotators", "counts", "cohen_mean", "fleiss", "alpha", "cohen_quadratic_mean",
            "alpha_ordinal", "alpha_interval")
    # a big project's agreement is the one kept for the dashboard: when the data moved on since, it is the last one
    # kept ("current": false, its time in "as_of") while the dashboard's job computes anew — said, never passed as now
    out = {"scheme": result.get("scheme"), "kind": result.get("kind"), "as_of": result.get("figures_as_of"),
           "current": not result.get("updating", False)}
    for name in ("values", "classes", "binary"):
        if name in result:
            out[name] = {k: result[name].get(k) for k in keep if k in result[name]}
    if "document_pairs" in result:  # per document pair two or more annotators completed (ids, κ, observed)
        out["document_pairs"] = result["document_pairs"]
    if "dimensions" in result:
        out["dimensions"] = {d: {k: s.get(k) for k in keep if k in s} for d, s in result["dimensions"].items()}
    return out


def model_description(model_version_id: int | None, runs) -> dict | None:
    if model_version_id is None and not runs:
        return None
    out: dict = {"runs": [{"id": r.pk, "method": r.method, "params": r.params, "model_version": r.model_version_id,
                           "finished_at": r.finished_at.isoformat() if r.finished_at else None} for r in runs]}
    if model_version_id is not None:
        mv = ModelVersion.objects.filter(pk=model_version_id).first()
        if mv is not None:
            out["model_version"] = {"id": mv.pk, "name": mv.name, "kind": mv.kind, "path": mv.path,
                                    "metrics": mv.metrics, "created_at": mv.created_at.isoformat()}
    return out


def language_tools(project: Project, runs) -> dict:
    """The project's encoder and spaCy pipeline, and every feature the exported runs (an auto export)
    or the project's latest runs (gold), and its latest scoring jobs, left out — with why — so a
    consumer never mistakes an absent column for a zero."""
    from annotation.services.projects.language_tools import describe, missing_features

    tools = describe(project)
    return {"language": project.language, "encoder": tools["encoder"]["used"],
            "spacy_pipeline": tools["spacy_pipeline"]["used"],
            "missing_features": missing_features(project, runs or None)}


@dataclass(frozen=True)
class Written:
    """What an export wrote, as its manifest records it. ``dropped``: pairs a filter left out of every file, by
    filter; ``dropped_training``: pairs left out of the training formats only (gold: identical pairs);
    ``left_out``: per format, pairs it cannot carry (the wiki-manual TSV: ``aligned-or-partial`` and
    ``undecided``), by class; ``runs``: the alignment runs an auto export read."""

    split_policy: dict
    split_articles: dict
    filters: dict
    dropped: dict
    dropped_training: dict
    left_out: dict
    tally: Tally
    runs: list
    files: dict
    timings: dict


def build(export_id: int | None, project: Project, options, written: Written) -> dict:
    """The manifest of an export of ``project`` with ``options`` (an ``ExportOptions``) that wrote ``written``."""
    split_policy, split_articles, tally = written.split_policy, written.split_articles, written.tally
    label_policy = options.label_policy if options.kind == "gold" else None
    dropped, dropped_training, left_out = written.dropped, written.dropped_training, written.left_out
    filters, files, timings = written.filters, written.files, written.timings
    model = model_description(options.model_version, written.runs)
    agreement, tools = agreement_summary(project), language_tools(project, written.runs)
    return {
        "manifest_version": MANIFEST_VERSION,
        "export": export_id,
        "created_at": timezone.now().isoformat(),
        "application": app_version(),
        "project": {"id": project.pk, "name": project.name, "language": project.language,
                    "label_scheme": {"slug": project.label_scheme.slug, "values": project.label_scheme.values}},
        "kind": options.kind,
        "formats": options.formats,
        "options": options.as_dict(),
        "split_policy": split_policy,
        "split_articles": split_articles,
        "label_policy": label_policy,
        "derived": options.derived,
        "filters": filters,
        "dropped": dropped,
        "dropped_training": dropped_training or {},
        "left_out": left_out or {},
        "model": model,
        "language_tools": tools,
        "counts": {"pairs": tally.total, "splits": tally.as_dict()},
        "agreement": agreement,
        "files": files,
        "timings": timings,
    }
