"""The training tests' data: an article pair one annotator declared complete."""
from __future__ import annotations

import pytest

from annotation.models import ArticleCompletion, Label, Split, indices_key
from annotation.services.alignment import run_saving
from tests import factories


@pytest.fixture
def completed(project, users):
    """An article whose adv→int pair anna declared complete, with her links C0→S0 (aligned) and
    C1+C2→S1 (partial), a pair she judged not aligned, and an article split into train."""
    article = factories.make_article(project, "Bees", {
        "adv": [["Bees are dying.", "Pesticides are blamed.", "Farmers disagree."]],
        "int": [["Bees die.", "Pesticides are blamed, but farmers disagree."]],
    })
    c, s = article.documents.order_by("rank")

    def labelled(ci, si, value, who="anna"):
        pair = factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key=indices_key(ci),
                                   simple_key=indices_key(si), origin="manual")
        run_saving.link_sentences([pair])
        Label.objects.create(pair=pair, annotator=users[who], value=value, seconds=20, source="article")
        return pair

    pairs = {"aligned": labelled([0], [0], "aligned"), "partial": labelled([1, 2], [1], "partial"),
             "not": labelled([2], [0], "not-aligned")}
    ArticleCompletion.objects.create(article=article, complex_document=c, simple_document=s, annotator=users["anna"])
    Split.objects.create(article=article, name="train")
    return {"article": article, "docs": (c, s), "pairs": pairs}
