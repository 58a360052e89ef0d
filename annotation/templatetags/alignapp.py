"""Small template filters shared by the pages: ``{% load alignapp %}``."""
from __future__ import annotations

from datetime import datetime

from django import template
from django.utils import timezone

register = template.Library()


def format_seconds(seconds: float) -> str:
    """``42 s``, ``3 min 04 s``, ``2 h 05 min`` (the same format as static/js/project.js)."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@register.filter
def duration(work) -> str:
    """How long a run or job took (or has been running); blank before it started."""
    started: datetime | None = getattr(work, "started_at", None)
    if started is None:
        return ""
    finished = getattr(work, "finished_at", None) or timezone.now()
    return format_seconds((finished - started).total_seconds())
