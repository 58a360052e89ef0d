"""Export → re-import with the JSONL importer reproduces the pairs and labels."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, Article, Split
from annotation.services.importing import import_files
from tests import factories

from .conftest import gold, make_pair
from .helpers import all_pairs, run

pytestmark = pytest.mark.django_db


def gold_of(project) -> set[tuple]:
    """(article, complex level, simple level, complex ids, simple ids, label) of every gold pair."""
    out = set()
    for g in Adjudication.objects.filter(pair__article__project=project).select_related(
            "pair__article", "pair__complex_document", "pair__simple_document"):
        p = g.pair
        out.add((p.article.title, p.complex_document.level, p.simple_document.level, p.complex_key, p.simple_key, g.value))
    return out


@pytest.fixture
def corpus(project):
    """Two-level articles with 1:1 aligned and partial gold, some pairs not-aligned."""
    for a in range(6):
        article = factories.make_article(project, f"story {a}", {
            "adv": [[f"Complex sentence {a}.{i} with many extra words." for i in range(3)], [f"Another complex {a}."]],
            "ele": [[f"Simple {a}.{i}." for i in range(3)]],
        })
        gold(make_pair(article, "adv", "ele", [0], [0]), "aligned")
        gold(make_pair(article, "adv", "ele", [1], [1]), "partial")
        gold(make_pair(article, "adv", "ele", [3], [2]), "aligned")
        gold(make_pair(article, "adv", "ele", [2], [0]), "not-aligned")
    return project


def reimport(root, users, name="Reimported"):
    target = factories.make_project(name, rita="researcher")
    files = [(f"{split}.jsonl", (root / "articles" / f"{split}.jsonl").read_bytes()) for split in ("train", "dev", "test")]
    files = [(n, b) for n, b in files if b.strip()]
    result = import_files(target, files, "jsonl")
    return target, result


def test_reimporting_the_articles_jsonl_reproduces_pairs_and_labels(corpus, settings, tmp_path, users):
    _, root = run(corpus, settings, tmp_path, split_policy={"mode": "counts", "train": 4, "dev": 1, "test": 1})
    target, result = reimport(root, users)
    assert result.articles == 6 and result.warnings == []
    linking = {g for g in gold_of(corpus) if g[-1] != "not-aligned"}
    assert gold_of(target) == linking
    # sentences and paragraphs come back exactly
    for article in Article.objects.filter(project=corpus):
        copy = Article.objects.get(project=target, title=article.title)
        for level in ("adv", "ele"):
            original = list(article.documents.get(level=level).sentences.values_list("paragraph__index", "index", "text"))
            assert list(copy.documents.get(level=level).sentences.values_list("paragraph__index", "index", "text")) == original


def test_not_aligned_labels_votes_and_provenance_stay_in_the_pairs_key(corpus, settings, tmp_path):
    _, root = run(corpus, settings, tmp_path)
    import json

    lines = [json.loads(line) for split in ("train", "dev", "test")
             for line in (root / "articles" / f"{split}.jsonl").read_text().splitlines()]
    assert all(len(line["pairs"]) == 4 for line in lines)
    assert {p["label"] for line in lines for p in line["pairs"]} == {"aligned", "partial", "not-aligned"}
    assert all(p["provenance"] == "adjudicated" for line in lines for p in line["pairs"])


def test_multi_level_articles_round_trip_one_line_per_level_pair(newsela, settings, tmp_path, users):
    _, root = run(newsela["project"], settings, tmp_path, derived=False, drop_identical=False)
    target, result = reimport(root, users)
    assert sorted(Article.objects.filter(project=target).values_list("title", flat=True)) == [
        "Bees [0→1]", "Bees [1→2]", "Owls"]
    exported = {(r["article"], r["complex_level"], r["simple_level"], ci, si, r["label"])
                for r in all_pairs(root) if r["class"] != "not"
                for ci in r["complex_ids"] for si in r["simple_ids"]}
    back = {(title.split(" [")[0], c, s, int(ck), int(sk), v) for title, c, s, ck, sk, v in gold_of(target)}
    assert back == exported  # the 1:2 split of Owls comes back as its two 1:1 links


def test_no_article_appears_in_two_splits(corpus, settings, tmp_path):
    _, root = run(corpus, settings, tmp_path, split_policy={"mode": "counts", "train": 4, "dev": 1, "test": 1})
    seen: dict[str, str] = {}
    for split in ("train", "dev", "test"):
        for row in (all_pairs(root)):
            if row["split"] == split:
                assert seen.setdefault(row["article"], split) == split
        for line in (root / "wiki-manual" / f"{split}.tsv").read_text().splitlines():
            article = line.split("\t")[1].rsplit("-", 3)[0]
            assert seen[article] == split
    assert sorted(Split.objects.values_list("name", flat=True)) == ["dev", "test", "train", "train", "train", "train"]
    assert Split.objects.filter(locked=True).count() == 6
