"""Export filters (SPEC §7): labels, provenance, level pairs, identical pairs, stored simplicity
scores, evaluation-set de-duplication and the BLEU band — applied pair by pair while streaming, each
counting what it dropped (the counts go into the manifest).

* **labels** match a scheme value (``good-partial``) or a class (``aligned``, ``partial``, ``not``);
* **thresholds** compare a stored attribute of ``CandidatePair.features`` (``sum4simp_T`` — the
  Sum4Simp total T_s, ``gain_prob`` — WIVICO's gain probability, ``pivot_fres_gain`` — FRES gain,
  ``access_*`` ...) or ``score``; a pair without the attribute is dropped;
* **BLEU band**: sentence BLEU (sacrebleu, simple vs complex, /100) inside [low, high], as the CRF
  paper filtered Wiki-Auto with [0.1, 0.9];
* **identical**: both sides are the same text after ``workers.engine.text.normalise`` (the
  definition the pairs' stored ``identical`` flag uses: Unicode, case, punctuation and spacing
  do not count). A *training* filter: in a gold export it leaves identical pairs out of the
  training-oriented formats only (those registered ``training=True``: ``parallel``) and counts them
  in ``dropped_training``; the gold files keep them, as the released Wiki-Manual / Newsela-Manual
  files do. In an auto export (a model's alignment: training data) it applies to every format;
* **dedup**: a pair is dropped when a sentence of the chosen side(s) is in an evaluation set
  (Unicode-, case- and space-normalised text, punctuation kept; only 8-byte digests are kept in
  memory), as Wiki-Auto discarded TURK's sentences and MUSS anything in an evaluation set.

Filters run cheapest first; BLEU last.
"""
from __future__ import annotations

import hashlib
import operator
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from annotation.models import Project, Sentence
from annotation.services.export.metrics import bleu
from annotation.services.export.options import ExportError, ExportOptions
from annotation.services.export.records import CLASSES, PairRecord
from workers.engine import is_identical, normalise

OPS: dict[str, Callable[[float, float], bool]] = {
    "gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le, "eq": operator.eq,
}
AUTO_DEFAULT_LABELS = ("aligned", "partial")


def digest(text: str) -> bytes:
    return hashlib.blake2b(normalise(text, keep_punctuation=True).encode(), digest_size=8).digest()


def evaluation_digests(sets: list[dict], *, visible=None) -> tuple[set[bytes], list[dict]]:
    """Digests of every sentence of the evaluation sets, and a description of each set for the manifest."""
    from annotation.services.projects.creation import find_project

    digests: set[bytes] = set()
    described = []
    for spec in sets:
        before = len(digests)
        if "project" in spec:
            try:
                project = find_project(spec["project"], "evaluation project", visible)
            except ValueError as exc:
                raise ExportError(str(exc)) from exc
            texts: Iterable[str] = (Sentence.objects.filter(document__article__project=project,
                                                            document__article__split__name__in=spec["splits"])
                                    .values_list("text", flat=True).iterator(chunk_size=5000))
            name = spec.get("name") or f"{project.name} ({', '.join(spec['splits'])})"
            source = {"project": project.pk, "project_name": project.name, "splits": spec["splits"]}
        elif "sentences" in spec:
            texts, name, source = spec["sentences"], spec["name"], {"inline": len(spec["sentences"])}
        else:
            path = Path(spec["path"])
            if not path.is_file():
                raise ExportError(f"evaluation set file {path} not found")
            texts = (line for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
            name, source = spec["name"], {"path": str(path)}
        for text in texts:
            digests.add(digest(text))
        described.append({"name": name, **source, "sentences": len(digests) - before})
    return digests, described


class FilterChain:
    """``chain.reason(record)`` → the name of the first filter that drops it, or None to keep it;
    ``chain.training_reason(record)`` → the same for the training-only filters (gold: identical)."""

    def __init__(self, project: Project, options: ExportOptions, *, visible=None) -> None:
        self.options = options
        self.dropped: Counter = Counter()
        labels = options.labels if options.labels is not None else (AUTO_DEFAULT_LABELS if options.kind == "auto" else None)
        self.labels = set(labels) if labels is not None else None
        self.provenance = set(options.provenance) if options.provenance is not None else None
        self.include_levels = {tuple(p) for p in options.level_pairs} if options.level_pairs is not None else None
        self.exclude_levels = {tuple(p) for p in options.exclude_level_pairs}
        self.thresholds = [(t["key"], OPS[t["op"]], t["value"]) for t in options.thresholds]
        self.eval_digests, self.eval_sets = evaluation_digests(options.dedup, visible=visible) if options.dedup else (set(), [])
        self.checks: list[tuple[str, Callable[[PairRecord], bool]]] = []
        self.training_checks: list[tuple[str, Callable[[PairRecord], bool]]] = []
        self.dropped_training: Counter = Counter()
        if self.labels is not None:
            self.checks.append(("label", lambda r: r.label in self.labels or r.counts_as in self.labels))
        if self.provenance is not None:
            self.checks.append(("provenance", lambda r: r.provenance in self.provenance))
        if self.include_levels is not None or self.exclude_levels or options.exclude_adjacent:
            self.checks.append(("level_pair", self._levels_ok))
        if options.drop_identical:  # gold files keep identical pairs; training outputs leave them out
            (self.training_checks if options.kind == "gold" else self.checks).append(
                ("identical", lambda r: not is_identical(r.complex, r.simple)))
        if self.thresholds:
            self.checks.append(("threshold", self._thresholds_ok))
        if self.eval_digests:
            self.checks.append(("evaluation_set", self._not_in_eval))
        if options.bleu_band is not None:
            low, high = options.bleu_band
            self.checks.append(("bleu_band", lambda r: low <= bleu(r.simple, r.complex) <= high))

    def describe(self) -> dict:
        """The filters in force, for the manifest."""
        return {
            "labels": sorted(self.labels) if self.labels is not None else "all",
            "provenance": sorted(self.provenance) if self.provenance is not None else "all",
            "level_pairs": sorted(self.include_levels) if self.include_levels is not None else "all",
            "exclude_level_pairs": sorted(self.exclude_levels),
            "exclude_adjacent": self.options.exclude_adjacent,
            "drop_identical": self.options.drop_identical,
            "identical_applies_to": ("training formats only (parallel): gold files keep identical pairs"
                                     if self.options.kind == "gold" else "every format"),
            "thresholds": self.options.thresholds,
            "bleu_band": self.options.bleu_band,
            "evaluation_sets": self.eval_sets,
            "dedup_side": self.options.dedup_side,
            "order": [name for name, _ in self.checks],
            "training_only": [name for name, _ in self.training_checks],
        }

    def _levels_ok(self, r: PairRecord) -> bool:
        pair = r.level_pair
        if self.include_levels is not None and pair not in self.include_levels:
            return False
        if pair in self.exclude_levels:
            return False
        return not (self.options.exclude_adjacent and abs(r.simple_rank - r.complex_rank) == 1)

    def _thresholds_ok(self, r: PairRecord) -> bool:
        for key, op, value in self.thresholds:
            raw = r.score if key == "score" else r.features.get(key)
            if isinstance(raw, bool):
                raw = float(raw)
            if not isinstance(raw, (int, float)) or not op(raw, value):
                return False
        return True

    def _not_in_eval(self, r: PairRecord) -> bool:
        side = self.options.dedup_side
        sentences = (r.complex_sentences if side != "simple" else []) + (r.simple_sentences if side != "complex" else [])
        return not any(digest(s) in self.eval_digests for s in sentences)

    def keeps(self, record: PairRecord) -> bool:
        """Whether every filter keeps ``record`` (nothing counted: the preview's per-policy table)."""
        return all(keep(record) for _, keep in self.checks)

    def reason(self, record: PairRecord) -> str | None:
        return _first_failed(self.checks, record, self.dropped)

    def training_reason(self, record: PairRecord) -> str | None:
        """The training-only filter that leaves ``record`` (kept by :meth:`reason`) out of the
        training-oriented formats, counted in :attr:`dropped_training`; None: they keep it too."""
        return _first_failed(self.training_checks, record, self.dropped_training)


def _first_failed(checks: list[tuple[str, Callable[[PairRecord], bool]]], record: PairRecord,
                  counts: Counter) -> str | None:
    for name, keep in checks:
        if not keep(record):
            counts[name] += 1
            return name
    return None


__all__ = ["AUTO_DEFAULT_LABELS", "CLASSES", "FilterChain", "digest", "evaluation_digests"]
