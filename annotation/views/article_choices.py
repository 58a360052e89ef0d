"""The article filter of a page (a run's pairs, an annotator's labels): a bounded list of titles.

A project of 200,000 articles would otherwise put 200,000 ``<option>`` elements (megabytes) in
every such page; the first :data:`ARTICLE_CHOICES` by title are listed and the page says so.
"""
from __future__ import annotations

from django.db.models import QuerySet

from ..models import Article

#: Articles an article filter lists.
ARTICLE_CHOICES = 500


def article_choices(articles: QuerySet[Article]) -> tuple[list[dict], bool]:
    """The first :data:`ARTICLE_CHOICES` of ``articles`` by title as ``{"id", "title"}``, and
    whether there are more."""
    rows = list(articles.order_by("title", "pk").values("id", "title")[:ARTICLE_CHOICES + 1])
    return rows[:ARTICLE_CHOICES], len(rows) > ARTICLE_CHOICES
