"""Fixtures of the review services' tests."""
from __future__ import annotations

import pytest

from annotation.models import Membership
from tests import factories


@pytest.fixture
def bees(project, users):
    """Article "Bees", adv (3 sentences) → int (3 sentences), gold imported as sparse; anna and bob annotate."""
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    bob = factories.make_user("bob")
    Membership.objects.create(project=project, user=bob, role="annotator")
    article = factories.make_article(project, "Bees", {
        "adv": [["Bees make honey in summer.", "They live in large hives.", "Queens lay many eggs."]],
        "int": [["Bees make honey.", "Hives are their homes.", "The queen lays eggs."]]})
    article.meta = {"gold_import": {"meaning": "sparse", "document_pairs": []}}
    article.save()
    c, s = article.documents.order_by("rank")
    return {"project": project, "article": article, "c": c, "s": s, "anna": users["anna"], "bob": bob}
