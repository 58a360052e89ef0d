"""Per-article marks of the gold reading's evidence (issue 37): every kind of evidence moves its article's
marks, and only its article's."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation.models import Adjudication, ArticleCompletion, Label
from annotation.services.review import gold_marks
from tests import factories


def test_each_kind_of_evidence_moves_its_articles_marks_only(project, users):
    bees = factories.make_article(project, "Bees", {"adv": [["Bees dance.", "They fly."]], "ele": [["Bees dance."]]})
    owls = factories.make_article(project, "Owls", {"adv": [["Owls hunt."]], "ele": [["Owls hunt."]]})
    c, s = bees.documents.order_by("rank")
    pair = factories.make_pair(article=bees, complex_document=c, simple_document=s, complex_key="0", simple_key="0")
    anna = get_user_model().objects.get(username="anna")
    assert gold_marks.evidence_marks(project) == {}  # no evidence: no article listed
    changes = [
        lambda: Label.objects.create(pair=pair, annotator=anna, value="aligned", seconds=1.0),
        lambda: Label.objects.filter(pair=pair).update(value="partial", updated_at=timezone.now()),
        lambda: Label.objects.filter(pair=pair).update(is_test_question=True),
        lambda: Adjudication.objects.create(pair=pair, value="aligned", provenance=Adjudication.ADJUDICATED),
        lambda: Adjudication.objects.filter(pair=pair).update(value="partial", created_at=timezone.now()),
        lambda: ArticleCompletion.objects.create(article=bees, complex_document=c, simple_document=s, annotator=anna),
        lambda: Label.objects.filter(pair=pair).delete(),
    ]
    seen = []
    for change in changes:
        change()
        marks = gold_marks.evidence_marks(project)
        assert set(marks) == {bees.pk} and owls.pk not in marks
        assert marks[bees.pk] not in seen
        seen.append(marks[bees.pk])
