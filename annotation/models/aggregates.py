"""Expensive aggregates of a project kept in the database per state of its data (issue 37)."""
from __future__ import annotations

from django.db import models
from django.utils import timezone


class KeptAggregate(models.Model):
    """One named aggregate of a project (a dashboard figure, a run's scores, the adjudication queue, the Models
    page's training-set summary) as last computed.

    ``state`` is the :func:`annotation.services.review.review_state.state` digest of the data it was
    computed from: a reader whose state is the same reads ``value`` as current (the cache of a freshly
    started process is empty, this row is not); a reader whose state moved on shows it only as "as of
    ``computed_at``, updating" while a background job computes the new one. One row per name: the newest.
    """

    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=200)
    state = models.CharField(max_length=64)
    value = models.JSONField()
    computed_at = models.DateTimeField(default=timezone.now)
    seconds = models.FloatField(default=0.0, help_text="how long the computation took")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="kept_aggregate_one_per_name")]
