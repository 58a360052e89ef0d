"""Export → re-import with the JSONL importer reproduces the pairs, labels, scores and attributes.

The export's ``articles/<split>.jsonl`` lists every exported pair under ``pairs`` (n:m sentence sets,
label, provenance, score, attributes, derived flag); the importer turns each back into an imported
pair with that label. The record id becomes the article title, so an article exported as one line
per level pair ("Bees [0→1]", "Bees [1→2]") comes back as one two-document article per line.
"""
from __future__ import annotations

import json

import pytest

from annotation.models import Adjudication, Article, CandidatePair, Split
from annotation.services.corpus.importing import CorpusImportError, import_files
from tests import factories

from .conftest import gold, make_pair, vote
from .helpers import all_pairs, jsonl, run

pytestmark = pytest.mark.django_db
SPLITS = ("train", "dev", "test")


def gold_of(project) -> set[tuple]:
    """(article, complex level, simple level, complex ids, simple ids, label) of every gold pair."""
    out = set()
    for g in Adjudication.objects.filter(pair__article__project=project).select_related(
            "pair__article", "pair__complex_document", "pair__simple_document"):
        p = g.pair
        out.add((p.article.title, p.complex_document.level, p.simple_document.level, p.complex_key, p.simple_key, g.value))
    return out


def pairs_of(project) -> dict[tuple, dict]:
    """(article, complex level, simple level, complex key, simple key) → label, score, attributes, note."""
    out = {}
    for p in CandidatePair.objects.filter(article__project=project).select_related(
            "article", "complex_document", "simple_document", "gold"):
        g = getattr(p, "gold", None)
        out[(p.article.title, p.complex_document.level, p.simple_document.level, p.complex_key, p.simple_key)] = {
            "label": g.value if g else None, "score": p.score, "attributes": p.features,
            "note": g.note if g else None, "provenance": g.provenance if g else None}
    return out


def exported_pairs(root) -> list[dict]:
    """Every ``pairs`` item of the exported articles JSONL, with its line's id and levels."""
    return [{**item, "id": line["id"], "complex_level": line["complex"]["level"], "simple_level": line["simple"]["level"]}
            for split in SPLITS for line in jsonl(root / "articles" / f"{split}.jsonl") for item in line["pairs"]]


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


@pytest.fixture
def shapes(crowd):
    """One article per pair shape, labels aligned / partial / not-aligned, four provenances, attributes.

    "Split" 1:2 (aligned, adjudicated, score + attributes) and 1:1 not-aligned (adjudicated) overlapping it;
    "Merge" 2:1 (partial, majority of three counted votes, no stored gold) and 1:1 aligned (single);
    "Plain" 1:1 aligned (imported) and 1:1 partial (adjudicated, attributes without a score).
    """
    project = crowd
    split = factories.make_article(project, "Split", {
        "adv": [["Owls, which hunt at night, have exceptional hearing.", "They live almost everywhere on Earth."]],
        "ele": [["Owls hunt at night.", "They hear very well."], ["They live in many places."]],
    })
    merge = factories.make_article(project, "Merge", {
        "adv": [["Bees dance.", "The dance shows where flowers are."], ["It is called the waggle dance."]],
        "ele": [["Bees dance to show where flowers are."], ["The dance has a name."]],
    })
    plain = factories.make_article(project, "Plain", {
        "adv": [["The river flooded the valley in spring."], ["Farmers lost their crops."]],
        "ele": [["The river flooded."], ["Farmers lost crops and money."]],
    })
    rita = factories.User.objects.get(username="rita")
    gold(make_pair(split, "adv", "ele", [0], [0, 1], score=0.83, features={"sum4simp_T": 3.75, "gain_prob": 0.91}),
         "aligned", reviewer=rita)
    gold(make_pair(split, "adv", "ele", [1], [1], score=0.12), "not-aligned")
    merged = make_pair(merge, "adv", "ele", [0, 1], [0], score=0.66, features={"n": 2.0, "m": 1.0})
    for name, value in (("anna", "partial"), ("bea", "partial"), ("cal", "aligned")):
        vote(merged, name, value)
    single = make_pair(merge, "adv", "ele", [2], [1], score=0.5)
    vote(single, "anna", "aligned")
    gold(single, "aligned", Adjudication.SINGLE)
    gold(make_pair(plain, "adv", "ele", [0], [0], score=0.97), "aligned", Adjudication.IMPORTED)
    gold(make_pair(plain, "adv", "ele", [1], [1], features={"gain_prob": 0.4}), "partial")
    return project


def reimport(root, name="Reimported", scheme="aligned-partial-not"):
    target = factories.make_project(name, scheme=scheme, rita="researcher")
    files = [(f"{split}.jsonl", (root / "articles" / f"{split}.jsonl").read_bytes()) for split in SPLITS
             if (root / "articles" / f"{split}.jsonl").exists()]
    files = [(n, b) for n, b in files if b.strip()]
    result = import_files(target, files, "jsonl")
    return target, result


def test_reimporting_the_articles_jsonl_reproduces_pairs_and_labels(corpus, settings, tmp_path, users):
    _, root = run(corpus, settings, tmp_path, split_policy={"mode": "counts", "train": 4, "dev": 1, "test": 1})
    target, result = reimport(root)
    assert result.articles == 6 and result.pairs == 24 and result.warnings == []
    assert gold_of(target) == gold_of(corpus)  # not-aligned labels included
    assert set(Adjudication.objects.filter(pair__article__project=target).values_list("provenance", "note")) == {
        ("imported", "source provenance: adjudicated")}
    # sentences and paragraphs come back exactly
    for article in Article.objects.filter(project=corpus):
        copy = Article.objects.get(project=target, title=article.title)
        for level in ("adv", "ele"):
            original = list(article.documents.get(level=level).sentences.values_list("paragraph__index", "index", "text"))
            assert list(copy.documents.get(level=level).sentences.values_list("paragraph__index", "index", "text")) == original


def test_one_to_one_splits_merges_labels_scores_and_attributes_round_trip(shapes, settings, tmp_path):
    _, root = run(shapes, settings, tmp_path, formats=["articles"], label_policy="majority-or-single",
                  split_policy={"mode": "counts", "train": 2, "dev": 0, "test": 1, "seed": 0})
    target, result = reimport(root)
    assert (result.articles, result.pairs, result.warnings) == (3, 6, [])
    assert {p["provenance"] for p in exported_pairs(root)} == {"adjudicated", "majority", "single", "imported"}

    back = pairs_of(target)
    expected = {
        ("Split", "adv", "ele", "0", "0,1"): ("aligned", 0.83, {"sum4simp_T": 3.75, "gain_prob": 0.91}, "adjudicated"),
        ("Split", "adv", "ele", "1", "1"): ("not-aligned", 0.12, {}, "adjudicated"),
        ("Merge", "adv", "ele", "0,1", "0"): ("partial", 0.66, {"n": 2.0, "m": 1.0}, "majority"),
        ("Merge", "adv", "ele", "2", "1"): ("aligned", 0.5, {}, "single"),
        ("Plain", "adv", "ele", "0", "0"): ("aligned", 0.97, {}, "imported"),
        ("Plain", "adv", "ele", "1", "1"): ("partial", None, {"gain_prob": 0.4}, "adjudicated"),
    }
    assert {key: (v["label"], v["score"], v["attributes"], v["note"].removeprefix("source provenance: "))
            for key, v in back.items()} == expected
    assert {v["provenance"] for v in back.values()} == {"imported"}
    # the same set as the source project's exported pairs, from the export's own per-pair JSONL view
    source = {(p["id"], p["complex_level"], p["simple_level"], ",".join(map(str, p["complex"])),
               ",".join(map(str, p["simple"])), p["label"]) for p in exported_pairs(root)}
    assert {(*key, v["label"]) for key, v in back.items()} == source
    assert CandidatePair.objects.filter(article__project=target).exclude(origin="import").count() == 0


def test_exporting_the_reimported_project_gives_the_same_pairs(shapes, settings, tmp_path):
    policy = {"mode": "counts", "train": 2, "dev": 0, "test": 1, "seed": 0}
    _, first = run(shapes, settings, tmp_path / "a", formats=["articles"], label_policy="majority-or-single",
                   split_policy=policy)
    target, _ = reimport(first)
    _, second = run(target, settings, tmp_path / "b", formats=["articles"], split_policy=policy)

    def comparable(root):
        return sorted((p["id"], p["complex"], p["simple"], p["label"], p["class"], p["score"],
                       json.dumps(p["attributes"], sort_keys=True)) for p in exported_pairs(root))

    assert comparable(second) == comparable(first)
    assert {p["provenance"] for p in exported_pairs(second)} == {"imported"}


def test_not_aligned_labels_votes_and_provenance_are_in_the_pairs_key(corpus, settings, tmp_path):
    _, root = run(corpus, settings, tmp_path)
    lines = [line for split in SPLITS for line in jsonl(root / "articles" / f"{split}.jsonl")]
    assert all(len(line["pairs"]) == 4 for line in lines)
    assert {p["label"] for line in lines for p in line["pairs"]} == {"aligned", "partial", "not-aligned"}
    assert all(p["provenance"] == "adjudicated" for line in lines for p in line["pairs"])
    assert all(p["attributes"] == {} and p["derived"] is False for line in lines for p in line["pairs"])


def test_multi_level_articles_round_trip_one_line_per_level_pair(newsela, settings, tmp_path, users):
    _, root = run(newsela["project"], settings, tmp_path, derived=False, drop_identical=False, label_policy="majority")
    target, result = reimport(root)
    assert sorted(Article.objects.filter(project=target).values_list("title", flat=True)) == [
        "Bees [0→1]", "Bees [1→2]", "Owls"]
    exported = {(r["article"], r["complex_level"], r["simple_level"], ",".join(map(str, r["complex_ids"])),
                 ",".join(map(str, r["simple_ids"])), r["label"], r["score"], json.dumps(r["attributes"], sort_keys=True))
                for r in all_pairs(root)}
    back = {(key[0].split(" [")[0], *key[1:], v["label"], v["score"], json.dumps(v["attributes"], sort_keys=True))
            for key, v in pairs_of(target).items()}
    assert back == exported  # the 1:2 split of Owls comes back whole, C1→M0 not-aligned comes back
    assert ("Owls", "0", "1", "0", "0,1", "aligned", 0.8, "{}") in back
    notes = dict((key[0], v["note"]) for key, v in pairs_of(target).items() if key[3:] == ("1", "1"))
    assert notes == {"Bees [0→1]": "source provenance: majority", "Bees [1→2]": "source provenance: adjudicated"}


def test_derived_pairs_come_back_flagged_in_their_attributes(newsela, settings, tmp_path, users):
    _, root = run(newsela["project"], settings, tmp_path, drop_identical=False)
    derived = [p for p in exported_pairs(root) if p["derived"]]
    assert derived and all(p["id"] == "Bees [0→2]" for p in derived)
    target, _ = reimport(root)
    back = pairs_of(target)
    for p in derived:
        key = ("Bees [0→2]", "0", "2", ",".join(map(str, p["complex"])), ",".join(map(str, p["simple"])))
        assert back[key]["label"] == p["label"]
        assert back[key]["attributes"] == {**p["attributes"], "derived": 1.0}
        assert back[key]["note"] == "source provenance: derived"


def test_reimporting_into_another_scheme_maps_classes_and_refuses_foreign_values(corpus, settings, tmp_path, users):
    """"aligned" and "partial" are class names too, so they map to the target scheme's values; the
    source scheme's "not-aligned" is neither a value of it nor a class: refused, valid ones listed,
    nothing written."""
    _, root = run(corpus, settings, tmp_path, split_policy={"mode": "counts", "train": 6, "dev": 0, "test": 0})
    with pytest.raises(CorpusImportError) as caught:
        reimport(root, scheme="wivico-validity")
    problems = [str(p) for p in caught.value.problems]
    assert len(problems) == 6
    assert problems[0] == ("train.jsonl:1: pairs[3].label: unknown label 'not-aligned' for the project's label scheme "
                           "'wivico-validity'; choose one of: valid, partially-valid, non-valid (or a class: aligned, partial, not)")
    assert not Article.objects.filter(project__name="Reimported").exists()


def test_no_article_appears_in_two_splits(corpus, settings, tmp_path):
    _, root = run(corpus, settings, tmp_path, split_policy={"mode": "counts", "train": 4, "dev": 1, "test": 1})
    seen: dict[str, str] = {}
    for split in SPLITS:
        for row in (all_pairs(root)):
            if row["split"] == split:
                assert seen.setdefault(row["article"], split) == split
        for line in (root / "wiki-manual" / f"{split}.tsv").read_text().splitlines():
            article = line.split("\t")[1].rsplit("-", 3)[0]
            assert seen[article] == split
    assert sorted(Split.objects.values_list("name", flat=True)) == ["dev", "test", "train", "train", "train", "train"]
    assert Split.objects.filter(locked=True).count() == 6
