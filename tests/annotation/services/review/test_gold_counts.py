"""The gold value counts kept per article (issue 37): equal to a fresh count of the one gold reading after every kind
of change, and after a label only that article is read again."""
from __future__ import annotations

from collections import Counter

import pytest

from annotation.models import CandidatePair, indices_key
from annotation.services.editing import completion
from annotation.services.review import adjudication, gold_counts, gold_reading, labelling, qc
from tests import factories, labels
from tests.annotation.services.review.test_adjudication import crowd, make_pairs, vote  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def fresh(project) -> dict:
    return dict(Counter(g.value for g in gold_reading.pair_values(project, ties=True).values()))


@pytest.fixture
def read(monkeypatch) -> list:
    """The articles each gold reading of ``gold_counts`` was asked for (the reading itself runs)."""
    asked: list = []
    real = gold_reading.read_chunks

    def reading(project, *args, articles=None, **kwargs):
        asked.append(sorted(articles) if articles is not None else None)
        return real(project, *args, articles=articles, **kwargs)

    monkeypatch.setattr(gold_counts.gold_reading, "read_chunks", reading)
    return asked


def test_the_kept_counts_equal_a_fresh_reading_after_every_change(project, users, crowd, read):  # noqa: F811
    anna, bob, _ = crowd
    pairs = make_pairs(project, 3, title="One")
    other = make_pairs(project, 2, title="Two")
    article = pairs[0].article
    complex_doc, simple_doc = article.documents.order_by("rank")

    def check(step: str) -> None:
        assert gold_counts.value_counts(project) == fresh(project), step
        assert gold_counts.value_counts(project) == fresh(project), f"{step} (read back)"

    check("start")
    first = vote(pairs[0], anna, "aligned")
    vote(other[0], anna, "partial")
    check("labels in two articles")
    read.clear()
    vote(other[1], bob, "aligned")
    check("a label")
    assert read[0] == [other[0].article_id], "only the labelled article is read again"
    labels.edit_label(anna, first, value="partial")
    check("a label edited")
    labelling.delete_label(anna, first)
    check("a label removed")
    vote(pairs[0], anna, "aligned"), vote(pairs[0], bob, "partial")
    check("a tie (undecided)")
    adjudication.decide(pairs[0], "aligned", users["rita"])
    check("an adjudication")
    adjudication.decide(pairs[0], "not-aligned", users["rita"])
    check("an adjudication changed")
    vote(pairs[1], bob, "aligned")
    completion.mark_complete(bob, article, complex_doc, simple_doc)
    check("a completion (implied not aligned)")
    completion.reopen(bob, complex_doc, simple_doc)
    check("a completion removed")
    qc.exclude(bob, project, "spam")
    check("an exclusion")
    imported = factories.make_article(project, "Imported", {"adv": [["One long sentence here."]], "ele": [["One."]]})
    c, s = imported.documents.order_by("rank")
    pair = CandidatePair.objects.create(article=imported, complex_document=c, simple_document=s,
                                        complex_key=indices_key([0]), simple_key=indices_key([0]))
    vote(pair, anna, "aligned")
    check("an import, labelled")
    project.config = {**(project.config or {}), "qc": {**(project.config or {}).get("qc", {}), "overlap": 2}}
    project.save(update_fields=["config"])
    check("a settings change")
