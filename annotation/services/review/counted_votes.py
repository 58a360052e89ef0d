"""Which labels count as votes: the project's labels minus hidden test answers and minus every label of
an excluded annotator. The lowest piece of review: the gold reading, the imported-exhaustive meaning,
adjudication, agreement, the queue and quality control (:mod:`annotation.services.review.qc`, which
decides who is excluded) all read it, so it imports none of them.
"""
from __future__ import annotations

from django.db.models import QuerySet

from annotation.models import Label, Membership, Project


def excluded_annotators(project: Project) -> QuerySet[Membership]:
    """The excluded annotators' user ids as a subquery (``annotator_id__in=...``): no query of its own."""
    return Membership.objects.filter(project=project, excluded_at__isnull=False).values("user_id")


def counted_labels(project: Project) -> QuerySet[Label]:
    """The labels that count as votes (agreement, adjudication, training, export): the project's
    labels minus hidden test answers and minus every label of an excluded annotator."""
    return (Label.objects.filter(pair__article__project=project, is_test_question=False)
            .exclude(annotator_id__in=excluded_annotators(project)))
