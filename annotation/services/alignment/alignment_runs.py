"""Alignment runs: validate and queue them, and execute them in one process (load → engine → save).

Workers run a run in chunks that many of them share (:mod:`annotation.services.alignment.run_chunks`);
:func:`execute_run` here is the one-process path (``manage.py align --now``, methods with run-level
state) and the reference the chunked run must equal.

Writing is idempotent: sentence pairs are upserted on their identity (documents, sentence sets) and
the run's predictions on (run, pair), so re-delivering a task or retrying after a crash never
duplicates a pair, and a second run over the same corpus adds only pairs nobody proposed before.

A run works in chunks of ``ALIGN_BATCH_ARTICLES`` document pairs; after each chunk is saved its
``checkpoint`` records how many document pairs (of which list: a fingerprint) are done, so an attempt
that takes over from a lost worker, or a retry, starts at the first unfinished chunk. The run's
``pair_count`` counts the pairs written so far after each chunk, and the progress (fraction and
message) runs once over all chunks, not again per chunk.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator

from django.conf import settings
from django.db import transaction

from annotation.models import (
    MINING_METHOD,
    AlignmentRun,
    Article,
    CandidatePair,
    Document,
    PairSentence,
    Prediction,
    Project,
    Sentence,
    Side,
    indices_key,
)
from annotation.services import audit
from annotation.services.alignment import run_options
from annotation.services.background import jobs, progress
from annotation.services.background.registry import Queue
from annotation.services.corpus.documents import engine_pair, sentence_texts
from annotation.services.projects.language_tools import BUNDLED_ENCODER, project_encoder, project_pipeline
from workers.engine import AlignedPair, Alignment, ArticlePair, is_identical, method_defaults


def available_methods() -> list[str]:
    """The engine's aligners, and ``muss-corpus``: mining across every document of the project
    (:mod:`annotation.services.alignment.mining`)."""
    from workers.engine import available_methods as engine_methods

    return [*engine_methods(), MINING_METHOD]


def start_run(project: Project, method: str, *, params: dict | None = None, level_pairs: list | None = None,
              model_version=None, user=None, queue: str = Queue.GPU.value, enqueue: bool = True) -> AlignmentRun:
    """Create an alignment run and queue it (on the gpu queue by default; it falls back to CPU)."""
    methods = available_methods()
    if method not in methods:
        raise ValueError(f"unknown method {method!r}; choose one of: {', '.join(methods)}")
    if queue not in {q.value for q in Queue}:
        raise ValueError(f"unknown queue {queue!r}; choose one of: {', '.join(q.value for q in Queue)}")
    if params is not None and not isinstance(params, dict):
        raise ValueError("params must be a JSON object")
    for pair in level_pairs or []:
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            raise ValueError("level_pairs must be a list of [complex_level, simple_level] pairs")
    skip = (params or {}).get("skip_articles", [])
    if not isinstance(skip, list) or not all(isinstance(a, int) and not isinstance(a, bool) for a in skip):
        raise ValueError("params.skip_articles must be a list of article ids")
    # a bad option, a model path or another project's model fails here, not in a worker
    run_options.check(project, method, params or {}, model_version)
    if model_version is None and method == "crf":
        model_version = run_options.default_version(project)  # the version a researcher promoted, if any
    run = AlignmentRun.objects.create(project=project, method=method, params=params or {}, level_pairs=level_pairs or [],
                                      model_version=model_version, created_by=user, queue=queue)
    audit.record("run.start", actor=user, project=project, target=f"run #{run.pk}", method=method)
    if enqueue:
        jobs.enqueue_run(run)
    return run


def document_pairs(article: Article, level_pairs: list) -> list[tuple[Document, Document]]:
    """Which versions of an article to align: the given level pairs, or each adjacent pair of ranks."""
    docs = list(article.documents.order_by("rank"))
    if level_pairs:
        by_level = {d.level: d for d in docs}
        return [(by_level[c], by_level[s]) for c, s in level_pairs if c in by_level and s in by_level]
    return list(zip(docs, docs[1:]))


# Settings a job stored in ``project.config[method]`` that a run of that method uses unless its own
# params set any of them (the ``wivico-thresholds`` job writes ``config["wivico"]``).
PROJECT_METHOD_KEYS: dict[str, tuple[str, ...]] = {
    "wivico": ("threshold", "partial_threshold", "thresholds", "partial_thresholds", "propagation"),
}


def project_method_defaults(project: Project, method: str, params: dict) -> dict:
    """The project-level defaults of ``method`` (e.g. derived WIVICO thresholds), unless overridden."""
    keys = PROJECT_METHOD_KEYS.get(method, ())
    stored = (project.config or {}).get(method)
    if not keys or not isinstance(stored, dict) or any(k in params for k in keys):
        return {}
    return {k: stored[k] for k in keys if k in stored}


# How a calibrated ``config["thresholds"]`` (dashboard → calibrate) maps onto a method's options.
CALIBRATED_OPTIONS: dict[str, dict[str, str]] = {
    **{m: {"aligned": "aligned_threshold", "partial": "partial_threshold"} for m in ("jaccard", "tfidf", "charngram", "sbert")},
    "crf": {"aligned": "aligned_threshold", "partial": "min_link_score"},
}


def calibrated_defaults(project: Project, method: str, params: dict) -> dict:
    """Thresholds calibrated on human labels of an earlier run *of the same method* (scores of
    different methods are not comparable), unless the run's own params set them."""
    stored = (project.config or {}).get("thresholds")
    options = CALIBRATED_OPTIONS.get(method)
    if not isinstance(stored, dict) or not options or any(o in params for o in options.values()):
        return {}
    source = AlignmentRun.objects.filter(pk=stored.get("source_run"), project=project).values_list("method", flat=True).first()
    if source != method:
        return {}
    values = {option: float(stored[key]) for key, option in options.items() if stored.get(key) is not None}
    if method != "crf" and "aligned_threshold" in values and "partial_threshold" not in values:
        # no partial labels to calibrate on: keep the method's own cut-off, never above the new one
        default = method_defaults(method)["partial_threshold"]
        values["partial_threshold"] = min(default, values["aligned_threshold"])
    return values


def _batches(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def execute_run(run_id: int) -> None:
    """Run the aligner for every article of the run's project and store the pairs (a mining run:
    plan it and queue its chunks, see :mod:`annotation.services.alignment.mining`)."""
    from annotation.services.alignment import mining

    if AlignmentRun.objects.filter(pk=run_id, method=MINING_METHOD).exists():
        mining.execute(run_id)
        return
    if not progress.claim(AlignmentRun, run_id):
        return
    report = progress.reporter(AlignmentRun, run_id)
    try:
        _execute(AlignmentRun.objects.select_related("model_version").get(pk=run_id), report)
    except progress.Cancelled:
        return  # someone cancelled the run: the document pairs written so far stay, nothing more is done
    except Exception as exc:  # noqa: BLE001 - stored on the run (errors as data), then re-raised
        if not progress.interrupted(AlignmentRun, run_id, exc):  # a transient error: the retry resumes it
            progress.fail(AlignmentRun, run_id, exc)
        raise


def _execute(run: AlignmentRun, report) -> None:
    from workers.engine import get_aligner, is_run_level

    started = time.monotonic()
    model_path = run.model_version.path if run.model_version else (run.params.get("model") or project_encoder(run.project))
    defaults = {**project_method_defaults(run.project, run.method, run.params),
                **calibrated_defaults(run.project, run.method, run.params)}
    config = {**defaults, **{k: v for k, v in run.params.items() if k not in APP_PARAMS}}
    aligner = get_aligner(run.method, config, model_path)
    access = AccessScorer(run.project.language, project_pipeline(run.project)) if run.params.get("access_attributes", True) else None
    load_seconds = time.monotonic() - started

    skip = set(run.params.get("skip_articles") or ())
    work = [(a, c, s) for a in run.project.articles.order_by("id") if a.pk not in skip
            for c, s in document_pairs(a, run.level_pairs)]
    # resume after the chunks an earlier attempt saved, if it worked through this same list
    fingerprint = hashlib.sha1(" ".join(f"{c.pk}-{s.pk}" for _, c, s in work).encode()).hexdigest()[:16]
    saved = run.checkpoint or {}
    resumed = min(int(saved.get("done", 0)), len(work)) if saved.get("work") == fingerprint else 0
    AlignmentRun.objects.filter(pk=run.pk).update(articles_total=len(work), articles_done=resumed)
    # A run-level method (WIVICO's cut-offs) first sees every document pair of the run, so what it
    # decides for one does not depend on the batch that document pair lands in.
    run_level: dict | None = None
    start = 0.0
    prepare_seconds = 0.0
    if is_run_level(aligner) and work:
        t0 = time.monotonic()
        start = RUN_LEVEL_SHARE
        run_level = aligner.prepare(  # type: ignore[attr-defined]
            _engine_pairs(run, work), progress=lambda f, m: report(start * f, m), total=len(work))
        prepare_seconds = time.monotonic() - t0
    align_seconds = write_seconds = 0.0
    done = resumed
    for batch in _batches(work[resumed:], settings.ALIGN_BATCH_ARTICLES):
        progress.check_cancelled(AlignmentRun, run.pk)
        inputs = [engine_pair(c, s) for _, c, s in batch]
        t0 = time.monotonic()
        base = start + (1 - start) * done / max(1, len(work))
        span = (1 - start) * len(batch) / max(1, len(work))
        where = f"document pairs {done + 1}–{done + len(batch)} of {len(work)}"  # one progress over all chunks
        outputs = aligner.align(inputs, progress=lambda f, m, base=base, span=span, where=where:
                                report(base + span * f, f"{where}: {m}"))
        t1 = time.monotonic()
        save_alignments(run, [(article, complex_doc, simple_doc, alignment, access.for_pair(pair) if access else None)
                              for (article, complex_doc, simple_doc), pair, alignment in zip(batch, inputs, outputs)])
        write_seconds += time.monotonic() - t1
        align_seconds += t1 - t0
        done += len(batch)
        written = Prediction.objects.filter(run=run).count()  # shown as the run's pairs while it runs
        if not progress.save_checkpoint(AlignmentRun, run.pk, {"work": fingerprint, "done": done}, articles_done=done,
                                        pair_count=written):
            progress.check_cancelled(AlignmentRun, run.pk)  # another attempt owns the run now: stop here
        report(start + (1 - start) * done / max(1, len(work)),
               f"aligned {done}/{len(work)} document pairs · {written} pairs written")
    pair_count = Prediction.objects.filter(run=run).count()
    timings = {"load_model_s": round(load_seconds, 3), "align_s": round(align_seconds, 3),
               "write_s": round(write_seconds, 3), "total_s": round(time.monotonic() - started, 3)}
    if run_level is not None:
        timings["run_level_s"] = round(prepare_seconds, 3)
    result = {"document_pairs": len(work), "pairs": pair_count, "project_defaults": defaults,
              "language_tools": {"encoder": model_path or BUNDLED_ENCODER,
                                 "spacy_pipeline": access.pipeline if access is not None else None},
              "missing_features": dict(access.skipped) if access is not None else
              {"access_*": "ACCESS attributes switched off for this run (params.access_attributes = false)"}}
    if run_level is not None:
        result["run_level"] = run_level
    if resumed:
        result["resumed_from"] = resumed  # document pairs an earlier attempt had finished
    if access is not None:
        result["access_attributes"] = {"parser": access.parser_note, "skipped": access.skipped}
    progress.succeed(AlignmentRun, run.pk, result=result, timings=timings, pair_count=pair_count)


# Share of a run's progress bar that a run-level method's first pass takes.
RUN_LEVEL_SHARE = 0.4


def _engine_pairs(run: AlignmentRun, work: list) -> Iterator[ArticlePair]:
    """Every document pair of the run, loaded one at a time (the run-level pass streams them)."""
    for k, (_, complex_doc, simple_doc) in enumerate(work):
        if k % settings.ALIGN_BATCH_ARTICLES == 0:
            progress.check_cancelled(AlignmentRun, run.pk)
        yield engine_pair(complex_doc, simple_doc)


# Run params the application reads itself; the rest go to the engine method.
APP_PARAMS = ("model", "access_attributes", "skip_articles")


class AccessScorer:
    """The ACCESS control attributes (MUSS §3.2 / SPEC §5.7) of every pair a run writes, stored in
    the pair's features as ``access_*``, so they are there for filters and exports without a job."""

    def __init__(self, language: str, pipeline: str | None = None) -> None:
        """``pipeline``: the project's spaCy pipeline (name or path), default the language's."""
        from workers.engine import load_parser

        self.language = language
        self.pipeline = pipeline
        self.nlp, self.parser_note = load_parser(language, pipeline)
        self.skipped: dict[str, str] = {}

    def for_pair(self, article_pair: ArticlePair) -> Callable[[AlignedPair], dict[str, float]]:
        complex_sents, simple_sents = article_pair.complex.sentences, article_pair.simple.sentences

        def attributes(p: AlignedPair) -> dict[str, float]:
            from workers.engine import access_attributes

            attrs, missing = access_attributes(" ".join(complex_sents[i] for i in p.complex),
                                               " ".join(simple_sents[i] for i in p.simple), self.language, parser=self.nlp)
            # without a pipeline, say why it could not be loaded (not access_attributes' "no parser requested")
            self.skipped.update({f"access_{k}": why if self.nlp is not None else f"no dependency parser ({self.parser_note})"
                                 for k, why in missing.items()})
            return {f"access_{k}": v for k, v in attrs.items()}

        return attributes


# Origins a run's prediction replaces: a pair an annotator linked (or an export derived) that a model
# now predicts too becomes a model pair, so it enters the queue; imported gold and mined or candidate
# pairs keep theirs.
PREDICTION_REPLACES_ORIGIN = ("manual", "derived")


def save_alignment(run: AlignmentRun, article: Article, complex_doc: Document, simple_doc: Document,
                   alignment: Alignment, extra_features: Callable[[AlignedPair], dict[str, float]] | None = None) -> int:
    """:func:`save_alignments` of one document pair."""
    return save_alignments(run, [(article, complex_doc, simple_doc, alignment, extra_features)])


Saved = tuple[Article, Document, Document, Alignment, "Callable[[AlignedPair], dict[str, float]] | None"]


@transaction.atomic
def save_alignments(run: AlignmentRun, items: list[Saved]) -> int:
    """Attach the run's predictions to the project's sentence pairs of document pairs ``items``
    (article, complex doc, simple doc, alignment, extra_features), creating the pairs nobody
    proposed before; returns how many pairs the alignments had.

    Set-based and idempotent: one upsert of every pair of the batch on its identity (documents +
    sentence sets, ``ON CONFLICT``), one of the run's predictions on (run, pair), one insert of the
    sentence rows. A pair keeps the features others gave it (scoring jobs, ACCESS); the run's are
    added, and the pair shows this run's score and label. ``extra_features(pair)`` adds attributes
    computed by the application (e.g. ACCESS) to the engine's per-pair features."""
    items = [item for item in items if item[3].pairs]
    if not items:
        return 0
    texts = sentence_texts(list({d.pk for _, c, s, _, _ in items for d in (c, s)}))
    keyed: dict[tuple[int, int, str, str], tuple[int, AlignedPair, tuple]] = {}
    for item in items:
        _, complex_doc, simple_doc, alignment, _ = item
        for rank, p in enumerate({(indices_key(p.complex), indices_key(p.simple)): p for p in alignment.pairs}.items()):
            keyed[(complex_doc.pk, simple_doc.pk, *p[0])] = (rank, p[1], item)
    existing = {(c_doc, s_doc, c, s): (origin, features) for c_doc, s_doc, c, s, origin, features in CandidatePair.objects.filter(
        complex_document__in={k[0] for k in keyed}, simple_document__in={k[1] for k in keyed},
        complex_key__in={k[2] for k in keyed}, simple_key__in={k[3] for k in keyed},
    ).values_list("complex_document_id", "simple_document_id", "complex_key", "simple_key", "origin", "features")}
    features_of = {}
    rows = []
    for key, (_, p, (article, complex_doc, simple_doc, _, extra_features)) in keyed.items():
        run_features = {k: float(v) for k, v in {**(p.features or {}), **(extra_features(p) if extra_features else {})}.items()}
        features_of[key] = run_features
        origin, stored = existing.get(key, ("model", {}))
        rows.append(CandidatePair(
            article=article, complex_document=complex_doc, simple_document=simple_doc, complex_key=key[2],
            simple_key=key[3], score=float(p.score), predicted_label=p.label, features={**(stored or {}), **run_features},
            origin="model" if origin in PREDICTION_REPLACES_ORIGIN else origin,
            identical=is_identical(" ".join(texts[complex_doc.pk].get(i, "") for i in p.complex),
                                   " ".join(texts[simple_doc.pk].get(i, "") for i in p.simple))))
    CandidatePair.objects.bulk_create(
        rows, update_conflicts=True, unique_fields=["complex_document", "simple_document", "complex_key", "simple_key"],
        update_fields=["score", "predicted_label", "features", "origin"], batch_size=1000,
    )
    pairs = {(p.complex_document_id, p.simple_document_id, p.complex_key, p.simple_key): p for p in CandidatePair.objects.filter(
        complex_document__in={k[0] for k in keyed}, simple_document__in={k[1] for k in keyed},
        complex_key__in={k[2] for k in keyed}, simple_key__in={k[3] for k in keyed})}
    Prediction.objects.bulk_create(
        [Prediction(run=run, pair=pairs[key], score=float(p.score), predicted_label=p.label, features=features_of[key], rank=rank)
         for key, (rank, p, _) in keyed.items()],
        update_conflicts=True, unique_fields=["run", "pair"], update_fields=["score", "predicted_label", "features", "rank"],
        batch_size=1000,
    )
    link_sentences([pairs[key] for key in keyed])
    _store_uncertainty(run, [(pairs[key], p) for key, (_, p, _) in keyed.items()])
    return len(rows)


LINKS = ("aligned", "partial")
UNCERTAINTY_SOURCES = ("model", "disagreement")


def uncertainty_of(prediction: AlignedPair) -> float | None:
    """How unsure the model was of its decision on a pair, 0 (sure) … 1 (a coin toss): the engine's
    own ``uncertainty`` feature when it gives one (the trained crf: the pair model's class margin and
    the CRF marginal of the chosen link), else from a score in [0, 1] as ``1 − |2·score − 1|``."""
    features = prediction.features or {}
    if "uncertainty" in features:
        return float(features["uncertainty"])
    score = float(prediction.score)
    return 1.0 - abs(2.0 * score - 1.0) if 0.0 <= score <= 1.0 else None


def _store_uncertainty(run: AlignmentRun, predicted: list[tuple[CandidatePair, AlignedPair]]) -> None:
    """Set each pair's ``uncertainty`` (the active-learning order) from this run's prediction, or, with
    ``config["queue_uncertainty"] == "disagreement"``, the share of other methods' runs that decide
    the link differently."""
    source = (run.project.config or {}).get("queue_uncertainty", "model")
    if source == "disagreement":
        others: dict[int, dict[str, bool]] = {}
        for pair_id, method, label in (Prediction.objects.filter(pair__in=[p for p, _ in predicted])
                                       .exclude(run__method=run.method).order_by("run_id")
                                       .values_list("pair_id", "run__method", "predicted_label")):
            others.setdefault(pair_id, {})[method] = label in LINKS  # the latest run of each method
        values = {pair.pk: (sum(v != (p.label in LINKS) for v in others[pair.pk].values()) / len(others[pair.pk])
                            if others.get(pair.pk) else None) for pair, p in predicted}
    else:
        values = {pair.pk: uncertainty_of(p) for pair, p in predicted}
    CandidatePair.objects.bulk_update([CandidatePair(pk=pk, uncertainty=u) for pk, u in values.items()],
                                      ["uncertainty"], batch_size=500)


def link_sentences(pairs) -> None:
    """Create the PairSentence rows of ``pairs`` (skipping those that exist)."""
    pairs = list(pairs)
    if not pairs:
        return
    doc_ids = {p.complex_document_id for p in pairs} | {p.simple_document_id for p in pairs}
    sentence_ids = {(d, i): pk for pk, d, i in Sentence.objects.filter(document_id__in=doc_ids).values_list("pk", "document_id", "index")}
    members = []
    for p in pairs:
        members += [PairSentence(pair=p, sentence_id=sentence_ids[(p.complex_document_id, i)], side=Side.COMPLEX) for i in p.complex_indices]
        members += [PairSentence(pair=p, sentence_id=sentence_ids[(p.simple_document_id, i)], side=Side.SIMPLE) for i in p.simple_indices]
    PairSentence.objects.bulk_create(members, ignore_conflicts=True)
