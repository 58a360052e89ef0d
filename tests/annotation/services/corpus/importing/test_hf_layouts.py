"""The Hugging Face layouts of the field import with their ids (issue 28 §4): ``wiki_auto``'s manual and
auto configurations and newsela-auto-style pair rows, built here with ``datasets`` (never downloaded)."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, Article, CandidatePair, Document, Sentence, Split
from annotation.services.corpus.importing import import_path
from annotation.services.review.exhaustive import exhaustive_pairs

datasets = pytest.importorskip("datasets")
pytestmark = pytest.mark.django_db
LABELS = datasets.ClassLabel(names=["notAligned", "aligned", "partialAligned"])
MANUAL = datasets.Features({"alignment_label": LABELS, "normal_sentence_id": datasets.Value("string"),
                            "simple_sentence_id": datasets.Value("string"), "normal_sentence": datasets.Value("string"),
                            "simple_sentence": datasets.Value("string"), "gleu_score": datasets.Value("float32")})
NORMAL = {"0_66252-1-0-0": "The Act is an Act of Parliament in the United Kingdom.",
          "0_66252-1-0-1": "It abolished the six county councils of the metropolitan counties.",
          "0_66252-1-1-0": "It came into force in 1986 after a long debate."}
SIMPLE = {"0_66252-0-0-0": "The Act was an Act of Parliament.", "0_66252-0-0-1": "It ended six councils."}
LABEL_OF = {("0_66252-1-0-0", "0_66252-0-0-0"): 1, ("0_66252-1-0-1", "0_66252-0-0-1"): 2}


@pytest.fixture(autouse=True)
def import_dir(settings, tmp_path):
    settings.IMPORT_DIR = tmp_path / "imports"
    settings.MEDIA_ROOT = str(tmp_path / "media")


def manual_rows() -> dict[str, list]:
    """Article 0_66252 listed m × n (3 × 2 rows: exhaustive); article 5_77 listed in part."""
    rows = [(LABEL_OF.get((n, s), 0), n, s, NORMAL[n], SIMPLE[s], 0.25) for s in SIMPLE for n in NORMAL]
    rows += [(1, "5_77-1-0-0", "5_77-0-0-0", "Owls hunt at night in the forest.", "Owls hunt at night.", 0.5),
             (0, "5_77-1-0-1", "5_77-0-0-0", "They sleep by day.", "Owls hunt at night.", 0.0),
             (2, "5_77-1-0-1", "5_77-0-1-0", "They sleep by day.", "Owls sleep.", 0.1)]  # 3 of 2 × 2
    names = ("alignment_label", "normal_sentence_id", "simple_sentence_id", "normal_sentence", "simple_sentence",
             "gleu_score")
    return {name: [row[k] for row in rows] for k, name in enumerate(names)}


def paragraphs(document: Document) -> list[list[str]]:
    out: dict[int, list[str]] = {}
    for s in Sentence.objects.filter(document=document).select_related("paragraph").order_by("index"):
        out.setdefault(s.paragraph.index, []).append(s.text)
    return list(out.values())


def gold(project) -> set[tuple[str, str, str, str, str]]:
    return set(Adjudication.objects.filter(pair__article__project=project).values_list(
        "pair__article__title", "pair__complex_document__level", "pair__complex_key", "pair__simple_key", "value"))


def test_wiki_auto_manual_rows_group_by_their_ids_and_read_labels_through_the_classlabel(project, tmp_path):
    data = datasets.Dataset.from_dict(manual_rows(), features=MANUAL)
    datasets.DatasetDict({"train": data.select(range(6)), "validation": data.select([6, 7, 8])}).save_to_disk(
        str(tmp_path / "manual"))
    result = import_path(project, tmp_path / "manual", "auto")
    assert result.format == "hf"
    assert result.sentences == 5 + 4  # each distinct sentence once (the 9 rows name 3 + 2 and 2 + 2)
    docs = {(d.article.title, d.level): d for d in Document.objects.filter(article__project=project).select_related("article")}
    assert set(docs) == {("0_66252", "1"), ("0_66252", "0"), ("5_77", "1"), ("5_77", "0")}
    assert paragraphs(docs[("0_66252", "1")]) == [[NORMAL["0_66252-1-0-0"], NORMAL["0_66252-1-0-1"]],
                                                   [NORMAL["0_66252-1-1-0"]]]
    assert docs[("0_66252", "1")].rank < docs[("0_66252", "0")].rank  # level 1 (normal) is the complex side
    assert gold(project) == {("0_66252", "1", "0", "0", "aligned"), ("0_66252", "1", "1", "1", "partial"),
                             ("5_77", "1", "0", "0", "aligned"), ("5_77", "1", "1", "0", "not-aligned"),
                             ("5_77", "1", "1", "1", "partial")}
    titles = dict(Article.objects.filter(project=project).values_list("pk", "title"))
    assert {titles[p.article_id] for p in exhaustive_pairs(project)} == {"0_66252"}  # listed m × n
    assert dict(Split.objects.filter(article__project=project).values_list("article__title", "name")) == {
        "0_66252": "train", "5_77": "dev"}
    assert Article.objects.get(project=project, title="5_77").meta["wiki_manual_gleu"]["1|0"]["0,0"] == "0.5"


def test_a_classlabel_pair_dataset_reads_the_names_with_or_without_named_columns(project, tmp_path):
    features = datasets.Features({"src": datasets.Value("string"), "dst": datasets.Value("string"), "y": LABELS})
    datasets.Dataset.from_dict({"src": ["A long complex sentence here.", "Another long one."], "dst": ["Short.", "Tiny."],
                                "y": [2, 0]}, features=features).to_parquet(str(tmp_path / "pairs.parquet"))
    import_path(project, tmp_path / "pairs.parquet", "hf", columns="src,dst,y")
    assert sorted(Adjudication.objects.values_list("value", flat=True)) == ["not-aligned", "partial"]
    features = datasets.Features({"normal_sentence": datasets.Value("string"), "simple_sentence": datasets.Value("string"),
                                  "alignment_label": LABELS})  # wiki_auto's names, found without --columns
    datasets.Dataset.from_dict({"normal_sentence": ["A third long sentence."], "simple_sentence": ["Third."],
                                "alignment_label": [1]}, features=features).to_parquet(str(tmp_path / "more.parquet"))
    import_path(project, tmp_path / "more.parquet", "auto")
    assert sorted(Adjudication.objects.values_list("value", flat=True)) == ["aligned", "not-aligned", "partial"]


def test_newsela_auto_style_rows_with_complex_and_simple_ids_and_no_label(project, tmp_path):
    data = datasets.Dataset.from_dict({
        "complex_id": ["bees.en-0-0-0", "bees.en-0-0-0", "bees.en-0-1-0"],
        "simple_id": ["bees.en-3-0-0", "bees.en-3-0-1", "bees.en-3-1-0"],
        "complex": ["Bees are industrious insects that visit flowers.", "Bees are industrious insects that visit flowers.",
                    "Honey is their product."],
        "simple": ["Bees work hard.", "They visit flowers.", "They make honey."]})
    data.to_parquet(str(tmp_path / "test.parquet"))
    result = import_path(project, tmp_path / "test.parquet", "hf")
    assert (result.articles, result.sentences, result.pairs) == (1, 5, 3)  # the repeated complex sentence is one
    docs = {d.level: d for d in Document.objects.filter(article__project=project)}
    assert paragraphs(docs["3"]) == [["Bees work hard.", "They visit flowers."], ["They make honey."]]
    assert CandidatePair.objects.filter(complex_document=docs["0"], complex_key="0").count() == 2  # a split


def auto_rows() -> dict[str, list]:
    """One wiki_auto ``auto`` row (the dataset card's example, shortened)."""
    normal_ids = ["normal-41918715-0-0", "normal-41918715-0-1", "normal-41918715-1-0", "normal-41918715-3-0"]
    simple_ids = ["simple-702227-0-0", "simple-702227-0-1"]
    return {"example_id": ["0"], "normal": [{
        "normal_article_id": 41918715, "normal_article_title": "Lata Mondal",
        "normal_article_url": "https://en.wikipedia.org/wiki?curid=41918715",
        "normal_article_content": {"normal_sentence_id": normal_ids, "normal_sentence": [
            "Lata Mondal is a Bangladeshi cricketer who plays for the national team.", "She is a right handed batter.",
            "Mondal was born on January 16, 1993 in Dhaka.", "She made her ODI career against Ireland."]}}],
        "simple": [{"simple_article_id": 702227, "simple_article_title": "Lata Mondal",
                    "simple_article_url": "https://simple.wikipedia.org/wiki?curid=702227",
                    "simple_article_content": {"simple_sentence_id": simple_ids, "simple_sentence": [
                        "Lata Mondal is a Bangladeshi cricketer.", "She is a right handed bat."]}}],
        "paragraph_alignment": [{"normal_paragraph_id": ["normal-41918715-0"], "simple_paragraph_id": ["simple-702227-0"]}],
        "sentence_alignment": [{"normal_sentence_id": normal_ids[:2], "simple_sentence_id": simple_ids}]}


def test_wiki_auto_auto_rows_import_whole_articles_with_paragraphs_and_alignments(project, tmp_path):
    content = lambda side: datasets.Sequence({f"{side}_sentence_id": datasets.Value("string"),  # noqa: E731
                                              f"{side}_sentence": datasets.Value("string")})
    article = lambda side: {f"{side}_article_id": datasets.Value("int32"),  # noqa: E731
                            f"{side}_article_title": datasets.Value("string"),
                            f"{side}_article_url": datasets.Value("string"), f"{side}_article_content": content(side)}
    pair = lambda unit: datasets.Sequence({f"normal_{unit}_id": datasets.Value("string"),  # noqa: E731
                                           f"simple_{unit}_id": datasets.Value("string")})
    features = datasets.Features({"example_id": datasets.Value("string"), "normal": article("normal"),
                                  "simple": article("simple"), "paragraph_alignment": pair("paragraph"),
                                  "sentence_alignment": pair("sentence")})
    datasets.DatasetDict({"part_2": datasets.Dataset.from_dict(auto_rows(), features=features)}).save_to_disk(
        str(tmp_path / "auto"))
    result = import_path(project, tmp_path / "auto", "auto")
    assert (result.format, result.articles, result.sentences, result.pairs) == ("hf", 1, 6, 2)
    docs = {d.level: d for d in Document.objects.filter(article__project=project, article__title="Lata Mondal")}
    assert [len(p) for p in paragraphs(docs["normal"])] == [2, 1, 1] and docs["normal"].rank == 0
    assert gold(project) == {("Lata Mondal", "normal", "0", "0", "aligned"), ("Lata Mondal", "normal", "1", "1", "aligned")}


# --- issue 36 items 2 and 4: hf/articles rows of the wrong types, repeated rows -----------------------

def article_row(title: str = "Bees", complex_level: str = "adv", simple_level: str = "ele") -> dict:
    """One row of the export's ``hf/articles`` layout (``annotation/services/export/hf_articles.py``)."""
    def side(p: str, level: str, texts: list[str]) -> dict:
        return {f"{p}_level": level, f"{p}_article_title": title, f"{p}_article_content": {
            f"{p}_sentence_id": [f"{level}-0-{k}" for k in range(len(texts))], f"{p}_sentence": texts}}
    return {"example_id": title, "article": title, "split": "train", "complete": True,
            "complex": side("complex", complex_level, ["Bees fly far and wide.", "They make honey."]),
            "simple": side("simple", simple_level, ["Bees fly."]),
            "sentence_alignment": {"complex_sentence_id": [[f"{complex_level}-0-0"]],
                                   "simple_sentence_id": [[f"{simple_level}-0-0"]], "label": ["aligned"],
                                   "provenance": ["majority"], "score": [0.9], "attributes": ["{}"], "derived": [False]}}


def articles_parquet(rows: list[dict]) -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buf)
    return buf.getvalue()


def refused(project, files: list[tuple[str, bytes]]) -> list[str]:
    from annotation.services.corpus.importing import CorpusImportError, import_files

    with pytest.raises(CorpusImportError) as caught:
        import_files(project, files)
    assert not Article.objects.exists() and not CandidatePair.objects.exists() and not Adjudication.objects.exists()
    return [str(p) for p in caught.value.problems]


def with_cell(path: str, value) -> dict:
    row = article_row()
    *parents, last = path.split(".")
    target = row
    for key in parents:
        target = target[key]
    target[last] = value
    return row


WRONG_TYPES = [
    ("complex", "a text", "a.parquet:1: complex: must be a struct, got a text"),
    ("sentence_alignment", "a text", "a.parquet:1: sentence_alignment: must be a struct, got a text"),
    ("complex.complex_article_content", "a text",
     "a.parquet:1: complex.complex_article_content: must be a struct, got a text"),
    ("simple.simple_article_content.simple_sentence", "Bees fly.",
     "a.parquet:1: simple.simple_article_content.simple_sentence: must be a list of texts, got a text"),
    ("complex.complex_article_content.complex_sentence_id", [1, 2],
     "a.parquet:1: complex.complex_article_content.complex_sentence_id[0]: must be a text, got int"),
    ("sentence_alignment.label", "aligned",
     "a.parquet:1: sentence_alignment.label: must be a list (one value per alignment), got a text"),
    ("sentence_alignment.complex_sentence_id", "adv-0-0",
     "a.parquet:1: sentence_alignment.complex_sentence_id: must be a list"),
    ("complex.complex_level", ["adv"], "a.parquet:1: complex.complex_level: must be a level name, got a list"),
    ("complex.complex_level", "x" * 51, "a.parquet:1: complex.level: must be at most 50 characters"),
]


@pytest.mark.parametrize("path, value, expected", WRONG_TYPES, ids=[f"{c[0]}={c[1]!r:.12}" for c in WRONG_TYPES])
def test_an_hf_articles_cell_of_the_wrong_type_is_refused_at_its_row(project, path, value, expected):
    """A string where a struct belongs answered a 500 (``'str' object has no attribute 'get'``)."""
    problems = refused(project, [("a.parquet", articles_parquet([with_cell(path, value)]))])
    assert len(problems) == 1 and problems[0].startswith(expected), problems


def test_a_repeated_hf_articles_row_is_refused_with_both_places_not_with_database_text(project):
    """Duplicate rows, or one article's row in two files, answered "the corpus changed during the import
    (UNIQUE constraint failed: annotation_candidatepair…)"."""
    for files in ([("a.parquet", articles_parquet([article_row(), article_row()]))],
                  [("a.parquet", articles_parquet([article_row()])), ("b.parquet", articles_parquet([article_row()]))]):
        problems = refused(project, files)
        assert len(problems) == 1 and "the document pair 'adv' → 'ele' is listed again (first at a.parquet:1)" in problems[0]
        assert "UNIQUE" not in problems[0] and "constraint" not in problems[0]
    from annotation.services.corpus.importing import import_files

    result = import_files(project, [("a.parquet", articles_parquet([article_row(), article_row(simple_level="int")]))])
    assert (result.articles, result.pairs) == (1, 2)  # two document pairs of one article: fine


def test_float32_gleu_cells_come_back_as_their_shortest_decimal(project, tmp_path, settings):
    from annotation.services import export

    data = datasets.Dataset.from_dict(manual_rows(), features=MANUAL).select(range(6))  # 0_66252, m × n, GLEU 0.25
    data = data.map(lambda row, k: {"gleu_score": [0.2, 0.33, 0.1, 0.0, 0.7, 1.0][k]}, with_indices=True,
                    features=MANUAL)
    data.to_parquet(str(tmp_path / "manual-dev.parquet"))  # the hub converter's naming: the split is in the name
    import_path(project, tmp_path / "manual-dev.parquet", "auto")
    assert dict(Split.objects.values_list("article__title", "name")) == {"0_66252": "dev"}
    done = export.run_export(project, export.ExportOptions.parse({"formats": ["tsv"]}, allow_paths=True))
    rows = (export.export_dir(done) / "wiki-manual" / "dev.tsv").read_text().splitlines()
    assert sorted(r.rsplit("\t", 1)[1] for r in rows) == ["0.0", "0.1", "0.2", "0.33", "0.7", "1.0"]  # not 0.2000000029…


@pytest.mark.parametrize("layout", ["manual/dev/0000.parquet", "data/validation-00000-of-00001.parquet",
                                    "wiki_manual_dev.parquet", "manual-dev.parquet"])
def test_split_names_in_folder_and_file_names_are_read_as_datasets_reads_them(project, tmp_path, layout):
    path = tmp_path / "in" / layout
    path.parent.mkdir(parents=True)
    datasets.Dataset.from_dict(manual_rows(), features=MANUAL).to_parquet(str(path))
    import_path(project, tmp_path / "in", "auto")
    assert set(Split.objects.filter(article__project=project).values_list("name", flat=True)) == {"dev"}


def test_a_file_named_after_two_splits_is_refused(project, tmp_path):
    from annotation.services.corpus.importing import CorpusImportError

    datasets.Dataset.from_dict(manual_rows(), features=MANUAL).to_parquet(str(tmp_path / "train-test.parquet"))
    with pytest.raises(CorpusImportError, match=r"train-test.parquet: the name says two splits \(test, train\)"):
        import_path(project, tmp_path / "train-test.parquet", "auto")


@pytest.mark.parametrize("first", ["a", "z"])
def test_a_folder_of_two_layouts_is_refused_whichever_file_comes_first(project, tmp_path, first):
    """Issue 36 §14: the alphabetically first file no longer decides the layout of the whole folder."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    datasets.Dataset.from_dict(manual_rows(), features=MANUAL).to_parquet(str(folder / f"{first}-ids.parquet"))
    other = "z" if first == "a" else "a"
    datasets.Dataset.from_dict({"complex": ["A long sentence here."], "simple": ["A short one."]}).to_parquet(
        str(folder / f"{other}-plain.parquet"))
    from annotation.services.corpus.importing import CorpusImportError

    with pytest.raises(CorpusImportError) as caught:
        import_path(project, folder, "auto")
    [problem] = [str(p) for p in caught.value.problems]
    assert "an import reads one layout" in problem and "pair rows with sentence ids" in problem
    assert not Article.objects.filter(project=project).exists()
