"""The gold export preview from stored per-article parts (issue 37: a million pairs).

The preview of a gold export (:func:`annotation.services.export.compute_preview`) reads every article
with evidence through the one gold reading, builds its records, runs the filters and sorts them into
each gold policy: ~25 articles/s, so at 2,000 labelled articles of a 20,000-article project it stopped
at its 20-s budget with ``partial: true`` and computed again after every label. Yet every count it shows
is a sum over articles, and an article's share changes only when *its* evidence does.

So each article's share (a :class:`~annotation.models.PreviewPart`: its pairs per split, label, class,
provenance and level pair, what each filter drops, what the tsv leaves out, each policy's pairs and
origins, the pairs the rule gives no value) is stored under two keys:

* :func:`project_key`: the options and everything project-wide the share depends on — the settings and
  label scheme (its values too: an edit in place), memberships (an exclusion changes whose votes count), runs (a finished run rewrites the
  pairs' scores, which thresholds read), the highest pair, sentence and article ids (imports) — a change
  there makes every part stale;
* :func:`article_marks`: the article's own evidence — its labels (count, highest id, latest edit, test
  questions), its gold (count, highest id, latest change), its completions (count, highest id), whether
  its imported gold is exhaustive, and its split (stored or planned) — a label recomputes that article's
  part only.

:func:`preview` sums the current parts (and counts the articles per split in SQL: an article without
evidence has no pair in a gold export), computes the stale and missing ones (the same code as
:func:`compute_preview`, one article at a time), and stops after its budget with ``partial: true`` when
there are too many (the first preview of a big project): each call stores what it computed, so the next
call goes on from there. ``tests/annotation/services/export/test_preview_parts.py`` checks the answer
equals :func:`compute_preview`'s after each kind of change.
"""
from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from dataclasses import asdict, replace

from django.db import IntegrityError, transaction
from django.db.models import Count, Max

from annotation.digest import digest
from annotation.models import (
    AlignmentRun,
    Article,
    CandidatePair,
    LabelScheme,
    Membership,
    PreviewAnswer,
    PreviewPart,
    Project,
    Sentence,
    Split,
)
from annotation.services.export import breakdown, manifest, splits
from annotation.services.export.filters import FilterChain
from annotation.services.export.options import LABEL_POLICIES, ExportOptions
from annotation.services.export.source import UNLABELLED_CLASSES, PairSource
from annotation.services.review import gold_marks

VERSION = 1
"""Bumped when what a part holds changes (every stored part is then stale)."""
CHUNK = 50
"""Articles computed per round of queries."""


def project_key(project: Project, options: ExportOptions) -> str:
    """A digest of the options and of the project-wide marks every part depends on (module docstring)."""
    project = Project.objects.only("config", "label_scheme_id").get(pk=project.pk)
    parts: list[object] = [VERSION, json.dumps(asdict(options), sort_keys=True, default=str), project.pk,
                           project.config, project.label_scheme_id]
    parts.append(list(LabelScheme.objects.filter(pk=project.label_scheme_id).values_list("kind", "values", "dimensions")))
    parts.append(list(Membership.objects.filter(project=project).order_by("pk").values_list("user_id", "role", "excluded_at")))
    parts.append(list(AlignmentRun.objects.filter(project=project).order_by("pk")
                      .values_list("pk", "status", "pair_count", "finished_at")))
    parts += [m.objects.order_by().aggregate(last=Max("pk")) for m in (CandidatePair, Sentence)]
    parts.append(Article.objects.order_by().aggregate(n=Count("pk"), last=Max("pk")))
    return digest(parts)


def article_marks(project: Project, planned: dict[int, str]) -> dict[int, str]:
    """``{article: digest of its evidence marks and its split}`` of every article with evidence (the gold
    reading's marks, :func:`~annotation.services.review.gold_marks.evidence_marks`; the split stored or planned)."""
    marks = gold_marks.evidence_marks(project)
    split_of = dict(Split.objects.filter(article__project=project).values_list("article_id", "name"))
    return {a: digest([found, split_of.get(a) or planned.get(a)]) for a, found in marks.items()}


class _Articles(PairSource):
    """The preview's :class:`PairSource` over the given articles only, counting each article's pairs the
    rule gives no value (``left_out_by`` is the whole source's)."""

    def __init__(self, *args, articles: list[int], counted: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.ids, self.counted = articles, counted
        self.left_out_of: dict[int, Counter] = defaultdict(Counter)

    def batches(self, progress=None):
        wanted = set(self.options.splits)
        for start in range(0, len(self.ids), self.chunk):
            page = (Article.objects.filter(project=self.project, pk__in=self.ids[start:start + self.chunk])
                    .order_by("id").values_list("id", "title", "split__name"))
            rows = [(a, t, s or self.planned.get(a)) for a, t, s in page]
            rows = [r for r in rows if r[2] in wanted]
            if rows:
                yield from self._chunk(rows)

    def _label_of(self, pair_id, predicted, pair_votes, stored, documents):
        # as PairSource._label_of counts them under the export's policy, by article (a reason comes only
        # with a document pair's reading)
        value, reason = self._gold_of(self.counted, pair_id, documents)
        if value is None and reason:
            self.left_out_of[self.readings[self.counted][documents].article_id][reason] += 1
        return super()._label_of(pair_id, predicted, pair_votes, stored, documents)


def compute_parts(project: Project, options: ExportOptions, planned: dict[int, str], articles: list[int], *,
                  deadline: float | None = None) -> dict[int, dict]:
    """``{article: its part}`` of ``articles`` (from the first chunk on, those past ``deadline``, a
    ``time.monotonic()``, are left out), by the same steps as :func:`annotation.services.export.compute_preview`, one article at a time."""
    read = replace(options, label_policy=breakdown.WIDEST, derived=False)
    out: dict[int, dict] = {}
    for start in range(0, len(articles), CHUNK):
        if start and deadline is not None and time.monotonic() > deadline:  # one chunk at least: progress
            break
        ids = articles[start:start + CHUNK]
        source = _Articles(project, read, planned=planned, policies=tuple(LABEL_POLICIES), articles=ids,
                           counted=options.label_policy, chunk=CHUNK)
        chain = FilterChain(project, options)
        for batch in source.batches():
            chain.dropped, chain.dropped_training = Counter(), Counter()
            tally, unlabelled = manifest.Tally(), Counter()
            per_policy = breakdown.PolicyBreakdown(chain, derived=options.derived, class_values=source.class_values,
                                                   counts_as=source.counts_as)
            for r in breakdown.records_for(batch, options.label_policy, derived=options.derived,
                                           class_values=source.class_values, counts_as=source.counts_as):
                if chain.reason(r) is None:
                    tally.add(r)
                    chain.training_reason(r)
                    unlabelled[r.counts_as] += r.counts_as in UNLABELLED_CLASSES
            per_policy.add(batch)
            out[batch.article_id] = {
                "split": batch.split, "total": tally.total, "tally": {s: dict(c) for s, c in tally.per_split.items()},
                "dropped": dict(chain.dropped), "dropped_training": dict(chain.dropped_training),
                "unlabelled": dict(unlabelled), "policies": {p: dict(c) for p, c in per_policy.counts.items()},
                "left_out": dict(source.left_out_of.get(batch.article_id, {}))}
        for article in ids:  # not in the export's splits, or no pair with evidence: an empty part
            out.setdefault(article, {})
    return out


def preview(project: Project, options: ExportOptions, *, max_seconds: float) -> dict:
    """The gold preview (as :func:`annotation.services.export.compute_preview` answers it) from the stored
    parts, computing (and storing) the missing and stale ones until ``max_seconds`` (then ``partial``)."""
    started = time.monotonic()
    policy = splits.validate_policy(options.split_policy) if options.split_policy else splits.project_policy(project)
    planned = splits.plan(project, policy)
    key, options_key = project_key(project, options), _options_key(options)
    marks = article_marks(project, planned)
    stored = {a: (mark, part) for a, mark, part in PreviewPart.objects.filter(project=project, options=options_key,
                                                                               key=key)
              .values_list("article_id", "mark", "part")}
    parts = {a: found[1] for a, found in stored.items() if a in marks and found[0] == marks[a]}
    missing = sorted(a for a in marks if a not in parts)
    if missing:
        computed = compute_parts(project, options, planned, missing, deadline=started + max_seconds)
        _store(project, (options_key, key), {a: (marks[a], part) for a, part in computed.items()})
        parts.update(computed)
    answer = _answer(project, options, policy, planned, parts, unread=len(marks) - len(parts))
    return {**answer, "seconds": round(time.monotonic() - started, 3)}


def _options_key(options: ExportOptions) -> str:
    return digest([VERSION, json.dumps(asdict(options), sort_keys=True, default=str)])


def answer_of(project: Project, options: ExportOptions, state: str) -> dict | None:
    """The preview last kept for ``options`` when it was computed under ``state`` (the caller's digest of the
    data's marks), else None."""
    return (PreviewAnswer.objects.filter(project=project, options=_options_key(options), state=state)
            .values_list("answer", flat=True).first())


def has_answer(project: Project, options: ExportOptions) -> bool:
    """Whether a preview of ``options`` was kept for ``project`` (of any state: its parts are stored, so a later
    state's preview reads only what changed)."""
    return PreviewAnswer.objects.filter(project=project, options=_options_key(options)).exists()


def latest_answer(project: Project, options: ExportOptions) -> tuple[str, dict] | None:
    """``(state, answer)`` of the preview last kept for ``options`` (of whatever state), or None."""
    return (PreviewAnswer.objects.filter(project=project, options=_options_key(options))
            .values_list("state", "answer").first())


def keep_answer(project: Project, options: ExportOptions, state: str, answer: dict) -> None:
    """Keep ``answer`` as the preview of ``options`` under ``state`` (replacing the one kept before)."""
    try:
        with transaction.atomic():
            PreviewAnswer.objects.update_or_create(project=project, options=_options_key(options),
                                                   defaults={"state": state, "answer": answer})
    except IntegrityError:  # another request kept it at the same moment
        pass


def _store(project: Project, keys: tuple[str, str], found: dict[int, tuple[str, dict]]) -> None:
    """Keep ``found`` (``{article: (mark, part)}``) under ``keys`` (the options' digest, the project key),
    replacing each article's row for those options (other options' parts stay)."""
    if not found:
        return
    options, key = keys
    PreviewPart.objects.bulk_create(
        [PreviewPart(project=project, article_id=a, options=options, key=key, mark=mark, part=part)
         for a, (mark, part) in found.items()],
        update_conflicts=True, unique_fields=["article", "options"], update_fields=["key", "mark", "part"])


def _answer(project: Project, options: ExportOptions, policy: splits.SplitPolicy, planned: dict[int, str],
            parts: dict[int, dict], *, unread: int) -> dict:
    tally = manifest.Tally()
    dropped, dropped_training, unlabelled, left_out = Counter(), Counter(), Counter(), Counter()
    policies: dict[str, Counter] = {p: Counter() for p in LABEL_POLICIES}
    for part in parts.values():
        if not part:
            continue
        tally.total += part["total"]
        for split, counts in part["tally"].items():
            tally.per_split[split].update(counts)
        dropped.update(part["dropped"])
        dropped_training.update(part["dropped_training"])
        unlabelled.update(part["unlabelled"])
        left_out.update(part["left_out"])
        for p, counts in part["policies"].items():
            policies[p].update(counts)
    wanted = set(options.splits)
    stored = dict(Article.objects.filter(project=project, split__name__in=options.splits).order_by()
                  .values_list("split__name").annotate(n=Count("pk")).values_list("split__name", "n"))
    tally.articles.update(stored)
    tally.articles.update(name for name in planned.values() if name in wanted)
    per_policy = breakdown.PolicyBreakdown(FilterChain(project, options), derived=options.derived, class_values={})
    per_policy.counts = policies
    current = splits.counts(project)
    chain = FilterChain(project, options)
    articles = sum(tally.articles.values())
    return {
        "kind": options.kind, "pairs": tally.total, "splits": tally.as_dict(), "dropped": dict(dropped),
        "dropped_training": dict(dropped_training),
        "left_out": {**({"every format (no value under the gold policy)": dict(left_out)} if +left_out else {}),
                     **({"tsv": {k: n for k, n in unlabelled.items() if n}} if +unlabelled else {})},
        "filters": chain.describe(), "split_policy": policy.as_dict(),
        "split_articles": {name: current.get(name, 0) + sum(1 for v in planned.values() if v == name) for name in splits.NAMES},
        "newly_assigned": len(planned), "articles_seen": articles - unread, "articles_total": articles,
        "partial": unread > 0, "seconds": None, "label_policy": options.label_policy,
        "policies": per_policy.as_dict(),
    }


__all__ = ["answer_of", "article_marks", "compute_parts", "has_answer", "keep_answer", "latest_answer", "preview", "project_key"]
