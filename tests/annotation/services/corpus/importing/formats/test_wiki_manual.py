"""The ``wiki-manual`` import format (issue 22): the released Wiki-Manual / Newsela-Manual TSV, and
the round trip export ``tsv`` → import ``wiki-manual`` (same documents, same gold)."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Adjudication, Article, CandidatePair, Document, Project
from annotation.services import export
from annotation.services.corpus.importing import CorpusImportError, detect_format, import_files, import_path
from annotation.services.review.exhaustive import exhaustive_pairs
from tests import factories

pytestmark = pytest.mark.django_db
ONESTOP = Path(__file__).resolve().parents[6].parent / "shared" / "bench" / "onestop_manual_dev_ADV-ELE.jsonl"

# article 7: complex (level 1) 2 paragraphs, 3 sentences; simple (level 0) 2 sentences; all 6 pairs listed
FULL = [
    ("aligned", "7-0-0-0", "7-1-0-0", "Bees fly.", "Bees fly far and wide."),
    ("notAligned", "7-0-0-0", "7-1-0-1", "Bees fly.", "They like flowers a lot."),
    ("notAligned", "7-0-0-0", "7-1-1-2", "Bees fly.", "Honey is sweet and sticky."),
    ("notAligned", "7-0-0-1", "7-1-0-0", "Honey is sweet.", "Bees fly far and wide."),
    ("partialAligned", "7-0-0-1", "7-1-1-2", "Honey is sweet.", "Honey is sweet and sticky."),
    ("notAligned", "7-0-0-1", "7-1-0-1", "Honey is sweet.", "They like flowers a lot."),
]
# article 8: only two rows of a 2 x 2 pair
PARTIAL = [
    ("aligned", "8-0-0-0", "8-1-0-0", "Cats nap.", "Cats nap all day long."),
    ("notAligned", "8-0-0-1", "8-1-0-1", "Dogs bark.", "Cats purr when they are happy."),
]


def tsv(rows) -> bytes:
    return "".join("\t".join(r) + "\t0.5\n" for r in rows).encode()


def documents_of(project) -> dict:
    """article title → level → (rank, paragraphs of sentence texts)."""
    out: dict = {}
    for d in Document.objects.filter(article__project=project).prefetch_related("sentences").select_related("article"):
        paragraphs: dict = {}
        for s in d.sentences.order_by("index"):
            paragraphs.setdefault(s.paragraph_id, []).append(s.text)
        out.setdefault(d.article.title, {})[d.level] = (d.rank, list(paragraphs.values()))
    return out


def gold_of(project) -> set[tuple]:
    return {(g.pair.article.title, g.pair.complex_document.level, g.pair.simple_document.level, g.pair.complex_key,
             g.pair.simple_key, g.value)
            for g in Adjudication.objects.filter(pair__article__project=project).select_related(
                "pair__article", "pair__complex_document", "pair__simple_document")}


def test_a_full_listing_is_exhaustive_gold_and_a_partial_one_sparse_over_partial_documents(project):
    result = import_files(project, [("dev.tsv", tsv(FULL + PARTIAL))], "wiki-manual")
    assert (result.articles, result.documents, result.sentences) == (2, 4, 9)
    docs = documents_of(project)
    assert docs["7"] == {"1": (0, [["Bees fly far and wide.", "They like flowers a lot."], ["Honey is sweet and sticky."]]),
                         "0": (1, [["Bees fly.", "Honey is sweet."]])}
    assert gold_of(project) == {("7", "1", "0", "0", "0", "aligned"), ("7", "1", "0", "2", "1", "partial"),
                                ("8", "1", "0", "0", "0", "aligned"), ("8", "1", "0", "1", "1", "not-aligned")}
    assert [Article.objects.get(pk=p.article_id).title for p in exhaustive_pairs(project)] == ["7"]
    assert Article.objects.get(title="8").meta["gold_import"]["meaning"] == "sparse"
    assert any("partial documents" in w for w in result.warnings)
    assert result.gold["complete"] == 1
    assert detect_format(["dev.tsv"]) == "wiki-manual"


@pytest.mark.parametrize("line, problem", [
    ("aligned\t7-0-x-0\t7-1-0-0\tA.\tB.", "dev.tsv:2: simple-id: bad sentence id '7-0-x-0'"),
    ("maybe\t7-0-0-0\t7-1-0-0\tA.\tB.", "dev.tsv:2: label: unknown label 'maybe'"),
    ("aligned\t7-0-0-0\t7-1-0-0\tA.", "dev.tsv:2: complex: missing column"),
    ("aligned\t7-0-0-0\t7-1-0-0\tBees fly.\tBees fly far and wide.",
     "dev.tsv:2: pair: duplicate pair 7-0-0-0 / 7-1-0-0 (first at dev.tsv:1)"),
    ("aligned\t7-0-0-0\t7-1-0-1\tOther.\tThey like flowers a lot.", "dev.tsv:2: simple: sentence 7-0-0-0 has another text"),
])
def test_malformed_lines_are_refused_with_their_line_and_nothing_is_imported(project, line, problem):
    data = tsv(FULL[:1]) + (line + "\n").encode()
    with pytest.raises(CorpusImportError) as err:
        import_files(project, [("dev.tsv", data)], "auto")
    assert str(err.value).startswith(problem), str(err.value)
    assert not Article.objects.filter(project=project).exists()


def test_a_label_the_scheme_cannot_take_is_refused_with_its_line(project):
    binary = factories.make_project("Binary")
    scheme = binary.label_scheme
    scheme.values = [v for v in scheme.values if v.get("counts_as") != "partial"]
    scheme.save()
    with pytest.raises(CorpusImportError) as err:
        import_files(binary, [("dev.tsv", tsv(FULL))], "wiki-manual")
    assert str(err.value).startswith("dev.tsv:5: label: label 'partialAligned' (partial) has no value"), str(err.value)
    assert not Article.objects.filter(project=binary).exists()


def test_the_command_recognises_the_format(project, tmp_path, capsys):
    (tmp_path / "test.tsv").write_bytes(tsv(FULL))
    call_command("import_corpus", project.name, str(tmp_path / "test.tsv"), "--format", "auto")
    assert "wiki-manual" in capsys.readouterr().out
    assert Article.objects.filter(project=project, title="7").exists()


def test_export_tsv_then_import_wiki_manual_is_a_round_trip(project, settings, tmp_path):
    if not ONESTOP.exists():
        pytest.skip(f"{ONESTOP} is absent (the shared bench data; CI has it)")
    settings.MEDIA_ROOT = str(tmp_path)
    settings.IMPORT_DIR = tmp_path
    import_path(project, ONESTOP, "jsonl", gold_meaning="exhaustive")
    options = export.ExportOptions.parse({"formats": ["tsv"], "drop_identical": False,
                                          "split_policy": {"mode": "counts", "train": 12, "dev": 0, "test": 0, "seed": 0}},
                                         allow_paths=True)
    root = export.export_dir(export.run_export(project, options))
    exported = root / "wiki-manual" / "train.tsv"
    rows = exported.read_text().splitlines()
    sizes = {d.pk: d.sentences.count() for d in Document.objects.filter(article__project=project)}
    assert len(rows) == sum(sizes[p.complex_document_id] * sizes[p.simple_document_id] for p in exhaustive_pairs(project))

    again = Project.objects.create(name="Round trip", label_scheme=project.label_scheme, language=project.language)
    result = import_path(again, exported, "auto")
    assert result.format == "wiki-manual" and result.gold["complete"] == 12
    assert documents_of(again) == documents_of(project)
    assert gold_of(again) == gold_of(project)
    assert len(exhaustive_pairs(again)) == len(exhaustive_pairs(project)) == 12
    assert CandidatePair.objects.filter(article__project=again).count() == len(gold_of(project))
