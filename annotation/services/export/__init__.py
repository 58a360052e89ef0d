"""Exporting gold train/dev/test splits and automatically aligned corpora (SPEC §7).

``run_export(project, options)`` streams the project's pairs (``source.py``, a chunk of articles at
a time), derives non-adjacent-level pairs (``derived.py``), applies the filters (``filters.py``) and
hands each article's kept pairs to the writers (``formats/``, a module per format), then writes ``manifest.json``
(``manifest.py``) and a zip of everything, all under ``MEDIA_ROOT/exports/<export id>/``. Articles
without a split get one from the split policy first (``splits.py``); exported articles' splits are
locked afterwards. :func:`start_export` queues the same work as a ``Job`` (kind ``export``, cpu
queue) for the API; the ``export`` management command runs it in-process.

Round trip through the JSONL importer: ``articles/<split>.jsonl`` is the engine/importer format.
Re-importing it (``import_corpus --format jsonl``) recreates each article document pair (same
paragraphs and sentences) and, from the line's ``pairs``, every exported pair with the same
sentence indices (n:m kept), label (aligned, partial and not-aligned alike), score and attributes,
as an imported pair adjudicated with provenance ``imported`` and the exported provenance in the
note (``source provenance: majority``); derived pairs carry ``"derived": 1.0`` in their features.
Votes, reviewers and the run are not re-imported (they stay in ``jsonl/``). The ``gold`` /
``gold_labels`` 1:1 links are for other readers of the format; the importer skips those a pair
already covers. The record id becomes the article's title: an article with more than two levels is
written as one line per level pair, ids ``"<title> [<complex level>→<simple level>]"``, and so comes
back as one two-document article per level pair (an article with a single level pair keeps its title).

Example:
    >>> export = run_export(project, ExportOptions.parse({"kind": "gold", "formats": ["jsonl", "hf"]}))  # doctest: +SKIP
    >>> export.manifest["counts"]["pairs"]  # doctest: +SKIP
    1234
"""
from __future__ import annotations

import gc
import json
import shutil
import time
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import Export, Job, Project
from annotation.services import audit
from annotation.services.background import progress as job_progress
from annotation.services.export import breakdown, splits
from annotation.services.export import formats as export_formats
from annotation.services.export import manifest as manifests
from annotation.services.export.completeness import reimport_guide, reimport_readme
from annotation.services.export.filters import FilterChain
from annotation.services.export.options import KINDS, LABEL_POLICIES, ExportError, ExportOptions
from annotation.services.export.source import LEFT_OUT, UNLABELLED_CLASSES, PairSource
from annotation.services.projects import job_access

PREVIEW_SECONDS = 20.0
README = """alignapp export {id} ({kind}) of project {project!r}

manifest.json        provenance: split policy and seed, label policy, filters, model version,
                     counts per split/label, agreement, checksums, application version; dropped
                     (by every format), dropped_training (by the training formats only) and
                     left_out (pairs a format cannot carry), each by reason
"""
RULE = """
Each pair's value (gold), first match wins (the one rule: annotation/services/review/gold_reading.py):
  1. adjudication: gold a person decided (or automatic gold written from the votes);
  2. the annotators' votes, as the gold policy reads them ({policy}). A completion (an article pair an
     annotator marked complete in the whole-article view) is a "not aligned" vote of its completer on
     every sentence pair they left unlinked, imported links included: a completer saw the imported link
     and left it out. So a vote refines ("aligned-or-partial" -> partial) or overrules imported gold:
     it never loses to imported gold.
     A tie of qualifying votes is "undecided" -- imported gold or not; it waits in adjudication and is
     never aligned, never not aligned;
  3. imported gold, with the meaning it was imported with ("aligned-or-partial": a link of unknown kind;
     an article pair imported as exhaustive: every sentence pair it does not list and nobody labelled
     is not aligned);
  4. else no value: the pair is left out, counted by reason ("one vote": the majority policy needs
     two; "votes only": the stored policy reads no votes; "tie": undecided outside a complete pair).
Policies: majority-or-single reads one vote or more (an article one annotator completed is complete:
their links, every other pair not aligned); majority needs two votes (an article only one annotator
completed is NOT complete: none of their links is written as not aligned, each is left out as "one
vote"); stored reads no votes (complete only where imported as exhaustive).
A complete article pair lists every sentence pair (undecided ones as "undecided", never as not
aligned). Nothing claims more than was labelled: wiki-manual/*.tsv can only say aligned /
partialAligned / notAligned, so it has no row for an "aligned-or-partial" or "undecided" pair (its
sidecar, wiki-manual/gold_sidecar.json, holds them with their values); jsonl, articles and hf write the
value as it is stored. "Drop identical" applies to training outputs only
(parallel; every format of an auto export): gold files keep identical pairs, as the released corpora do.
Run scores, training, model metrics, calibration, test questions, agreement and the review pages
read the same values (majority-or-single); agreement counts the completions' implied not aligned.
"""


def _readme(export_id: int, options: ExportOptions, project: str, left_out: dict[str, dict[str, int]],
            dropped: dict[str, dict[str, int]], guide: dict[str, dict] | None = None) -> str:
    """README.txt: the manifest, the precedence rule (gold), what each format's files hold, what
    was left out of which files, by reason, and how to import each gold format back (``reimport``)."""
    text = README.format(id=export_id, kind=options.kind, project=project)
    if options.kind == "gold":
        text += RULE.format(policy=options.label_policy)
    text += "\n" + "".join(f.readme + "\n" for f in export_formats.formats())
    counts = [f"  {where}: {reason} {n}" for where, reasons in {**dropped, **left_out}.items()
              for reason, n in sorted(reasons.items())]
    text += "\nLeft out (pairs, by reason):\n" + "\n".join(counts) + "\n" if counts else ""
    return text + (reimport_readme(guide) if guide else "")


def format_names() -> tuple[str, ...]:
    """The export formats (``formats/``, one module each), in list order."""
    return export_formats.names()


def export_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "exports"


def export_dir(export: Export) -> Path:
    return export_root() / str(export.pk)


def archive_path(export: Export) -> Path | None:
    return Path(settings.MEDIA_ROOT) / export.archive if export.archive else None


def _prepare_splits(project: Project, options: ExportOptions, user=None) -> tuple[dict, dict]:
    """Assign splits to articles without one; the policy used and articles per split."""
    policy = splits.validate_policy(options.split_policy) if options.split_policy else splits.project_policy(project)
    result = splits.assign(project, policy, user=user)
    return policy.as_dict(), {**result["counts"], "unassigned": result["unassigned"]}


def run_export(project: Project, options: ExportOptions, *, export: Export | None = None, user=None,
               progress: Callable[[float, str], None] | None = None, archive: bool = True, visible=None,
               chunk: int | None = None) -> Export:
    """Write an export of ``project`` and return its :class:`~annotation.models.Export` row.

    Raises:
        ExportError: options that cannot be honoured (no such run, a Likert scheme...).
    """
    started = time.monotonic()
    if export is None:
        export = Export.objects.create(project=project, kind=options.kind, options=options.as_dict(), created_by=user)
    split_policy, split_articles = _prepare_splits(project, options, user)
    source = PairSource(project, options, **({"chunk": chunk} if chunk else {}))
    chain = FilterChain(project, options, visible=visible)
    root = export_dir(export)
    if root.exists():  # a retried job starts over
        shutil.rmtree(root)
    root.mkdir(parents=True)
    total_articles = max(1, source.article_count())
    report = (lambda done: progress(0.95 * done / total_articles, f"{done} of {total_articles} articles")) if progress else None
    timings: dict[str, float] = {}
    tally, exported_articles, paths, left_out, complete_back = _write_formats(root, project, options, source, chain,
                                                                              report)
    timings["write_s"] = round(time.monotonic() - started, 3)
    dropped = {"every format": dict(chain.dropped), "training formats": dict(chain.dropped_training)}
    guide = reimport_guide(options.formats, complete_back)
    (root / "README.txt").write_text(_readme(export.pk, options, project.name, left_out,
                                             {k: v for k, v in dropped.items() if v}, guide))
    paths.append(root / "README.txt")
    data = manifests.build(export.pk, project, options, manifests.Written(
        split_policy, split_articles, chain.describe(), dict(chain.dropped), dict(chain.dropped_training), left_out,
        tally, source.runs, manifests.checksums(root, paths), timings))
    data["reimport"] = guide
    (root / "manifest.json").write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    archive_rel = ""
    if archive:
        if progress:
            progress(0.96, "writing the zip archive")
        zip_started = time.monotonic()
        archive_rel = _zip(root, export, paths + [root / "manifest.json"])
        timings["zip_s"] = round(time.monotonic() - zip_started, 3)
    timings["total_s"] = round(time.monotonic() - started, 3)
    data["timings"] = timings
    _record_finished(export, options, data, archive_rel, exported_articles, user)
    export.refresh_from_db()
    return export


def _write_formats(root: Path, project: Project, options: ExportOptions, source: PairSource, chain: FilterChain,
                   report: Callable[[int], None] | None) -> tuple[manifests.Tally, list[int], list[Path], dict, dict]:
    """Stream the batches through the filters into every chosen format's writer under ``root``
    (training formats also through the training-only filters, ``filters.py``).

    Returns the tally of kept pairs, the exported article ids, the files written and, per format,
    the pairs it left out because it cannot carry their value (by reason) and its complete document
    pairs written and read back complete (``Writer.complete_back``).
    """
    chosen = [export_formats.get(name) for name in options.formats]
    writers = [(f.name, f.training, f.writer.for_export(root, options.splits, project, options)) for f in chosen]
    for _, _, writer in writers:
        writer.open()
    tally = manifests.Tally()
    exported_articles: list[int] = []
    try:
        with _young_collections() as collect:
            for batch in source.batches(report):
                # a LEFT_OUT record has no value under the policy (counted in source.left_out): no format writes it
                kept = [r for r in batch.records if r.provenance != LEFT_OUT and chain.reason(r) is None]
                training = [r for r in kept if chain.training_reason(r) is None]
                exported_articles.append(batch.article_id)
                tally.articles[batch.split] += 1
                for r in kept:
                    tally.add(r)
                for _, is_training, writer in writers:
                    writer.write(batch, training if is_training else kept)
                collect()
    finally:
        paths = [p for _, _, writer in writers for p in writer.close()]
    left_out = {name: writer.left_out() for name, _, writer in writers if writer.left_out()}
    if source.left_out:  # pairs with evidence the gold policy gives no value (gold_reading.REASONS)
        left_out = {"every format (no value under the gold policy)": dict(source.left_out), **left_out}
    complete_back = {name: writer.complete_back() for name, _, writer in writers if writer.complete_back() is not None}
    return tally, exported_articles, paths, left_out, complete_back


COLLECT_EVERY = 200
"""Articles between two collections of the young generations while an export writes (``_young_collections``)."""


@contextmanager
def _young_collections() -> Iterator[Callable[[], None]]:
    """Python's cyclic garbage collector paused while the batches are written, its young generations collected
    every :data:`COLLECT_EVERY` articles (the ``collect`` this yields, called once per article), restored after.
    Issue 37: the collector's automatic full passes rescanned every live object — the writers' buffered rows, the
    chunk's records — again and again: a third of an ``hf`` export's time. The export makes few cycles (reference
    counting frees its garbage); those it makes are young and still collected, so memory stays flat."""
    enabled = gc.isenabled()
    gc.disable()
    seen = 0

    def collect() -> None:
        nonlocal seen
        seen += 1
        if seen % COLLECT_EVERY == 0:
            gc.collect(1)

    try:
        yield collect
    finally:
        if enabled:
            gc.enable()


def _record_finished(export: Export, options: ExportOptions, manifest: dict, archive_rel: str,
                     exported_articles: list[int], user) -> None:
    """Store the manifest on the Export row, lock the exported articles' splits and audit it, in one transaction."""
    project, pairs = export.project, manifest["counts"]["pairs"]
    with transaction.atomic():
        Export.objects.filter(pk=export.pk).update(manifest=manifest, pair_count=pairs, archive=archive_rel,
                                                   finished_at=timezone.now())
        if options.lock:
            splits.lock(exported_articles)
        audit.record("export", actor=user, project=project, target=f"export #{export.pk}", kind=options.kind,
                     formats=list(options.formats), pairs=pairs)


def _zip(root: Path, export: Export, paths: list[Path]) -> str:
    """``alignapp-export-<id>.zip`` beside the files (binary formats stored, text deflated)."""
    name = f"alignapp-export-{export.pk}.zip"
    target = root / name
    with zipfile.ZipFile(target, "w", allowZip64=True) as zf:
        for path in sorted(paths):
            binary = path.suffix in (".arrow", ".parquet")
            zf.write(path, arcname=f"export-{export.pk}/{path.relative_to(root)}",
                     compress_type=zipfile.ZIP_STORED if binary else zipfile.ZIP_DEFLATED,
                     compresslevel=None if binary else 1)
    return str(target.relative_to(Path(settings.MEDIA_ROOT)))


def preview(project: Project, options: ExportOptions, *, max_seconds: float = PREVIEW_SECONDS, visible=None,
            background: bool = False) -> dict:
    """:func:`compute_preview`, kept per state of the data it reads (issue 37), and with ``background`` (the API's) a
    big project's left to a job: :func:`annotation.services.export.kept_preview.preview`."""
    from annotation.services.export import kept_preview

    return kept_preview.preview(project, options, compute_preview, max_seconds=max_seconds, visible=visible,
                                background=background)


def preview_job(job_id: int) -> None:
    """The ``export-preview`` job (:func:`annotation.services.export.kept_preview.preview_job`)."""
    from annotation.services.export import kept_preview

    kept_preview.preview_job(job_id, compute_preview, PREVIEW_SECONDS)


def compute_preview(project: Project, options: ExportOptions, *, max_seconds: float = PREVIEW_SECONDS,
                    visible=None) -> dict:
    """Counts per split, label, class, provenance and level pair, and what each filter would drop
    (``dropped``: from every format; ``dropped_training``: from the training formats only;
    ``left_out``: pairs the wiki-manual TSV cannot carry, by class),
    and (gold) ``policies``: per gold policy, its pairs and where they come from (``breakdown.py``),
    without writing anything (articles without a split are counted in the split the policy would
    give them). Stops after ``max_seconds`` with ``partial: true`` on very large corpora."""
    started = time.monotonic()
    policy = splits.validate_policy(options.split_policy) if options.split_policy else splits.project_policy(project)
    planned = splits.plan(project, policy)
    gold_kind = options.kind == "gold"
    # gold: read once under the widest policy and sort into each policy (breakdown.py)
    read = replace(options, label_policy=breakdown.WIDEST, derived=False) if gold_kind else options
    source = PairSource(project, read, planned=planned, policies=tuple(LABEL_POLICIES) if gold_kind else ())
    chain = FilterChain(project, options, visible=visible)
    per_policy = breakdown.PolicyBreakdown(chain, derived=options.derived, class_values=source.class_values,
                                           counts_as=source.counts_as)
    tally = manifests.Tally()
    unlabelled: Counter = Counter()  # pairs a format that only says aligned/partial/not leaves out
    seen = 0
    partial = False
    for batch in source.batches():
        seen += 1
        tally.articles[batch.split] += 1
        records = (breakdown.records_for(batch, options.label_policy, derived=options.derived,
                                         class_values=source.class_values, counts_as=source.counts_as)
                   if gold_kind else batch.records)
        for r in records:
            if chain.reason(r) is None:
                tally.add(r)
                chain.training_reason(r)
                unlabelled[r.counts_as] += r.counts_as in UNLABELLED_CLASSES
        if gold_kind:
            per_policy.add(batch)
        if time.monotonic() - started > max_seconds:
            partial = True
            break
    current = splits.counts(project)
    rule_left_out = dict(source.left_out_by.get(options.label_policy, {})) if gold_kind else {}
    return {
        "kind": options.kind, "pairs": tally.total, "splits": tally.as_dict(), "dropped": dict(chain.dropped),
        "dropped_training": dict(chain.dropped_training),
        "left_out": {**({"every format (no value under the gold policy)": rule_left_out} if rule_left_out else {}),
                     **({"tsv": {k: n for k, n in unlabelled.items() if n}} if +unlabelled else {})},
        "filters": chain.describe(), "split_policy": policy.as_dict(),
        "split_articles": {name: current.get(name, 0) + sum(1 for v in planned.values() if v == name) for name in splits.NAMES},
        "newly_assigned": len(planned), "articles_seen": seen, "articles_total": source.article_count(),
        "partial": partial, "seconds": round(time.monotonic() - started, 3),
        "label_policy": options.label_policy if gold_kind else None,
        "policies": per_policy.as_dict() if gold_kind else None,
    }


# --- as a background job ---------------------------------------------------------------------

def start_export(project: Project, options: ExportOptions, *, user=None) -> Export:
    """Create the Export row and queue a Job (kind ``export``, cpu queue) that writes it."""
    from annotation.services.background import jobs

    with transaction.atomic():
        job = jobs.start_job(project, "export", params={"options": options.as_dict()}, user=user)
        export = Export.objects.create(project=project, kind=options.kind, options=options.as_dict(), job=job,
                                       created_by=user)
        Job.objects.filter(pk=job.pk).update(params={"export": export.pk, "options": options.as_dict()})
    export.refresh_from_db()
    return export


def run_export_job(job_id: int) -> None:
    """The ``export`` task's body: claim the job, write the export, record the result (errors as data)."""
    if not job_progress.claim(Job, job_id):
        return
    try:
        job = Job.objects.select_related("project").get(pk=job_id)
        export = Export.objects.get(pk=job.params["export"])
        options = ExportOptions.stored(job.params.get("options") or export.options)
        # the creator's access now, not when it was queued: this project and each dedup project
        job_access.check(job.created_by, job.project, [spec["project"] for spec in options.dedup if "project" in spec])
        export = run_export(job.project, options, export=export, user=job.created_by,
                            progress=job_progress.reporter(Job, job_id))
    except Exception as exc:  # noqa: BLE001 - recorded on the row, then re-raised for the log
        job_progress.fail(Job, job_id, exc)
        raise
    job_progress.succeed(Job, job_id, result=summary(export), timings=export.manifest.get("timings", {}))


def summary(export: Export) -> dict:
    counts = export.manifest.get("counts", {})
    return {"export": export.pk, "pairs": export.pair_count,
            "splits": {s: c.get("pairs", 0) for s, c in counts.get("splits", {}).items()},
            "dropped": export.manifest.get("dropped", {}), "archive": bool(export.archive)}


__all__ = ["KINDS", "format_names", "ExportError", "ExportOptions", "archive_path", "export_dir", "preview", "preview_job", "run_export",
           "run_export_job", "start_export", "summary"]
