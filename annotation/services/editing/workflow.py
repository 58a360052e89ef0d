"""An annotator's articles as **to do / in progress / complete** (the document workflow, issue 18 §8).

For one user, each article of a project is in one state:

* ``complete`` — they declared at least one of its document pairs complete
  (:class:`~annotation.models.ArticleCompletion`, see :mod:`annotation.services.editing.completion`)
  and every document pair they labelled in it is complete;
* ``in_progress`` — they labelled pairs of it (whole-article view or queue) in a document pair they
  have not declared complete;
* ``todo`` — neither.

The counts and the filter read only the user's own labels and completions (:func:`state_counts`,
:func:`my_articles`), and :func:`with_states` annotates just the page of articles shown
(:func:`articles_page`), so a
project of any size costs a few queries. Nothing here names a
run or a method: annotators in blind projects see it too.

Example:
    >>> STATES
    ('todo', 'in_progress', 'complete')
"""
from __future__ import annotations

from django.core.paginator import Page, Paginator
from django.db.models import Case, CharField, Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery, Value, When
from django.db.models.functions import Coalesce

from annotation.errors import DomainError
from annotation.models import Article, ArticleCompletion, Label

TODO, IN_PROGRESS, COMPLETE = "todo", "in_progress", "complete"
STATES: tuple[str, ...] = (TODO, IN_PROGRESS, COMPLETE)
STATE_NAMES: dict[str, str] = {TODO: "To do", IN_PROGRESS: "In progress", COMPLETE: "Complete"}


class WorkflowError(DomainError, ValueError):
    """An unknown state asked for."""


def _count(queryset: QuerySet, field: str = "article") -> Subquery:
    return Coalesce(Subquery(queryset.order_by().values(field).annotate(n=Count("pk")).values("n")[:1],
                             output_field=IntegerField()), 0)


def with_states(articles: QuerySet[Article], user) -> QuerySet[Article]:
    """``articles`` annotated for ``user`` with ``work_state`` (one of :data:`STATES`),
    ``labels`` (how many of their labels are on its pairs) and ``completed_pairs`` (document pairs
    they declared complete)."""
    completions = ArticleCompletion.objects.filter(article=OuterRef("pk"), annotator=user)
    labels = Label.objects.filter(annotator=user, pair__article=OuterRef("pk"))
    completed_here = ArticleCompletion.objects.filter(
        annotator=user, complex_document=OuterRef("pair__complex_document"),
        simple_document=OuterRef("pair__simple_document"))
    open_labels = labels.filter(~Exists(completed_here))
    return articles.annotate(
        completed_pairs=_count(completions),
        labels=_count(labels, "pair__article"),
        has_open_labels=Exists(open_labels),
    ).annotate(work_state=Case(
        When(Q(completed_pairs__gt=0) & Q(has_open_labels=False), then=Value(COMPLETE)),
        When(has_open_labels=True, then=Value(IN_PROGRESS)),
        default=Value(TODO), output_field=CharField()))


def check_state(state: str | None) -> str | None:
    """``state`` when it is one of :data:`STATES` (``None``/``""``: all); else WorkflowError."""
    if not state:
        return None
    if state not in STATES:
        raise WorkflowError(f"state must be one of {', '.join(STATES)}, got {state!r}")
    return state


def _worked_on(articles: QuerySet[Article], user) -> tuple[set[int], set[int]]:
    """Ids of ``articles`` in progress and complete for ``user``: read from their own labels and
    completions only (two queries bounded by their work, not by the size of the project)."""
    done = set(ArticleCompletion.objects.filter(annotator=user, article__in=articles)
               .values_list("article_id", "complex_document_id", "simple_document_id"))
    labelled = set(Label.objects.filter(annotator=user, pair__article__in=articles).order_by()
                   .values_list("pair__article_id", "pair__complex_document_id", "pair__simple_document_id").distinct())
    in_progress = {article for article, *_ in labelled - done}
    return in_progress, {article for article, *_ in done} - in_progress


def state_counts(articles: QuerySet[Article], user) -> dict[str, int]:
    """How many of ``articles`` are in each state for ``user`` (every state listed, 0 when none)
    plus ``all``."""
    in_progress, complete = _worked_on(articles, user)
    total = articles.count()
    return {TODO: total - len(in_progress) - len(complete), IN_PROGRESS: len(in_progress), COMPLETE: len(complete),
            "all": total}


def my_articles(articles: QuerySet[Article], user, state: str | None = None) -> QuerySet[Article]:
    """``articles`` with their state for ``user`` (title order), only those in ``state`` when given."""
    state = check_state(state)
    if state:
        in_progress, complete = _worked_on(articles, user)
        articles = (articles.exclude(pk__in=in_progress | complete) if state == TODO
                    else articles.filter(pk__in=in_progress if state == IN_PROGRESS else complete))
    return with_states(articles, user).order_by("title", "pk")


def articles_page(articles: QuerySet[Article], user, state: str | None, number, per_page: int,
                  **annotations) -> Page:
    """Page ``number`` of :func:`my_articles` (Django's ``Paginator.get_page``: a bad number gives the first
    page, one past the end the last) whose ``object_list`` holds the page's articles annotated by
    :func:`with_states` and ``annotations``. The page's ids are chosen first (title order, the user's state
    filter) and only those rows are annotated: counting and sorting the annotated set costs a subquery per
    article of the project (seconds at 20,000 articles, issue 37)."""
    state = check_state(state)
    if state:
        in_progress, complete = _worked_on(articles, user)
        articles = (articles.exclude(pk__in=in_progress | complete) if state == TODO
                    else articles.filter(pk__in=in_progress if state == IN_PROGRESS else complete))
    page = Paginator(articles.order_by("title", "pk").values_list("pk", flat=True), per_page).get_page(number)
    ids = list(page.object_list)
    rows = {a.pk: a for a in with_states(Article.objects.filter(pk__in=ids).annotate(**annotations), user)}
    page.object_list = [rows[pk] for pk in ids]
    return page


def article_row(article: Article) -> dict:
    """The API form of an article annotated by :func:`with_states`."""
    return {"id": article.pk, "title": article.title, "state": article.work_state,
            "state_name": STATE_NAMES[article.work_state], "labels": article.labels,
            "completed_pairs": article.completed_pairs}
