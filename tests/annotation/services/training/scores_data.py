"""A tiny project whose run scores against exhaustive gold are computed by hand (issue 28 §3), shared by
the service, API, page and browser tests of ``services/training/run_scores.py``.

Bees (anna marked it complete): gold (0,0) aligned — identical texts, left out —, (1,1) aligned,
(2,2) partial. Owls (gold imported as exhaustive): (0,0) aligned, (1,1) partial. Cats: no gold.

The run links, in Bees, (0,0), (1,1), (2,2) aligned and (1,0) partial — a pair the gold leaves
unlinked, i.e. not aligned: a false positive — and predicts (2,0) "not-aligned" (no link); in Owls
(0,0) partial and the 1:2 group 1 → {0, 1} aligned (links (1,0) and (1,1)); in Cats (0,0) aligned
(no exhaustive gold there: not scored).

Identical (0,0) out of both sides:
Task 1: Bees tp 2 of 3 predicted, 2 gold; Owls tp 2 of 3, 2 gold → P 4/6, R 4/4, F1 0.8.
Task 2: Bees (1,1) right, (2,2) wrong (gold partial) → tp 1 of 2, gold 1; Owls (1,0), (1,1)
aligned but gold (1,1) is partial and (0,0) was predicted partial → tp 0 of 2, gold 1
→ P 1/4, R 1/2, F1 1/3.
"""
from __future__ import annotations

from annotation.models import Adjudication, AlignmentRun, ArticleCompletion, Label
from tests import factories

TASK1 = {"precision": 4 / 6, "recall": 1.0, "f1": 0.8, "tp": 4, "n_pred": 6, "n_gold": 4}
TASK2 = {"precision": 0.25, "recall": 0.5, "f1": 1 / 3, "tp": 1, "n_pred": 4, "n_gold": 2}


def _article(project, title, complex_sentences, simple_sentences):
    article = factories.make_article(project, title, {"adv": [complex_sentences], "ele": [simple_sentences]})
    return (article, *article.documents.order_by("rank"))


def scored_project(project, annotator, *, method: str = "jaccard", status: str = "succeeded", suffix: str = "") -> dict:
    """The articles above (titles + ``suffix``) and one run; returns ``{"run", "bees", "owls", "cats"}``
    (article, complex, simple)."""
    bees = _article(project, "Bees" + suffix, ["Bees make honey.", "They live in hives.", "Queens lay eggs."],
                    ["Bees make honey.", "Hives are homes.", "The queen lays eggs."])
    owls = _article(project, "Owls" + suffix, ["Owls hunt at night.", "They eat mice."],
                    ["Owls hunt in the dark.", "Mice are food for owls."])
    cats = _article(project, "Cats" + suffix, ["Cats sleep a lot."], ["Cats sleep."])
    run = AlignmentRun.objects.create(project=project, method=method, status=status)
    add_run(run, bees=bees, owls=owls, cats=cats)
    article, c, s = bees
    for ck, sk, value in (("0", "0", "aligned"), ("1", "1", "aligned"), ("2", "2", "partial")):
        pair = factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key=ck, simple_key=sk)
        Label.objects.create(pair=pair, annotator=annotator, value=value, source="article")
    ArticleCompletion.objects.create(article=article, complex_document=c, simple_document=s, annotator=annotator)
    article, c, s = owls
    article.meta = {"gold_import": {"meaning": "exhaustive", "document_pairs": [["adv", "ele"]]}}
    article.save(update_fields=["meta"])
    for ck, sk, value in (("0", "0", "aligned"), ("1", "1", "partial")):
        pair = factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key=ck, simple_key=sk)
        Adjudication.objects.create(pair=pair, value=value, provenance=Adjudication.IMPORTED)
    return {"run": run, "bees": bees, "owls": owls, "cats": cats}


def add_run(run, *, bees, owls, cats) -> None:
    """The run's predictions (module docstring)."""
    for (article, c, s), links in ((bees, [("0", "0", "aligned"), ("1", "1", "aligned"), ("2", "2", "aligned"),
                                            ("1", "0", "partial"), ("2", "0", "not-aligned")]),
                                   (owls, [("0", "0", "partial"), ("1", "0,1", "aligned")]),
                                   (cats, [("0", "0", "aligned")])):
        for ck, sk, label in links:
            factories.make_pair(run, article=article, complex_document=c, simple_document=s, complex_key=ck,
                                simple_key=sk, score=0.5, predicted_label=label)
