"""The Models page explains each count it shows and refuses training on sparse gold by name (issue 27
item 8: "Labelled pairs for the pair model: 0" beside "Gold links (train): 188" without a word, and a
project with sparse gold was told to "import gold", which it had done)."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication
from annotation.services.training import versions as training
from tests import factories


@pytest.fixture
def sparse_project(project):
    article = factories.make_article(project, "Bees", {"adv": [["Bees fly far.", "They make honey."]],
                                                       "ele": [["Bees fly.", "Honey."]]})
    article.meta = {"gold_import": {"meaning": "sparse", "test_questions": False}}
    article.save()
    c, s = article.documents.order_by("rank")
    for i in range(2):
        pair = factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key=str(i),
                                   simple_key=str(i))
        Adjudication.objects.create(pair=pair, value="aligned", provenance=Adjudication.IMPORTED)
    return project


def test_training_on_sparse_gold_is_refused_naming_what_is_missing(sparse_project):
    with pytest.raises(training.TrainingError) as refused:
        training.start_training(sparse_project, enqueue=False)
    message = str(refused.value)
    assert "needs exhaustive gold" in message and "its 2 imported gold pairs are sparse gold" in message
    assert "Mark article pairs complete in the whole-article view, or import gold that lists every link" in message


def test_the_models_page_explains_each_count_and_shows_the_refusal(client, users, sparse_project):
    client.force_login(users["rita"])
    page = client.get(f"/projects/{sparse_project.pk}/models/").content.decode()
    assert '<p class="error problems" role="alert" id="train-refusal"><b>Training refused:</b>' in page
    assert "sparse gold" in page and '<button type="submit" disabled' in page
    assert '<dd id="sparse-gold">2</dd>' in page
    for count in ("Articles", "Exhaustive article pairs", "Gold links (train)", "Labelled pairs for the pair model",
                  "Imported sparse gold pairs"):
        assert f"<li><b>{count}</b>:" in page
    assert "0 means the pair model learns from the exhaustive article pairs alone" in page
