"""The training set (``training/dataset.py``): exhaustive article pairs from completed document pairs with their
links, gold over labels, pair examples outside them, article splits, and why a training cannot start."""
from __future__ import annotations

from annotation.models import Adjudication, ArticleCompletion, Label, Split
from annotation.services.review import qc
from annotation.services.training import dataset
from tests import factories


def test_a_completed_article_pair_is_exhaustive_training_data_with_its_links(project, completed):
    data = dataset.training_set(project)
    [pair] = data.exhaustive["train"]
    assert dict(zip(pair.gold, pair.gold_labels)) == {(0, 0): "aligned", (1, 1): "partial", (2, 1): "partial"}
    assert data.snapshot["exhaustive_sources"] == {"completed": 1} and data.snapshot["exhaustive_links"]["train"] == 3
    assert data.pair_examples == []  # its pairs are in the exhaustive article pair already


def test_adjudicated_gold_overrides_the_annotators_link(project, users, completed):
    Adjudication.objects.create(pair=completed["pairs"]["aligned"], value="not-aligned", provenance=Adjudication.ADJUDICATED)
    [pair] = dataset.training_set(project).exhaustive["train"]
    assert (0, 0) not in pair.gold


def test_a_completers_label_refines_imported_sparse_gold_and_a_tie_takes_the_stronger_link(project, users, completed):
    # issue 27 §1: imported "aligned-or-partial" gold never beats the annotator who decided
    Adjudication.objects.create(pair=completed["pairs"]["partial"], value="aligned-or-partial",
                                provenance=Adjudication.IMPORTED)
    [pair] = dataset.training_set(project).exhaustive["train"]
    assert dict(zip(pair.gold, pair.gold_labels))[(1, 1)] == "partial"
    assert dataset.stronger(["partial", "aligned"]) == "aligned" and dataset.stronger(["not", "partial"]) == "partial"
    # an imported tie ("undecided") is never read as a class: the completer's label decides, else no link
    Adjudication.objects.filter(pair=completed["pairs"]["partial"]).update(value="undecided")
    Label.objects.filter(pair=completed["pairs"]["partial"]).delete()
    [pair] = dataset.training_set(project).exhaustive["train"]
    assert (1, 1) not in pair.gold and (2, 1) not in pair.gold


def test_an_excluded_annotators_completion_does_not_train(project, users, completed):
    qc.exclude(users["anna"], project, "failed the test questions")
    assert dataset.training_set(project).exhaustive["train"] == []


def test_labelled_pairs_outside_complete_article_pairs_train_the_pair_model(project, users, completed):
    ArticleCompletion.objects.all().delete()
    data = dataset.training_set(project)
    assert data.exhaustive["train"] == []
    assert sorted(v for _, _, v in data.pair_examples) == ["aligned", "not", "partial"]
    assert ("Pesticides are blamed. Farmers disagree.", "Pesticides are blamed, but farmers disagree.", "partial") in data.pair_examples


def test_the_training_set_reads_its_documents_in_a_fixed_number_of_queries(project, users, completed):
    """Issue 37: each exhaustive document pair loaded its two documents (3,000 queries at 2,000 pairs)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            dataset.training_set(project)
        return len(captured.captured_queries)

    one = queries()
    for n in range(3):
        article = factories.make_article(project, f"More {n}", {"adv": [["A long one.", "Another."]], "int": [["Short."]]})
        c, s = article.documents.order_by("rank")
        ArticleCompletion.objects.create(article=article, complex_document=c, simple_document=s, annotator=users["anna"])
        Split.objects.create(article=article, name="train")
    data = dataset.training_set(project)
    assert len(data.exhaustive["train"]) == 4 and queries() == one
    assert {p.complex.paragraphs for p in data.exhaustive["train"]} >= {(("A long one.", "Another."),)}


def test_stronger_breaks_a_tie_towards_the_stronger_link_and_a_majority_wins():
    assert dataset.stronger(["not", "aligned", "not"]) == "not"
    assert dataset.stronger(["partial", "not"]) == "partial" and dataset.stronger(["aligned"]) == "aligned"


def test_an_article_without_a_stored_split_gets_the_planned_one(project, completed):
    other = factories.make_article(project, "Owls", {"adv": [["Owls hunt."]], "int": [["Owls eat."]]})
    splits = dataset.article_splits(project)
    assert splits[completed["article"].pk] == "train" and splits[other.pk] in ("train", "dev", "test")
    assert not Split.objects.filter(article=other).exists()  # planned, not stored


def test_the_refusal_says_what_is_missing(project, completed):
    assert dataset.training_refusal(dataset.training_set(project)) is None
    ArticleCompletion.objects.all().delete()
    refusal = dataset.training_refusal(dataset.training_set(project))  # pair examples remain: no "nothing"
    assert refusal.startswith("the CRF needs exhaustive gold") and "imported gold" not in refusal
    Label.objects.all().delete()
    assert dataset.training_refusal(dataset.training_set(project)).startswith("nothing to train on yet: the CRF needs")
    sparse = dataset.TrainingSet(snapshot={"sparse_gold": 2})
    assert "; its 2 imported gold pairs are sparse gold" in dataset.training_refusal(sparse)
