"""Gold on every pair of the bench project (issue 37: "a million-pair gold export"): ``bench/big_project.py
--gold-everywhere`` calls :func:`gold_everywhere` after building, so that the gold exports read a million
labelled pairs, not the 100,000 of the built project.

Shape added (with ``COPY``, once; kept in ``project.config["bench"]["gold_everywhere"]``): every article
pair the build left unlabelled is labelled in the whole-article view (``source="article"``) by one of the
50 annotators, every one of its 50 pairs, and completed by them — a link where the complex sentence's
half meets the simple sentence (``i // 2 == j``), ``partial`` beside it, ``not-aligned`` elsewhere; the
first sixth of those article pairs a second annotator labels and completes too (agreeing on 9 pairs in
10, so ~10 % ties), and the ties of the first third of those are adjudicated. Under the default policy
(``majority-or-single``) every candidate pair then has a value: ``single`` (one vote), ``majority``,
``adjudicated`` or ``undecided`` (a tie left to adjudicate). Only the bench's own database is changed;
the stored aggregates (preview parts, queue frontier) are not brought up to date (the exports do not read
them).
"""
from __future__ import annotations

import time
import uuid

from bench.big_project import ANNOTATORS, TAG, copy_rows

VALUES = ("aligned", "partial", "not-aligned")


def value_of(i: int, j: int) -> str:
    """The first annotator's label of the cell (complex ``i``, simple ``j``)."""
    if i // 2 == j:
        return "aligned"
    return "partial" if abs(i // 2 - j) == 1 and i % 2 else "not-aligned"


def gold_everywhere(project_id: int) -> dict:
    """Label and complete every article pair of ``project_id`` that has no label yet (see the module);
    a no-op returning the earlier summary when it was done."""
    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.models import Adjudication, Article, ArticleCompletion, Label, Project

    project = Project.objects.get(pk=project_id)
    bench = dict(project.config.get("bench", {}))
    if "gold_everywhere" in bench:
        return bench["gold_everywhere"]
    began = time.monotonic()
    now = timezone.now()
    from django.contrib.auth import get_user_model

    users = dict(get_user_model().objects.filter(username__startswith=f"{TAG}-").values_list("username", "pk"))
    annotators = [users[f"{TAG}-a{i:03d}"] for i in range(ANNOTATORS)]
    researcher = users[f"{TAG}-researcher"]
    labelled = set(Label.objects.filter(pair__article__project_id=project_id).values_list("pair__article_id", flat=True)
                   .distinct())
    articles = [a for a in Article.objects.filter(project_id=project_id).order_by("id").values_list("id", flat=True)
                if a not in labelled]
    twice = len(articles) // 6
    adjudicate = twice // 3
    # each article's pairs and documents, in (complex key, simple key) order: keys are "0".."9" / "0".."4"
    cells: dict[int, list[tuple[int, int, int]]] = {}
    docs: dict[int, tuple[int, int]] = {}
    wanted = set(articles)
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, article_id, complex_document_id, simple_document_id, complex_key, simple_key "
                       "FROM annotation_candidatepair WHERE article_id IN (SELECT id FROM annotation_article "
                       "WHERE project_id = %s)", [project_id])
        for pair, article, cdoc, sdoc, ck, sk in cursor.fetchall():
            if article in wanted:
                cells.setdefault(article, []).append((pair, int(ck), int(sk)))
                docs[article] = (cdoc, sdoc)
    labels: list[tuple[int, int, str]] = []
    completions: list[tuple[int, int, int, int]] = []
    adjudications: list[tuple[int, str]] = []
    for n, article in enumerate(articles):
        first = annotators[n % ANNOTATORS]
        second = annotators[(n + 7) % ANNOTATORS]
        completions.append((article, *docs[article], first))
        for pair, i, j in cells[article]:
            value = value_of(i, j)
            labels.append((pair, first, value))
            if n < twice:
                other = value if (pair * 31) % 10 else VALUES[(VALUES.index(value) + 1) % 3]
                labels.append((pair, second, other))
                if other != value and n < adjudicate:
                    adjudications.append((pair, value))
        if n < twice:
            completions.append((article, *docs[article], second))
    with transaction.atomic(), connection.cursor() as django_cursor:
        cur = django_cursor.cursor
        copy_rows(cur, Label, ["pair_id", "annotator_id", "value", "ratings", "comment", "seconds", "source",
                               "is_test_question", "client_token", "created_at", "updated_at"],
                  ((p, u, v, "{}", "", 4.0, "article", False, uuid.uuid4(), now, now) for p, u, v in labels))
        copy_rows(cur, ArticleCompletion, ["article_id", "complex_document_id", "simple_document_id", "annotator_id",
                                           "seconds", "completed_at"],
                  ((a, c, s, u, 300.0, now) for a, c, s, u in completions))
        copy_rows(cur, Adjudication, ["pair_id", "value", "provenance", "reviewer_id", "note", "created_at"],
                  ((p, v, Adjudication.ADJUDICATED, researcher, "", now) for p, v in adjudications))
        summary = {"article_pairs": len(articles), "labels": len(labels), "completions": len(completions),
                   "article_pairs_twice": twice, "adjudications": len(adjudications),
                   "built_s": round(time.monotonic() - began, 1)}
        bench["gold_everywhere"] = summary
        project.config = {**project.config, "bench": bench}
        project.save(update_fields=["config"])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return summary
