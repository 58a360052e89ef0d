"""Streaming the exported pairs out of the database, a bounded chunk of articles at a time.

Articles are read by keyset pagination (``id > last`` … ``LIMIT n``), and for each chunk a handful
of queries fetch its splits, documents, sentences, pairs, stored gold and counted votes as plain
tuples (``values_list``; no model instances). Memory therefore depends on the chunk size and the
largest article, never on the corpus size; the same code runs on SQLite and PostgreSQL.

How each exported pair's label is obtained, and what it says about it (issue: "every exported
gold label says how it was obtained").

Gold export: each pair's value is the one gold reading's
(:mod:`annotation.services.review.gold_reading`, the rule :func:`annotation.services.review.gold_rule.resolve`
over everything that decides it — review, curation, training, run scores and calibration read the same;
nothing is written): adjudicated (or automatic) gold wins, else the votes as the label policy reads
them (counted labels plus the "not aligned" each completion implies on the pairs its completer left
unlinked), a qualifying tie being ``undecided`` (class ``undecided``; written only inside a document
pair complete under the policy, else left out and counted), else imported gold with its meaning
(``aligned-or-partial`` stays that), else no value (left out, counted by reason):

* ``majority-or-single`` (the default: the export keeps the annotators' work) — the single most
  frequent of ≥ 2 votes, provenance ``majority``, and a pair with exactly one vote takes it,
  provenance ``single``;
* ``majority`` — as ``majority-or-single`` without the single votes (an article one annotator
  completed is not complete under it);
* ``stored`` — only stored gold (imported or adjudicated), the votes alone left out.

The preview counts, per policy, where the pairs come from (``breakdown.py``).

Auto export: the model's predicted label, provenance ``model``; the label's class comes from the
scheme when the value is one of its values, else ``aligned``/``partial`` stand for themselves and
anything else counts as ``not``.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator

from django.db.models import Exists, OuterRef, Subquery

from annotation.label_schemes import UNKNOWN_KIND, scheme_kind, value_classes
from annotation.label_schemes import class_values as first_values
from annotation.models import (
    Adjudication,
    AlignmentRun,
    Article,
    ArticleCompletion,
    CandidatePair,
    Document,
    Label,
    Prediction,
    Project,
    Status,
    key_indices,
)
from annotation.services.corpus.documents import paragraphs, stream_sentences
from annotation.services.export import derived as derive
from annotation.services.export.grouping import assign_groups
from annotation.services.export.identity import read_kept
from annotation.services.export.options import ExportError, ExportOptions
from annotation.services.export.records import ArticleBatch, PairRecord
from annotation.services.projects.pseudonyms import name_scrubber, project_user_ids, pseudonym
from annotation.services.review import gold_reading
from annotation.services.review.gold_rule import UNDECIDED, Gold

CLASS_NAMES = ("aligned", "partial", "not")
UNLABELLED_CLASSES = (UNKNOWN_KIND, UNDECIDED)
"""Classes that say less than aligned / partial / not: a link of unknown kind and an undecided tie.
A format that can only say aligned / partialAligned / notAligned leaves them out (and counts them)."""


def class_values(project: Project, kind: str) -> dict[str, str]:
    """Class → the label written for derived pairs of that class."""
    if kind == "auto":
        return {c: c for c in CLASS_NAMES}
    return first_values(project.label_scheme)


def check_scheme(project: Project, kind: str) -> None:
    scheme = scheme_kind(project.label_scheme)
    if kind == "gold" and not scheme.gold:
        raise ExportError(f"gold export needs a categorical label scheme; {scheme.why_no_gold}")


def auto_class(label: str, counts_as: dict[str, str]) -> str:
    if label in counts_as:
        return counts_as[label]
    return label if label in ("aligned", "partial") else "not"


def class_of(value: str, counts_as: dict[str, str]) -> str:
    """The class of a gold value: its scheme class, :data:`UNDECIDED` for a tie, else ``not``."""
    return UNDECIDED if value == UNDECIDED else counts_as.get(value, "not")


ARTICLE_CHUNK = 200
LEFT_OUT = "left out"
"""Provenance of a preview record the export's policy gives no value (another policy does)."""


def export_runs(project: Project, options: ExportOptions) -> list[AlignmentRun]:
    """The alignment runs an auto export reads (a model version's succeeded runs and/or named runs)."""
    if options.kind != "auto":
        return []
    runs = AlignmentRun.objects.filter(project=project)
    chosen = []
    if options.model_version is not None:
        found = list(runs.filter(model_version_id=options.model_version, status=Status.SUCCEEDED).order_by("id"))
        if not found:
            raise ExportError(f"model version {options.model_version} has no succeeded alignment run in project {project.name!r}")
        chosen.extend(found)
    if options.runs:
        found = {r.pk: r for r in runs.filter(pk__in=options.runs)}
        missing = [r for r in options.runs if r not in found]
        if missing:
            raise ExportError(f"run(s) {', '.join(map(str, missing))} not found in project {project.name!r}")
        chosen.extend(found[r] for r in options.runs if found[r] not in chosen)
    return chosen


def _pseudonym(user_id: int, username: str, names: bool) -> str:
    return username if names else pseudonym(user_id)


class PairSource:
    """Iterates :class:`ArticleBatch` es of one project (articles in ``splits`` only)."""

    def __init__(self, project: Project, options: ExportOptions, *, chunk: int = ARTICLE_CHUNK,
                 planned: dict[int, str] | None = None, policies: tuple[str, ...] = ()) -> None:
        check_scheme(project, options.kind)
        self.project, self.options, self.chunk = project, options, chunk
        self.planned = planned or {}  # splits a policy would give articles that have none (preview)
        self.counts_as = value_classes(project.label_scheme)  # scheme value → aligned / partial / not
        self.class_values = class_values(project, options.kind)
        self.runs = export_runs(project, options)
        self.run_ids = [r.pk for r in self.runs]
        self.run_rank = {r.pk: k for k, r in enumerate(self.runs)}
        # gold: read through the one gold reading (review/gold_reading.py) under the export's policy and,
        # for the preview, every other policy too (each record's ``by_policy``)
        self.policies = tuple(dict.fromkeys((options.label_policy, *policies))) if options.kind == "gold" else ()
        self.readings: dict[str, dict] = {}
        # pairs with evidence and no value under each policy, by reason (gold_reading.REASONS)
        self.left_out_by: dict[str, Counter] = {p: Counter() for p in self.policies}

    @property
    def left_out(self) -> dict[str, int]:
        """Pairs with evidence the export's gold policy gives no value, by reason."""
        return dict(self.left_out_by.get(self.options.label_policy, {}))

    def article_count(self) -> int:
        wanted = set(self.options.splits)
        return (Article.objects.filter(project=self.project, split__name__in=self.options.splits).count()
                + sum(1 for name in self.planned.values() if name in wanted))

    def batches(self, progress: Callable[[int], None] | None = None) -> Iterator[ArticleBatch]:
        """Article batches in id order, ``self.chunk`` articles per round of queries."""
        last = 0
        done = 0
        wanted = set(self.options.splits)
        while True:
            page = list(Article.objects.filter(project=self.project, id__gt=last).order_by("id")
                        .values_list("id", "title", "split__name")[: self.chunk])
            if not page:
                return
            last = page[-1][0]
            rows = [(a, t, s or self.planned.get(a)) for a, t, s in page]
            rows = [r for r in rows if r[2] in wanted]
            if rows:
                yield from self._chunk(rows)
            done += len(rows)
            if progress is not None:
                progress(done)

    # --- one chunk of articles -----------------------------------------------------------------

    def _chunk(self, rows: list[tuple[int, str, str]]) -> Iterator[ArticleBatch]:
        ids = [r[0] for r in rows]
        if self.options.kind == "gold" and not self._may_have_gold(ids):
            # nothing can give these articles gold (issue 37: a million-pair project's 18,000 articles without
            # labels cost the reads of the 2,000 with them): every article still counts as exported
            for article_id, title, split in rows:
                yield ArticleBatch(article_id=article_id, title=title, split=split, documents={}, records=[],
                                   kept=({}, {}))
            return
        texts = _ChunkTexts(ids)
        texts.load(article_id__in=ids)
        pair_rows = self._pair_rows(ids)
        # a mined pair may link two unrelated documents: its simple side can belong to another article
        foreign = {d for row in pair_rows for d in (row[2], row[3])} - texts.documents.keys()
        if foreign:
            texts.load(id__in=foreign)
        stored, notes = self._stored_gold(ids)
        if self.policies:
            self.readings = gold_reading.read_policies(self.project, self.policies, articles=ids)
        by_article = self._records(rows, pair_rows, texts, stored, notes, self._votes(ids, pair_rows))
        kept = read_kept(ids)  # what the imports kept of their files (identity.py), for the chunk at once
        for article_id, title, split in rows:
            records = by_article.get(article_id, [])
            docs = {d: texts.documents[d] for d in texts.docs_of.get(article_id, [])}
            if self.options.derived and records:
                records = records + derive.compose([r for r in records if r.provenance != LEFT_OUT], docs,
                                                   self.class_values)
            assign_groups(records)
            yield ArticleBatch(article_id=article_id, title=title, split=split, documents=docs, records=records,
                               kept=kept.get(article_id, ({}, {})))

    def _may_have_gold(self, ids: list[int]) -> bool:
        """Whether anything the gold reading reads is there for the articles ``ids``: a label (counted or not),
        a stored gold value, a completion or an import's recorded gold meaning. A superset of what gives
        a pair gold or a document pair completeness, so an article without any has no gold record and no
        complete document pair for a writer to fill."""
        return (Label.objects.filter(pair__article_id__in=ids).exists()
                or Adjudication.objects.filter(pair__article_id__in=ids).exists()
                or ArticleCompletion.objects.filter(article_id__in=ids).exists()
                or Article.objects.filter(pk__in=ids, meta__has_key="gold_import").exists())

    def _pair_rows(self, ids: list[int]) -> list[tuple]:
        """The chunk's exported pairs as tuples ``(pair, article, complex doc, simple doc, complex key,
        simple key, score, predicted label, features, origin, run)``, in article and pair order."""
        if self.options.kind == "auto":
            # one row per (run, pair): the export keeps the latest run's prediction of each pair. The chunk's
            # pair ids bound the predictions too (the same rows), so PostgreSQL reads the (run, pair) index's
            # range instead of hashing a run's million predictions per chunk (issue 37: 0.27 s → 0.03 s a chunk)
            pair_ids = list(CandidatePair.objects.filter(article_id__in=ids).values_list("id", flat=True))
            if not pair_ids:
                return []
            pair_rows = (Prediction.objects.filter(pair__article_id__in=ids, run_id__in=self.run_ids,
                                                   pair_id__gte=min(pair_ids), pair_id__lte=max(pair_ids))
                         .order_by("pair__article_id", "pair_id", "run_id").values_list(
                             "pair_id", "pair__article_id", "pair__complex_document_id", "pair__simple_document_id",
                             "pair__complex_key", "pair__simple_key", "score", "predicted_label", "pair__features",
                             "pair__origin", "run_id"))
        else:
            latest_run = Prediction.objects.filter(pair=OuterRef("pk")).order_by("-run_id").values("run_id")[:1]
            pair_rows = (CandidatePair.objects.filter(article_id__in=ids)
                         .filter(Exists(Adjudication.objects.filter(pair=OuterRef("pk")))
                                 | Exists(Label.objects.filter(pair=OuterRef("pk"), is_test_question=False)))
                         .annotate(latest_run=Subquery(latest_run))
                         .order_by("article_id", "id").values_list(
                             "id", "article_id", "complex_document_id", "simple_document_id", "complex_key", "simple_key",
                             "score", "predicted_label", "features", "origin", "latest_run"))
        return list(pair_rows)

    def _stored_gold(self, ids: list[int]) -> tuple[dict[int, Gold], dict[int, str]]:
        """The chunk's adjudications as displayed (stored value, reviewer, note by pair; the pair's gold
        value is the gold reading's, :meth:`_label_of`)."""
        stored: dict[int, Gold] = {}
        notes: dict[int, str] = {}
        for pair_id, value, provenance, reviewer_id, reviewer, note in (
                Adjudication.objects.filter(pair__article_id__in=ids)
                .values_list("pair_id", "value", "provenance", "reviewer_id", "reviewer__username", "note")):
            who = _pseudonym(reviewer_id, reviewer, self.options.annotator_names) if reviewer_id else None
            stored[pair_id] = Gold(value, provenance, stored=True, reviewer=who)
            notes[pair_id] = note if self.options.annotator_names else self._scrub(note)
        return stored, notes

    def _gold_of(self, policy: str, pair_id: int, documents: tuple[int, int]) -> tuple[Gold | None, str | None]:
        """A pair's gold under ``policy`` from the gold reading, and why it has none: a tie is written
        (as undecided) only inside a document pair exhaustive under the policy."""
        doc = self.readings.get(policy, {}).get(documents)
        if doc is None:
            return None, None
        found = doc.pairs.get(pair_id)
        if found is None:
            return None, doc.left_out.get(pair_id)
        if found.value == UNDECIDED and not doc.exhaustive:
            return None, "tie"
        return found, None

    def _scrub(self, note: str) -> str:
        """The note with the project's user names as pseudonyms (names read once per export)."""
        if getattr(self, "_scrubber", None) is None:
            self._scrubber = name_scrubber(project_user_ids(self.project))
        return self._scrubber(note)

    def _votes(self, ids: list[int], pair_rows: list[tuple]) -> dict[int, list[dict]]:
        """The chunk's counted votes by pair, in label order: of the pairs ``pair_rows`` can need (their ids bound
        the labels read, as the gold reading's ``pair_bounds``: an index range, not every label of the table)."""
        votes: dict[int, list[dict]] = defaultdict(list)
        if not pair_rows:
            return votes
        low, high = min(row[0] for row in pair_rows), max(row[0] for row in pair_rows)
        for pair_id, user_id, username, value, seconds, comment in (
                gold_reading.counted_labels(self.project).filter(pair__article_id__in=ids, pair_id__gte=low,
                                                                 pair_id__lte=high).order_by("pair_id", "id")
                .values_list("pair_id", "annotator_id", "annotator__username", "value", "seconds", "comment")):
            votes[pair_id].append({"annotator": _pseudonym(user_id, username, self.options.annotator_names),
                                   "value": value, "seconds": round(seconds, 1), "comment": comment})
        return votes

    def _label_of(self, pair_id: int, predicted: str | None, pair_votes: list[dict], stored: dict[int, Gold],
                  documents: tuple[int, int]) -> tuple[str, str, str | None, bool, str] | None:
        """``(label, provenance, reviewer, stored gold?, counts as)`` of a pair; None when a manual export
        has no value for it under the precedence rule (:func:`~annotation.services.review.gold_rule.resolve`;
        a tie counts only inside an exhaustively annotated document pair, as :data:`UNDECIDED`)."""
        if self.options.kind == "auto":
            label = predicted or ""
            return label, "model", None, False, auto_class(label, self.counts_as)
        if len(self.policies) == 1:  # the export: its one policy (the preview reads every policy, below)
            policy = self.options.label_policy
            resolved, reason = self._gold_of(policy, pair_id, documents)
            if resolved is None:
                if reason:
                    self.left_out_by[policy][reason] += 1
                doc = self.readings[policy].get(documents)
                if not (doc is not None and doc.exhaustive):
                    return None
                resolved = Gold(UNDECIDED, LEFT_OUT)  # as below
            reviewer = stored[pair_id].reviewer if resolved.stored and pair_id in stored else None
            return (resolved.value, resolved.provenance, reviewer, resolved.stored,
                    class_of(resolved.value, self.counts_as))
        found = {p: self._gold_of(p, pair_id, documents) for p in self.policies}
        for p, (value, reason) in found.items():
            if value is None and reason:
                self.left_out_by[p][reason] += 1
        resolved = found[self.options.label_policy][0]
        if resolved is None:
            doc = self.readings[self.options.label_policy].get(documents)
            if not (doc is not None and doc.exhaustive) and not any(value is not None for value, _ in found.values()):
                return None
            # a placeholder no format writes: inside a complete document pair it keeps the cell from being
            # written "not aligned"; in the preview another policy gives it a value (``by_policy``)
            resolved = Gold(UNDECIDED, LEFT_OUT)
        reviewer = stored[pair_id].reviewer if resolved.stored and pair_id in stored else None
        return (resolved.value, resolved.provenance, reviewer, resolved.stored,
                class_of(resolved.value, self.counts_as))

    def _records(self, rows: list[tuple[int, str, str]], pair_rows: list[tuple], texts: _ChunkTexts,
                 stored: dict[int, Gold], notes: dict[int, str],
                 votes: dict[int, list[dict]]) -> dict[int, list[PairRecord]]:
        """The chunk's :class:`PairRecord` s by article."""
        documents, sentences = texts.documents, texts.sentences
        by_article: dict[int, list[PairRecord]] = defaultdict(list)
        titles = {r[0]: r[1] for r in rows}
        split_of = {r[0]: r[2] for r in rows}
        seen_auto: dict[tuple, int] = {}
        for (pair_id, article_id, c_doc, s_doc, c_key, s_key, score, predicted, features, origin, run_id) in pair_rows:
            pair_votes = votes.get(pair_id, [])
            resolved = self._label_of(pair_id, predicted, pair_votes, stored, (c_doc, s_doc))
            if resolved is None:
                continue
            label, provenance, reviewer, stored_gold, klass = resolved
            c_ids, s_ids = tuple(key_indices(c_key)), tuple(key_indices(s_key))
            c_sent, s_sent = sentences.get(c_doc, []), sentences.get(s_doc, [])
            record = PairRecord(
                pair_id=pair_id, article_id=article_id, article=titles[article_id], split=split_of[article_id],
                complex_level=documents[c_doc]["level"], simple_level=documents[s_doc]["level"],
                complex_rank=documents[c_doc]["rank"], simple_rank=documents[s_doc]["rank"],
                complex_document=c_doc, simple_document=s_doc, complex_ids=c_ids, simple_ids=s_ids,
                complex_sentences=[c_sent[i] for i in c_ids if i < len(c_sent)],
                simple_sentences=[s_sent[i] for i in s_ids if i < len(s_sent)],
                label=label, counts_as=klass, provenance=provenance, votes=pair_votes, reviewer=reviewer,
                note=notes.get(pair_id, "") if provenance != "model" else "",
                score=score, predicted_label=predicted or "", features=features or {}, origin=origin, run=run_id,
                stored_gold=stored_gold,
                stored=(stored[pair_id].value, stored[pair_id].provenance) if pair_id in stored else None,
                by_policy=({p: self._gold_of(p, pair_id, (c_doc, s_doc))[0] for p in self.policies}
                           if len(self.policies) > 1 else None),
            )
            if self.options.kind == "auto":
                # several runs may predict the same pair: keep the latest run's prediction
                key = (c_doc, s_doc, c_key, s_key)
                earlier = seen_auto.get(key)
                if earlier is not None:
                    previous = by_article[article_id][earlier]
                    if self.run_rank.get(run_id, -1) >= self.run_rank.get(previous.run, -1):
                        by_article[article_id][earlier] = record
                    continue
                seen_auto[key] = len(by_article[article_id])
            by_article[article_id].append(record)
        return by_article


class _ChunkTexts:
    """A chunk's documents (level, rank, paragraphs), each article's documents and each document's sentences."""

    def __init__(self, ids: list[int]) -> None:
        self.ids = ids
        self.documents: dict[int, dict] = {}
        self.docs_of: dict[int, list[int]] = defaultdict(list)
        self.sentences: dict[int, list[str]] = defaultdict(list)

    def load(self, **where) -> None:
        """Add the documents matching ``where`` (Document filter) and their sentences."""
        for doc_id, article_id, level, rank in (Document.objects.filter(**where)
                                                .values_list("id", "article_id", "level", "rank")):
            self.documents[doc_id] = {"level": level, "rank": rank, "paragraphs": []}
            if article_id in self.ids:
                self.docs_of[article_id].append(doc_id)
        for doc_id, rows in stream_sentences(**{f"document__{k}": v for k, v in where.items()}):
            self.sentences[doc_id] = [s.text for s in rows]
            self.documents[doc_id]["paragraphs"] = [[s.text for s in p] for _, p in paragraphs(rows)]


def attribute_types(project: Project, *, derived: bool = False) -> dict[str, str]:
    """The pairs' attribute keys with one Arrow type each (``float64``, ``bool`` or ``string``; a key
    whose values mix types is ``string``), so the HF/parquet export has a typed column per attribute."""
    types: dict[str, str] = {"derived": "float64"} if derived else {}
    for features in (CandidatePair.objects.filter(article__project=project).exclude(features={})
                     .values_list("features", flat=True).iterator(chunk_size=2000)):
        for key, value in (features or {}).items():
            kind = ("bool" if isinstance(value, bool) else "float64" if isinstance(value, (int, float))
                    else "string" if isinstance(value, str) else "json")
            if value is None:
                continue
            seen = types.get(key)
            types[key] = kind if seen in (None, kind) else "string"
    return {k: ("string" if v == "json" else v) for k, v in sorted(types.items())}


__all__ = ["ARTICLE_CHUNK", "PairSource", "attribute_types", "export_runs"]
