"""Automatic paragraph alignment and the sentence candidates within aligned paragraphs (the machine side).

Step 1 of the Newsela procedure (neural CRF paper §3.1, App. A; SPEC §5.2, §6): paragraphs are
aligned automatically (``workers.engine.paragraph_alignment``), annotators correct the links
(:mod:`annotation.services.editing.paragraph_correction`), and the sentence pairs to label are
generated inside the aligned paragraphs only.

* **Automatic links** of a document pair come from its ``ParagraphAlignment`` rows when there are
  any; otherwise they are computed on the fly with a *lexical* similarity (the project's when it is
  lexical, else ``charngram`` — CATS' measure, which the paper used), fast enough for a request.
  A researcher can (re)compute them for the whole project with the project's own similarity
  (SBERT included) in a background job (:func:`start_paragraph_job`); document pairs an annotator
  already corrected are left alone there.
* **Candidates** are regenerated from the active links into the project's candidate run (an
  ``AlignmentRun`` with method ``candidates``, status succeeded; its pairs have origin ``candidate``
  and enter the annotation queue). ``Project.config["candidates"]`` chooses which:
  ``"all-in-paragraphs"`` (default; every sentence pair within aligned paragraphs, as in the
  paper) or ``"selected"`` (SPEC §5.3: for each simple sentence, the top-k complex sentences under
  each measure of ``config["candidate_selection"]["measures"]``, restricted to the aligned
  paragraphs). Regeneration replaces that run's pairs of the document pair without duplicating
  them and keeps those that already have a label or gold. With a neural measure configured the
  regeneration is queued as a job instead of running in the request.

Project config (all optional)::

    {"paragraph_alignment": {"similarity": "charngram", "variant": "newsela", "thresholds": {"tau1": 0.1, ...}},
     "candidates": "all-in-paragraphs",
     "candidate_selection": {"measures": ["charngram", "tfidf"], "k": 1}}
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import numpy as np
from django.conf import settings as django_settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.errors import StoredConfigError
from annotation.models import (
    AlignmentRun,
    Article,
    CandidatePair,
    Document,
    Job,
    ParagraphAlignment,
    Prediction,
    Project,
    Status,
)
from annotation.services.alignment.run_saving import link_sentences
from annotation.services.alignment.run_work import document_pairs
from annotation.services.background import jobs, progress
from annotation.services.corpus import article_size
from annotation.services.corpus.documents import document_sentences, sentence_texts, to_engine
from workers.engine import (
    PARAGRAPH_VARIANTS,
    SIMILARITY_NAMES,
    NewselaThresholds,
    Option,
    OptionError,
    SimilarityModel,
    WikiThresholds,
    align_paragraphs,
    check_config,
    defaults,
    get_similarity,
    is_identical,
    paragraph_similarity,
)

LEXICAL = ("jaccard", "tfidf", "charngram")
INLINE_FALLBACK = "charngram"
CANDIDATE_MODES = ("all-in-paragraphs", "selected")
PARAGRAPH_JOB = "paragraph-alignment"
CANDIDATES_JOB = "regenerate-candidates"
CANDIDATE_RUN_METHOD = "candidates"  # runs holding candidates, not predictions




@dataclass(frozen=True)
class ParagraphSettings:
    similarity: str = "charngram"
    variant: str = "newsela"
    thresholds: dict | None = None
    candidates: str = "all-in-paragraphs"
    measures: tuple[str, ...] = ("charngram", "tfidf")
    k: int = 1

    @property
    def inline_similarity(self) -> str:
        return self.similarity if self.similarity in LEXICAL else INLINE_FALLBACK

    @property
    def regenerates_inline(self) -> bool:
        return self.candidates == "all-in-paragraphs" or all(m in LEXICAL for m in self.measures)

    def engine_thresholds(self):
        if not self.thresholds:
            return None
        cls = NewselaThresholds if self.variant == "newsela" else WikiThresholds
        return cls(**self.thresholds)


class ParagraphSettingsError(StoredConfigError):
    """The project config's paragraph or candidate settings refused (the message names the key and the option)."""


def _variant_thresholds(values: dict) -> str | None:
    """The one rule across options: ``thresholds`` are the chosen variant's (its thresholds class's fields), numbers."""
    if values["thresholds"] is None:
        return None
    names = [f.name for f in fields(NewselaThresholds if values["variant"] == "newsela" else WikiThresholds)]
    try:
        check_config(values["variant"], tuple(Option(name, "float", 0.0) for name in names), values["thresholds"])
    except OptionError:
        return f"thresholds: must map {', '.join(names)} to numbers (the {values['variant']} variant's)"
    return None


PARAGRAPH_ALIGNMENT_OPTIONS: tuple[Option, ...] = (
    Option("similarity", "str", "charngram", choices=SIMILARITY_NAMES,
           help="the sentence similarity the automatic paragraph links are computed with"),
    Option("variant", "str", "newsela", choices=PARAGRAPH_VARIANTS,
           help="the paragraph-alignment algorithm (newsela: Jiang et al.'s; wiki: its Wikipedia variant)"),
    Option("thresholds", "object", None, nullable=True,
           help="the variant's thresholds (NewselaThresholds' or WikiThresholds' names), numbers; default theirs"),
)
"""``config["paragraph_alignment"]``: how the automatic paragraph links are computed."""


def _measures(value: list) -> list:
    if not value or any(m not in SIMILARITY_NAMES for m in value):
        raise ValueError(f"must be a non-empty list of: {', '.join(SIMILARITY_NAMES)}")
    return value


CANDIDATE_SELECTION_OPTIONS: tuple[Option, ...] = (
    Option("measures", "list", list(ParagraphSettings.measures), clean=_measures,
           help="the similarities that select candidate pairs within linked paragraphs"),
    Option("k", "int", 1, min=1, help="candidates each sentence keeps per measure"),
)
"""``config["candidate_selection"]``: which sentence pairs of linked paragraphs become candidates (``selected``)."""


def _section(what: str, schema: tuple[Option, ...], rule: Callable[[dict], str | None] | None = None):
    """A clean for one object of the config: its options checked, their defaults filled in, then ``rule`` across them."""
    def clean(value: dict) -> dict:
        try:
            values = {**defaults(schema), **check_config(what, schema, value)}
        except OptionError as exc:
            raise ValueError("; ".join(f"{key}: {why}" for key, why in exc.problems.items())) from None
        problem = rule(values) if rule else None
        if problem:
            raise ValueError(problem)
        return values
    return clean


PARAGRAPH_SETTINGS_OPTIONS: tuple[Option, ...] = (
    Option("paragraph_alignment", "object", None, nullable=True,
           clean=_section("paragraph_alignment", PARAGRAPH_ALIGNMENT_OPTIONS, _variant_thresholds),
           help="automatic paragraph links: " + ", ".join(o.name for o in PARAGRAPH_ALIGNMENT_OPTIONS)),
    Option("candidates", "str", "all-in-paragraphs", choices=CANDIDATE_MODES,
           help="which candidate pairs a run proposes: every pair within linked paragraphs, or those selected"),
    Option("candidate_selection", "object", None, nullable=True,
           clean=_section("candidate_selection", CANDIDATE_SELECTION_OPTIONS),
           help="candidate pairs within paragraph links: " + ", ".join(o.name for o in CANDIDATE_SELECTION_OPTIONS)),
)
"""The three keys of ``Project.config`` the paragraph settings are read from (``config_schema`` declares them with
these)."""


def settings_for(project: Project) -> ParagraphSettings:
    """The project's paragraph and candidate settings, checked against :data:`PARAGRAPH_SETTINGS_OPTIONS`.

    Raises:
        ParagraphSettingsError: every bad key, each with its bad options (and the valid values).
    """
    config = project.config or {}
    given = {o.name: config[o.name] for o in PARAGRAPH_SETTINGS_OPTIONS if config.get(o.name) is not None}
    try:
        values = check_config("project config", PARAGRAPH_SETTINGS_OPTIONS, given)
    except OptionError as exc:
        raise ParagraphSettingsError("; ".join(f"project config {key}: {why}" for key, why in exc.problems.items())) from None
    pa = values.get("paragraph_alignment") or defaults(PARAGRAPH_ALIGNMENT_OPTIONS)
    sel = values.get("candidate_selection") or defaults(CANDIDATE_SELECTION_OPTIONS)
    return ParagraphSettings(pa["similarity"], pa["variant"], pa["thresholds"], values.get("candidates", CANDIDATE_MODES[0]),
                             tuple(sel["measures"]), sel["k"])


def _similarity(name: str) -> SimilarityModel:
    model = (django_settings.DEFAULT_ENCODER or None) if name in ("sbert", "combined") else None
    return get_similarity(name, model)


# --- Automatic links ---------------------------------------------------------------------------

@dataclass(frozen=True)
class AutoLink:
    complex: int  # Paragraph.index
    simple: int
    score: float


def _sentences(doc: Document) -> tuple[list[str], list[int], list[int]]:
    """Texts, the position of each sentence's paragraph, and the paragraph indices in order."""
    paragraphs = list(doc.paragraphs.order_by("index").values_list("index", flat=True))
    position = {p: n for n, p in enumerate(paragraphs)}
    rows = document_sentences([doc.pk])[doc.pk]
    return [s.text for s in rows], [position[s.paragraph] for s in rows], paragraphs


def compute_auto_links(complex_doc: Document, simple_doc: Document, settings: ParagraphSettings,
                       similarity: SimilarityModel | None = None) -> list[AutoLink]:
    """Paragraph links of the engine (``align_paragraphs``) with ``similarity`` (default: the inline one)."""
    c_texts, c_par, c_paragraphs = _sentences(complex_doc)
    s_texts, s_par, s_paragraphs = _sentences(simple_doc)
    if not c_texts or not s_texts:
        return []
    similarity = similarity or get_similarity(settings.inline_similarity)
    sim = np.asarray(similarity.similarity(c_texts, s_texts))
    result = align_paragraphs(sim, c_par, s_par, variant=settings.variant, thresholds=settings.engine_thresholds(),
                              n_complex_paragraphs=len(c_paragraphs), n_simple_paragraphs=len(s_paragraphs))
    simP = paragraph_similarity(sim, c_par, s_par, len(c_paragraphs), len(s_paragraphs))
    scores = simP[0] if settings.variant == "newsela" else simP[1]
    return [AutoLink(c_paragraphs[j], s_paragraphs[i], float(scores[i, j])) for i, j in zip(*np.nonzero(result.matrix))]


def stored_links(complex_doc: Document, simple_doc: Document):
    return ParagraphAlignment.objects.filter(complex_paragraph__document=complex_doc, simple_paragraph__document=simple_doc)


def is_corrected(complex_doc: Document, simple_doc: Document) -> bool:
    return stored_links(complex_doc, simple_doc).filter(Q(source=ParagraphAlignment.MANUAL) | Q(active=False)).exists()


def paragraph_ids(doc: Document) -> dict[int, int]:
    return dict(doc.paragraphs.values_list("index", "pk"))


def store_auto_links(complex_doc: Document, simple_doc: Document, links: Sequence[AutoLink]) -> int:
    c_ids, s_ids = paragraph_ids(complex_doc), paragraph_ids(simple_doc)
    rows = [ParagraphAlignment(complex_paragraph_id=c_ids[link.complex], simple_paragraph_id=s_ids[link.simple],
                               source=ParagraphAlignment.AUTO, score=link.score) for link in links]
    ParagraphAlignment.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


# --- Candidates from the corrected links ---------------------------------------------------------

def candidate_run(project: Project, *, create: bool = True) -> AlignmentRun | None:
    """The project's run holding paragraph-based candidates (created, succeeded, on first use)."""
    run = project.runs.filter(method=CANDIDATE_RUN_METHOD).order_by("pk").first()
    if run is None and create:
        run = AlignmentRun.objects.create(
            project=project, method=CANDIDATE_RUN_METHOD, status=Status.SUCCEEDED, progress=100.0, queue="cpu",
            message="sentence candidates within aligned paragraphs", params={"source": "paragraph correction"},
            started_at=timezone.now(), finished_at=timezone.now())
    return run


class _Masked(SimilarityModel):
    """A measure with the pairs outside aligned paragraphs pushed below any real score."""

    def __init__(self, inner: SimilarityModel, mask: np.ndarray):
        self.inner, self.mask, self.name = inner, mask, inner.name

    def similarity(self, complex_sents, simple_sents) -> np.ndarray:
        sim = np.asarray(self.inner.similarity(complex_sents, simple_sents), dtype=np.float64)
        return np.where(self.mask, sim, -1.0)


def candidate_sentence_pairs(complex_doc: Document, simple_doc: Document, settings: ParagraphSettings,
                             measures: Sequence[SimilarityModel] | None = None) -> dict[tuple[int, int], dict]:
    """``{(complex index, simple index): features}`` within the active paragraph links."""
    links = set(stored_links(complex_doc, simple_doc).filter(active=True)
                .values_list("complex_paragraph__index", "simple_paragraph__index"))
    rows = document_sentences([complex_doc.pk, simple_doc.pk])
    c_rows, s_rows = rows[complex_doc.pk], rows[simple_doc.pk]
    mask = np.array([[(c.paragraph, s.paragraph) in links for s in s_rows] for c in c_rows],
                    dtype=bool).reshape(len(c_rows), len(s_rows))
    if settings.candidates == "all-in-paragraphs":
        return {(c_rows[i].index, s_rows[j].index): {} for i, j in zip(*np.nonzero(mask))}
    from workers.engine import ArticlePair, select_candidates

    if not mask.any():
        return {}
    measures = measures or [_similarity(name) for name in settings.measures]
    pair = ArticlePair(f"{complex_doc.pk}-{simple_doc.pk}", to_engine(c_rows), to_engine(s_rows))
    found = select_candidates(pair, [_Masked(m, mask) for m in measures], k=settings.k)
    return {(c_rows[i].index, s_rows[j].index): {name: round(v, 4) for name, v in found.scores[(i, j)].items()}
            for i, j in found.pairs if mask[i, j]}


@transaction.atomic
def regenerate_candidates(article: Article, complex_doc: Document, simple_doc: Document,
                          settings: ParagraphSettings | None = None, measures: Sequence[SimilarityModel] | None = None) -> dict:
    """Make the candidate run's predictions of one document pair the pairs within aligned paragraphs.

    A wanted sentence pair that exists already (predicted by a run, linked by an annotator,
    imported) is reused, never created twice; a candidate no longer within aligned paragraphs loses
    the candidate run's prediction unless someone labelled it or it has gold, and the pair itself is
    deleted only when nothing else holds it (no other run's prediction, no label, no gold). Returns ``{"run", "pairs", "created",
    "deleted", "kept_labelled"}``.
    """
    settings = settings or settings_for(article.project)
    run = candidate_run(article.project)
    wanted = candidate_sentence_pairs(complex_doc, simple_doc, settings, measures)
    doc_pairs = CandidatePair.objects.filter(complex_document=complex_doc, simple_document=simple_doc)
    have = {(int(c), int(s)): pk for pk, c, s in doc_pairs.values_list("pk", "complex_key", "simple_key") if "," not in c + s}
    predicted = set(Prediction.objects.filter(run=run, pair__in=doc_pairs).values_list("pair_id", flat=True))
    wanted_ids = {pk for key, pk in have.items() if key in wanted}
    stale = predicted - wanted_ids
    labelled = set(CandidatePair.objects.filter(pk__in=stale).filter(Q(labels__isnull=False) | Q(gold__isnull=False))
                   .values_list("pk", flat=True))
    kept_labelled = len(labelled)
    Prediction.objects.filter(run=run, pair_id__in=stale - labelled).delete()  # labelled candidates stay
    orphans = CandidatePair.objects.filter(pk__in=stale - labelled, origin="candidate", predictions__isnull=True)
    _, per_model = CandidatePair.objects.filter(pk__in=orphans.values("pk")).delete()
    texts = sentence_texts([complex_doc.pk, simple_doc.pk])
    rows = [CandidatePair(article=article, complex_document=complex_doc, simple_document=simple_doc,
                          complex_key=str(c), simple_key=str(s), origin="candidate", features=features,
                          score=max(features.values()) if features else None,
                          identical=is_identical(texts[complex_doc.pk].get(c, ""), texts[simple_doc.pk].get(s, "")))
            for (c, s), features in sorted(wanted.items()) if (c, s) not in have]
    CandidatePair.objects.bulk_create(rows, ignore_conflicts=True)
    by_key = {(int(c), int(s)): p for p in doc_pairs for c, s in [(p.complex_key, p.simple_key)] if "," not in c + s}
    Prediction.objects.bulk_create(
        [Prediction(run=run, pair=by_key[key], score=max(f.values()) if f else None, predicted_label="", features=f)
         for key, f in sorted(wanted.items()) if key in by_key],
        ignore_conflicts=True)
    link_sentences(by_key[key] for key in wanted if key in by_key)
    AlignmentRun.objects.filter(pk=run.pk).update(pair_count=Prediction.objects.filter(run=run).count())
    return {"run": run.pk, "pairs": len(wanted), "created": len(rows),
            "deleted": per_model.get(CandidatePair._meta.label, 0), "kept_labelled": kept_labelled}


# --- The whole project, in a job -----------------------------------------------------------------

def start_paragraph_job(project: Project, user=None, *, candidates: bool = True) -> Job:
    """Queue the (re)computation of every document pair's automatic paragraph links with the
    project's similarity (and, with ``candidates``, the regeneration of their sentence candidates)."""
    settings_for(project)  # refuse a bad config now rather than in the worker
    return jobs.start_job(project, PARAGRAPH_JOB, params={"candidates": bool(candidates)}, user=user)


#: Skipped document pairs the job result describes one by one (the count covers them all).
SKIPPED_SHOWN = 50


def _too_large(complex_doc: Document, simple_doc: Document) -> str | None:
    """Why the job leaves this document pair alone, or None: both its automatic links and its
    candidates compare every complex sentence with every simple one (``ARTICLE_MAX_SIMILARITY_CELLS``)."""
    try:
        article_size.check_cells(article_size.sentence_count(complex_doc), article_size.sentence_count(simple_doc),
                                 "is too much for one document pair; its paragraph links and candidates were left as they were")
    except article_size.ArticleTooLarge as exc:
        return str(exc)
    return None


def align_project_paragraphs(project: Project, *, candidates: bool = True,
                             report: Callable[[float, str], None] = lambda f, m: None) -> dict:
    """Recompute the automatic links of every adjacent document pair nobody corrected yet.

    A document pair over ``ARTICLE_MAX_SIMILARITY_CELLS`` is skipped, not computed: ``skipped``
    counts them and ``skipped_pairs`` names the first :data:`SKIPPED_SHOWN` with the reason."""
    settings = settings_for(project)
    started = time.monotonic()
    similarity = _similarity(settings.similarity)
    measures = [_similarity(name) for name in settings.measures] if settings.candidates == "selected" else None
    work = [(a, c, s) for a in project.articles.order_by("id") for c, s in document_pairs(a, [])]
    result = {"document_pairs": len(work), "recomputed": 0, "kept_corrected": 0, "links": 0, "candidate_pairs": 0,
              "skipped": 0, "skipped_pairs": []}
    for n, (article, complex_doc, simple_doc) in enumerate(work, start=1):
        reason = _too_large(complex_doc, simple_doc)
        if reason is not None:
            result["skipped"] += 1
            if len(result["skipped_pairs"]) < SKIPPED_SHOWN:
                result["skipped_pairs"].append({"article": article.pk, "title": article.title, "complex": complex_doc.level,
                                                "simple": simple_doc.level, "reason": reason})
            report(n / max(1, len(work)), f"paragraphs of {n}/{len(work)} document pairs")
            continue
        with transaction.atomic():
            if is_corrected(complex_doc, simple_doc):
                result["kept_corrected"] += 1
            else:
                links = compute_auto_links(complex_doc, simple_doc, settings, similarity)
                stored_links(complex_doc, simple_doc).delete()
                result["links"] += store_auto_links(complex_doc, simple_doc, links)
                result["recomputed"] += 1
            if candidates:
                result["candidate_pairs"] += regenerate_candidates(article, complex_doc, simple_doc, settings, measures)["pairs"]
        report(n / max(1, len(work)), f"paragraphs of {n}/{len(work)} document pairs")
    if result["skipped"]:
        result["message"] = (f"{result['skipped']} document pair(s) skipped: more complex × simple sentences than "
                             f"ARTICLE_MAX_SIMILARITY_CELLS={article_size.max_similarity_cells()}")
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


def run_job(job_id: int) -> None:
    """Worker entry point of both job kinds (``paragraph-alignment``, ``regenerate-candidates``)."""
    if not progress.claim(Job, job_id):
        return
    report = progress.reporter(Job, job_id)
    try:
        job = Job.objects.select_related("project").get(pk=job_id)
        if job.kind == CANDIDATES_JOB:
            article = job.project.articles.get(pk=job.params["article"])
            docs = {d.pk: d for d in article.documents.all()}
            result = regenerate_candidates(article, docs[job.params["complex"]], docs[job.params["simple"]])
        else:
            result = align_project_paragraphs(job.project, candidates=job.params.get("candidates", True), report=report)
    except Exception as exc:  # noqa: BLE001 - recorded on the row (errors as data), then re-raised for the log
        progress.fail(Job, job_id, exc)
        raise
    progress.succeed(Job, job_id, result=result)
