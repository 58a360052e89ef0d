"""Writing parsed articles (``corpus/importing/writer.py``): every row of an article in bulk, gold links as
imported adjudications or, under the meaning ``predictions``, as the import run's predictions; the meaning
stamped on each article; the counts of what was written."""
from __future__ import annotations

import pytest

from annotation.label_schemes import UNKNOWN_KIND
from annotation.models import Adjudication, AlignmentRun, Article, CandidatePair, Prediction, Sentence, Split
from annotation.services.corpus.importing.base import ParsedArticle, ParsedDocument, ParsedPair
from annotation.services.corpus.importing.writer import GoldImport, Written, applied_meanings, write_articles

pytestmark = pytest.mark.django_db


def bees(**fields) -> ParsedArticle:
    """Two documents; a gold 1:2 link, an unlabelled pair with a score and an attribute, an identical pair."""
    fields = {"title": "Bees", **fields}
    return ParsedArticle(
        file="bees.jsonl", line=1,
        documents=[ParsedDocument("adv", 0, [["Bees dance at dawn.", "They tell the way."], ["Same text."]]),
                   ParsedDocument("ele", 1, [["Bees dance.", "They show the way."], ["Same text."]])],
        pairs=fields.pop("pairs", [ParsedPair("adv", "ele", (0,), (0, 1), gold="aligned", label="aligned", note="from the file"),
                                   ParsedPair("adv", "ele", (1,), (1,), score=0.4, features={"gleu": 0.3}),
                                   ParsedPair("adv", "ele", (2,), (2,), gold="not-aligned", label="not")]), **fields)


def test_an_article_is_written_with_its_documents_sentences_pairs_and_gold(project):
    written = write_articles(project, [bees(split="dev")], source="upload", token="t1")
    assert (written.articles, written.documents, written.sentences, written.pairs) == (1, 2, 6, 3)
    assert written.gold == {"aligned": 1, "not-aligned": 1} and written.applied == {"sparse": {"articles": 1, "links": 2}}
    article = Article.objects.get(pk=written.article_ids[0])
    assert article.source == "upload" and article.meta["import"] == "t1" and article.meta["file"] == "bees.jsonl"
    assert article.meta["gold_import"] == {"meaning": "sparse", "test_questions": False}
    assert Split.objects.get(article=article).name == "dev"
    adv, ele = article.documents.order_by("rank")
    assert [(s.index, s.paragraph.index, s.text) for s in Sentence.objects.filter(document=ele).order_by("index")] == [
        (0, 0, "Bees dance."), (1, 0, "They show the way."), (2, 1, "Same text.")]
    split_pair, scored, same = CandidatePair.objects.filter(article=article).order_by("pk")
    assert (split_pair.complex_key, split_pair.simple_key, split_pair.origin) == ("0", "0,1", "import")
    assert sorted(split_pair.sentences.values_list("text", flat=True)) == ["Bees dance at dawn.", "Bees dance.",
                                                                           "They show the way."]
    gold = Adjudication.objects.get(pair=split_pair)
    assert (gold.value, gold.provenance, gold.note) == ("aligned", Adjudication.IMPORTED, "from the file")
    assert (scored.score, scored.features, scored.predicted_label) == (0.4, {"gleu": 0.3}, "")
    assert not Adjudication.objects.filter(pair=scored).exists()
    assert same.identical and not scored.identical


def test_predictions_go_to_the_import_run_and_never_become_gold(project):
    run = AlignmentRun.objects.create(project=project, method="import")
    article = bees()
    article.pairs[1] = ParsedPair("adv", "ele", (1,), (1,), score=0.4, label=UNKNOWN_KIND)
    written = write_articles(project, [article], gold=GoldImport("predictions", test_questions=True, run_id=run.pk))
    assert written.gold == {"predictions": 3} and written.applied == {} and not Adjudication.objects.exists()
    labels = dict(Prediction.objects.filter(run=run).values_list("pair__complex_key", "predicted_label"))
    assert labels == {"0": "aligned", "1": "aligned", "2": "not"}  # a link of unknown kind predicts "aligned"
    assert Article.objects.get().meta["gold_import"] == {"meaning": "predictions", "test_questions": False,
                                                         "run": run.pk}


def test_exhaustive_gold_stamps_its_document_pairs_and_counts_complete_articles_and_tests(project):
    complete = bees(gold_documents=[("adv", "ele")])
    sparse = bees(title="Owls")  # states no document pair: its links are sparse gold even so
    written = write_articles(project, [complete, sparse], gold=GoldImport("exhaustive", test_questions=True))
    assert written.gold["complete"] == 1 and written.gold["tests"] == 4
    assert written.applied == {"exhaustive": {"articles": 1, "links": 2}, "sparse": {"articles": 1, "links": 2}}
    stamps = dict(Article.objects.values_list("title", "meta__gold_import"))
    assert stamps["Bees"] == {"meaning": "exhaustive", "test_questions": True, "document_pairs": [["adv", "ele"]]}
    assert stamps["Owls"]["meaning"] == "exhaustive" and "document_pairs" in stamps["Owls"]


def test_an_articles_own_meaning_wins_unless_the_import_is_predictions():
    listed = bees(gold_meaning="sparse")
    assert GoldImport("exhaustive").meaning_of(listed) == "sparse"
    assert GoldImport("predictions").meaning_of(listed) == "predictions"
    assert GoldImport().meaning_of(bees()) == "sparse"
    assert applied_meanings([bees(pairs=[])], GoldImport()) == {}  # no gold links: no meaning applied


def test_written_counts_add_up():
    total = Written(articles=1, pairs=2, article_ids=[1], applied={"sparse": {"articles": 1, "links": 2}})
    total.gold["aligned"] = 2
    other = Written(articles=2, sentences=5, article_ids=[2, 3], applied={"sparse": {"articles": 2, "links": 1},
                                                                          "exhaustive": {"articles": 1, "links": 4}})
    other.gold["aligned"] = 1
    total.add(other)
    assert (total.articles, total.sentences, total.pairs, total.article_ids) == (3, 5, 2, [1, 2, 3])
    assert total.gold == {"aligned": 3}
    assert total.applied == {"sparse": {"articles": 3, "links": 3}, "exhaustive": {"articles": 1, "links": 4}}
