"""Corpus statistics of a project (a small real task that runs through the worker)."""
from __future__ import annotations

from collections import defaultdict

from django.db.models import Count

from annotation.models import Article, CandidatePair, Document, Job, Sentence
from annotation.services.background import progress


def compute_stats(project_id: int) -> dict:
    """Counts per level and average sentence length in words."""
    per_level: dict[str, dict[str, float]] = defaultdict(lambda: {"documents": 0, "sentences": 0, "words": 0})
    for doc in Document.objects.filter(article__project_id=project_id).annotate(n=Count("sentences")):
        per_level[doc.level]["documents"] += 1
        per_level[doc.level]["sentences"] += doc.n
    for level, text in Sentence.objects.filter(document__article__project_id=project_id).values_list("document__level", "text").iterator():
        per_level[level]["words"] += len(text.split())
    levels = {
        level: {**v, "words_per_sentence": round(v["words"] / v["sentences"], 2) if v["sentences"] else 0.0}
        for level, v in sorted(per_level.items())
    }
    return {
        "articles": Article.objects.filter(project_id=project_id).count(),
        "documents": sum(v["documents"] for v in levels.values()),
        "sentences": sum(v["sentences"] for v in levels.values()),
        "candidate_pairs": CandidatePair.objects.filter(article__project_id=project_id).count(),
        "levels": levels,
    }


def run_stats_job(job_id: int) -> None:
    if not progress.claim(Job, job_id):
        return
    try:
        job = Job.objects.get(pk=job_id)
        result = compute_stats(job.project_id)
    except Exception as exc:  # noqa: BLE001 - recorded on the row, then re-raised for the log
        progress.fail(Job, job_id, exc)
        raise
    progress.succeed(Job, job_id, result=result)
