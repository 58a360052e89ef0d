"""Issue 35 §7: the round-trip matrix. Each import layout × each gold export format: import → export →
import (as the manifest's ``reimport`` says) → export, comparing documents, gold (values, so link
classes), completeness, splits, the source's sentence ids and GLEU cells. What a format loses by
design (README, "What each format carries back") is asserted as that loss, never left unchecked:

* ``articles``, ``hf`` — nothing: every aspect of the imported project comes back, and the second
  export is the first one again (byte for byte: ``articles/*.jsonl``, ``hf/articles``, the tsv a
  wiki-manual source gives);
* ``tsv`` — n:m pairs become 1:1 rows, links of unknown kind and ties have no TSV row (the folder's
  ``gold_sidecar.json`` carries them with their values, and which document pairs are complete),
  documents of a sparse document pair hold only the sentences named; the rest (ids, GLEU, row order,
  splits, completeness exactly, complete documents) comes back and the second export is the first one
  again, sidecar included;
* ``jsonl`` — a pair per line carries only its sentences (documents: the named ones; a complete
  document pair stays complete only when its lines name all its sentences) and no source ids / GLEU.

Inputs are tiny (two or three articles of a few sentences), so the 24 round trips stay fast.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from annotation.models import Adjudication, Article, Document, Sentence, Split
from annotation.services.corpus.importing import import_path
from annotation.services.corpus.importing.formats.wiki_manual import GLEU_KEY, IDS_KEY, ORDER_KEY
from annotation.services.review.exhaustive import exhaustive_pairs
from tests import factories

from .conftest import gold, make_pair
from .helpers import run

datasets = pytest.importorskip("datasets")
pytestmark = pytest.mark.django_db
FORMATS = ("articles", "hf", "tsv", "jsonl")
FOLDER = {"articles": "articles", "hf": "hf", "tsv": "wiki-manual", "jsonl": "jsonl"}
# The released layout: rows grouped by simple sentence, ids numbering sentences within their paragraph,
# GLEU as written. Article 7 is listed m × n (complete), article 9 in part (sparse).
WIKI = {
    "train.tsv": ("aligned\t7-0-0-0\t7-1-0-0\tBees dance.\tHoney bees dance to talk.\t0.3\n"
                  "notAligned\t7-0-0-0\t7-1-1-0\tBees dance.\tThey found the food.\t0.01\n"
                  "notAligned\t7-0-1-0\t7-1-0-0\tThey find food.\tHoney bees dance to talk.\t0.02\n"
                  "partialAligned\t7-0-1-0\t7-1-1-0\tThey find food.\tThey found the food.\t0.5\n"),
    "dev.tsv": ("aligned\t9-0-0-3\t9-1-4-2\tOwls hunt.\tOwls hunt at night.\t0.7777\n"
                "notAligned\t9-0-0-3\t9-1-4-3\tOwls hunt.\tThey sleep by day.\t0.0\n"),
}
NEWSELA = {"articles_metadata.csv": "slug,language,title,grade_level,version,filename\n"
                                    "bees,en,Bees,12.0,0,bees.en.0.txt\nbees,en,Bees,5.0,1,bees.en.1.txt\n",
           "articles/bees.en.0.txt": "Bees are remarkably industrious insects. They visit many flowers.\n\nHoney.\n",
           "articles/bees.en.1.txt": "Bees work hard. They visit flowers.\n"}
LABELS = datasets.ClassLabel(names=["notAligned", "aligned", "partialAligned"])
MANUAL = datasets.Features({"alignment_label": LABELS, "normal_sentence_id": datasets.Value("string"),
                            "simple_sentence_id": datasets.Value("string"), "normal_sentence": datasets.Value("string"),
                            "simple_sentence": datasets.Value("string"), "gleu_score": datasets.Value("float32")})


# --- the import layouts -----------------------------------------------------------------------------

def wiki_manual(tmp: Path) -> Path:
    folder = tmp / "wiki-manual"
    folder.mkdir()
    for name, text in WIKI.items():
        (folder / name).write_text(text)
    return folder


def newsela(tmp: Path) -> Path:
    for name, text in NEWSELA.items():
        (tmp / "newsela" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "newsela" / name).write_text(text)
    return tmp / "newsela"


def hf_manual(tmp: Path) -> Path:
    """wiki_auto ``manual`` as the hub's parquet converter names it (the split in the name), float32 GLEU."""
    normal = {"5-1-0-0": "The Act is an Act of Parliament.", "5-1-0-1": "It abolished six county councils."}
    simple = {"5-0-0-0": "The Act was a law.", "5-0-0-1": "It ended six councils."}
    label = {("5-1-0-0", "5-0-0-0"): 1, ("5-1-0-1", "5-0-0-1"): 2}
    rows = [(label.get((n, s), 0), n, s, normal[n], simple[s], 0.2 if (n, s) in label else 0.0)
            for s in simple for n in normal]
    data = {name: [row[k] for row in rows] for k, name in enumerate(MANUAL)}
    (tmp / "hub").mkdir()
    datasets.Dataset.from_dict(data, features=MANUAL).to_parquet(str(tmp / "hub" / "manual-dev.parquet"))
    return tmp / "hub"


def hf_auto(tmp: Path) -> Path:
    """wiki_auto ``auto``: whole articles as rows, 1:1 alignments (machine output, read as sparse gold)."""
    content = lambda side: datasets.Sequence({f"{side}_sentence_id": datasets.Value("string"),  # noqa: E731
                                              f"{side}_sentence": datasets.Value("string")})
    article = lambda side: {f"{side}_article_title": datasets.Value("string"),  # noqa: E731
                            f"{side}_article_content": content(side)}
    pair = datasets.Sequence({"normal_sentence_id": datasets.Value("string"),
                              "simple_sentence_id": datasets.Value("string")})
    features = datasets.Features({"example_id": datasets.Value("string"), "normal": article("normal"),
                                  "simple": article("simple"), "sentence_alignment": pair})
    row = {"example_id": "0", "normal": {"normal_article_title": "Lata", "normal_article_content": {
        "normal_sentence_id": ["normal-1-0-0", "normal-1-0-1", "normal-1-1-0"],
        "normal_sentence": ["Lata Mondal is a cricketer from Bangladesh.", "She bats right-handed.", "She was born in 1993."]}},
        "simple": {"simple_article_title": "Lata", "simple_article_content": {
            "simple_sentence_id": ["simple-1-0-0", "simple-1-0-1"],
            "simple_sentence": ["Lata Mondal plays cricket.", "She was born in 1993."]}},
        "sentence_alignment": {"normal_sentence_id": ["normal-1-0-0", "normal-1-1-0"],
                               "simple_sentence_id": ["simple-1-0-0", "simple-1-0-1"]}}
    datasets.DatasetDict({"train": datasets.Dataset.from_list([row], features=features)}).save_to_disk(
        str(tmp / "auto"))
    return tmp / "auto"


def _exported(fmt: str):
    def layout(tmp: Path, settings) -> Path:
        """An alignapp export folder (of the wiki-manual layout's project) as the input."""
        source = factories.make_project(f"Exported {fmt}")
        import_path(source, wiki_manual(tmp), "auto")
        _, root = run(source, settings, tmp / "first", formats=[fmt])
        return root / FOLDER[fmt]
    return layout


LAYOUTS = {"wiki-manual": wiki_manual, "newsela": newsela, "hf-manual": hf_manual, "hf-auto": hf_auto,
           "hf-export": _exported("hf"), "pair-jsonl": _exported("jsonl"), "articles": _exported("articles")}


def imported(layout: str, tmp: Path, settings):
    project = factories.make_project(f"From {layout}")
    builder = LAYOUTS[layout]
    path = builder(tmp, settings) if layout in ("hf-export", "pair-jsonl", "articles") else builder(tmp)
    import_path(project, path, "auto")
    if layout == "newsela":  # no gold in the layout: a researcher links one pair, so there is a gold article
        bees = Article.objects.get(project=project)
        gold(make_pair(bees, "0", "1", [0], [0], origin="import"), "aligned", Adjudication.IMPORTED)
    return project


# --- what a project says ----------------------------------------------------------------------------

def state(project) -> dict:
    docs: dict[tuple[str, str], list[list[str]]] = defaultdict(list)
    for s in (Sentence.objects.filter(document__article__project=project).select_related("document__article", "paragraph")
              .order_by("document_id", "index")):
        paragraphs = docs[(s.document.article.title, s.document.level)]
        while len(paragraphs) <= s.paragraph.index:
            paragraphs.append([])
        paragraphs[s.paragraph.index].append(s.text)
    texts = {key: [t for p in value for t in p] for key, value in docs.items()}
    links = {}
    for g in Adjudication.objects.filter(pair__article__project=project).select_related(
            "pair__article", "pair__complex_document", "pair__simple_document"):
        p = g.pair
        title, c, s = p.article.title, p.complex_document.level, p.simple_document.level
        c_texts = tuple(texts[(title, c)][int(i)] for i in p.complex_key.split(","))
        s_texts = tuple(texts[(title, s)][int(i)] for i in p.simple_key.split(","))
        links[(title, c, s, c_texts, s_texts)] = g.value
    complete = set()
    for e in exhaustive_pairs(project):
        c, s = Document.objects.get(pk=e.complex_document_id), Document.objects.get(pk=e.simple_document_id)
        complete.add((c.article.title, c.level, s.level))
    ids = {(d.article.title, d.level): d.meta.get(IDS_KEY)
           for d in Document.objects.filter(article__project=project).select_related("article")}
    source = {a.title: (a.meta.get(GLEU_KEY), a.meta.get(ORDER_KEY)) for a in Article.objects.filter(project=project)}
    return {"documents": {k: [p for p in v if p] for k, v in docs.items()}, "links": links, "complete": complete,
            "splits": dict(Split.objects.filter(article__project=project).values_list("article__title", "name")),
            "ids": ids, "source": source}


def files(root: Path, fmt: str) -> dict[str, object]:
    """The format's files, comparable across projects (the pair rows' database ids left out)."""
    out: dict[str, object] = {}
    folder = root / FOLDER[fmt]
    for path in sorted(folder.rglob("*")) if folder.exists() else ():
        name = path.relative_to(root).as_posix()
        if path.suffix == ".tsv" or path.name == "gold_sidecar.json":
            out[name] = path.read_bytes()
        elif path.suffix == ".jsonl":
            out[name] = [_without_ids(json.loads(line), fmt) for line in path.read_text().splitlines()]
        elif path.suffix == ".arrow" and "/articles/" in name:
            out[name] = datasets.Dataset.from_file(str(path)).to_list()
    return out


def _difference(again: dict, once: dict) -> str:
    """Where two exports differ: the file, line and keys (an assertion's message)."""
    for name in sorted(set(again) | set(once)):
        a, b = again.get(name), once.get(name)
        if a == b:
            continue
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for k, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    keys = sorted(key for key in set(x) | set(y) if x.get(key) != y.get(key))
                    return f"{name} line {k}: " + "; ".join(f"{key}: {x.get(key)!r} != {y.get(key)!r}" for key in keys)
        return f"{name}: {str(a)[:300]} != {str(b)[:300]}"
    return ""


def _without_ids(line: dict, fmt: str) -> dict:
    """A line without what names database rows: a pair line's ``id`` / ``pair``, the derived groups' ids."""
    # a pair line: its database ids; and what its import restates by design — the source provenance as the
    # adjudication's note, completeness and document sizes of documents the lines did not carry whole
    # (and renumbered the sentences and paragraphs they did not carry whole: the texts are compared instead)
    dropped = ("id", "pair", "group", "note", "complete", "complex_sentence_count", "simple_sentence_count",
               "complex_ids", "simple_ids", "complex_paragraphs", "simple_paragraphs")
    line = {k: v for k, v in line.items() if k not in (dropped if fmt == "jsonl" else ("groups",))}
    for item in line.get("pairs", ()):
        item.pop("group", None)
    return line


# --- the matrix -------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_import_export_import_export(layout, fmt, settings, tmp_path, users):
    settings.IMPORT_DIR = tmp_path / "imports"
    source = imported(layout, tmp_path, settings)
    _, first = run(source, settings, tmp_path / "e1", formats=[fmt])
    before = state(source)  # the export gave articles without a split one
    guide = json.loads((first / "manifest.json").read_text())["reimport"][fmt]
    assert (guide["folder"], guide["gold_meaning"]) == (FOLDER[fmt], "sparse") and guide["meaning"]
    target = factories.make_project("Back")
    import_path(target, first / guide["folder"], "auto", gold_meaning=guide["gold_meaning"])
    after = state(target)
    _, second = run(target, settings, tmp_path / "e2", formats=[fmt])
    again, once = files(second, fmt), files(first, fmt)
    assert again == once, _difference(again, once)  # import → export is a fixpoint after one round
    counts = guide["complete_pairs"]  # the manifest says what comes back complete
    assert (counts["written"], counts["read_back_complete"]) == (len(before["complete"]), len(after["complete"]))
    assert after["splits"] == before["splits"]
    if fmt in ("articles", "hf"):  # everything comes back
        assert after == before
        return
    if fmt == "tsv":  # 1:1 rows of the three classes; documents whole where complete; ids, GLEU, order kept
        assert after["complete"] == before["complete"]  # the folder: TSV + sidecar (when the TSV alone says less)
        alone = counts["tsv_alone"]  # the TSV alone: a sparse pair listed m x n reads back complete
        assert (counts["sidecar"] is not None) == bool(alone["sparse_read_back_complete"])  # no left-out link here
        assert alone["read_back_complete"] == len(before["complete"]) + alone["sparse_read_back_complete"]
        one_to_one = {k: v for k, v in before["links"].items() if len(k[3]) == len(k[4]) == 1}
        assert after["links"] == {**one_to_one, **{k: v for k, v in after["links"].items() if k not in one_to_one}}
        for title, c, s in before["complete"]:
            for level in (c, s):
                assert after["documents"][(title, level)] == before["documents"][(title, level)]
                if before["ids"][(title, level)] is not None:  # else the tsv export's own numbering is kept
                    assert after["ids"][(title, level)] == before["ids"][(title, level)]
        assert {t: v for t, v in after["source"].items() if before["source"][t][0]} == {
            t: v for t, v in before["source"].items() if v[0]}
        return
    # jsonl: the named sentences (in order), every link, complete only where the lines carried it whole
    assert after["links"] == before["links"]
    assert after["complete"] <= before["complete"]
    for (title, level), paragraphs in after["documents"].items():
        named = [t for p in paragraphs for t in p]
        whole = [t for p in before["documents"][(title, level)] for t in p]
        assert named == [t for t in whole if t in named]
    assert all(ids is None for ids in after["ids"].values())  # lost by design: a pair line has no source ids


def test_a_wiki_manual_file_comes_back_byte_identical_through_articles_and_hf(settings, tmp_path, users):
    """Done-when of issue 35: TSV → articles/hf → import → TSV gives the released file, row order included."""
    settings.IMPORT_DIR = tmp_path / "imports"
    source = factories.make_project("Released")
    import_path(source, wiki_manual(tmp_path), "auto")
    for fmt in ("tsv", "articles", "hf"):
        _, first = run(source, settings, tmp_path / f"e1-{fmt}", formats=[fmt])
        target = factories.make_project(f"Via {fmt}")
        import_path(target, first / FOLDER[fmt], "auto")
        _, again = run(target, settings, tmp_path / f"e2-{fmt}", formats=["tsv"])
        for name, text in WIKI.items():
            assert (again / "wiki-manual" / name).read_text() == text, (fmt, name)


BENCH = [Path(__file__).resolve().parents[4].parent / "shared" / "bench" / "wikimanual_layout_onestop_dev.tsv",
         Path("/work/shared/bench/wikimanual_layout_onestop_dev.tsv")]


@pytest.mark.slow
def test_the_shared_12_article_wiki_manual_file_comes_back_byte_identical(settings, tmp_path, users):
    """The shared dev set in the released layout (14,340 rows): TSV → articles / hf → import → TSV."""
    bench = next((p for p in BENCH if p.exists()), None)
    if bench is None:
        pytest.skip(f"{BENCH[0]} is absent (the shared bench data; CI has it)")
    settings.IMPORT_DIR = tmp_path / "imports"
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "dev.tsv").write_bytes(bench.read_bytes())
    source = factories.make_project("Bench")
    import_path(source, folder, "auto")
    for fmt in ("tsv", "articles", "hf"):
        _, first = run(source, settings, tmp_path / f"e1-{fmt}", formats=[fmt])
        target = factories.make_project(f"Bench via {fmt}")
        import_path(target, first / FOLDER[fmt], "auto")
        assert len(exhaustive_pairs(target)) == 12
        _, again = run(target, settings, tmp_path / f"e2-{fmt}", formats=["tsv"])
        assert (again / "wiki-manual" / "dev.tsv").read_bytes() == bench.read_bytes(), fmt


# --- the wiki-manual folder: TSV + gold_sidecar.json ---------------------------------------------------

UNKNOWN_AND_TIE = ("aligned-or-partial\t7-0-0-0\t7-1-0-0\tBees dance.\tHoney bees dance to talk.\t0.3\n"
                   "notAligned\t7-0-0-0\t7-1-1-0\tBees dance.\tThey found the food.\t0.01\n"
                   "notAligned\t7-0-1-0\t7-1-0-0\tThey find food.\tHoney bees dance to talk.\t0.02\n"
                   "partialAligned\t7-0-1-0\t7-1-1-0\tThey find food.\tThey found the food.\t0.5\n")


def _unknown_and_tie(tmp: Path):
    """A complete 2 × 2 document pair (listed m × n) holding a link of unknown kind, and a tie: two
    annotators' votes (aligned / not aligned) outweigh the imported partial of another cell."""
    from annotation.models import CandidatePair, Membership

    from .conftest import vote

    folder = tmp / "unknown-and-tie"
    folder.mkdir()
    (folder / "train.tsv").write_text(UNKNOWN_AND_TIE)
    source = factories.make_project("Unknown and tie")
    for name in ("anna", "bea"):
        user = factories.make_user(name) if name == "bea" else factories.User.objects.get(username=name)
        Membership.objects.create(project=source, user=user, role="annotator")
    import_path(source, folder, "auto")
    tied = CandidatePair.objects.get(article__project=source, gold__value="partial")
    vote(tied, "anna", "aligned"), vote(tied, "bea", "not-aligned")
    return source


def _gold(project) -> dict[tuple, str]:
    """Every sentence pair's value as the gold reading gives it (ties included), by the sentences' texts."""
    from annotation.models import CandidatePair, PairSentence
    from annotation.services.review.gold_reading import pair_gold

    pairs = CandidatePair.objects.filter(article__project=project)
    values = pair_gold(project, pairs, ties=True)
    texts = {s.pk: s.text for s in Sentence.objects.filter(document__article__project=project)}
    out = {}
    for p in pairs:
        if p.pk in values:
            sides = sorted(PairSentence.objects.filter(pair=p).values_list("side", "sentence_id"))
            out[tuple(texts[sid] for _, sid in sides)] = values[p.pk].value
    return out


def test_a_complete_pair_with_a_link_of_unknown_kind_and_a_tie_comes_back_complete_from_the_tsv_folder(
        settings, tmp_path, users):
    """Issue 35 §1: the TSV cannot say aligned-or-partial or undecided; the sidecar beside it can, and says
    which document pairs are complete: the folder re-imports the pair complete, with the same values."""
    settings.IMPORT_DIR = tmp_path / "imports"
    source = _unknown_and_tie(tmp_path)
    values = _gold(source)
    assert sorted(values.values()) == ["aligned-or-partial", "undecided"] and len(exhaustive_pairs(source)) == 1
    _, first = run(source, settings, tmp_path / "e1", formats=["tsv"])
    manifest = json.loads((first / "manifest.json").read_text())
    assert manifest["left_out"]["tsv"] == {"aligned-or-partial": 1, "undecided": 1}
    counts = manifest["reimport"]["tsv"]["complete_pairs"]
    assert counts == {"written": 1, "read_back_complete": 1, "sidecar": "wiki-manual/gold_sidecar.json",
                      "tsv_alone": {"read_back_complete": 0, "sparse_read_back_complete": 0}}
    assert "wiki-manual/gold_sidecar.json" in manifest["files"]  # checksummed and zipped with the rest
    tsv = (first / "wiki-manual" / "train.tsv").read_text()
    assert tsv == "".join(line + "\n" for line in UNKNOWN_AND_TIE.splitlines()[1:3])  # six columns, no new row
    sidecar = json.loads((first / "wiki-manual" / "gold_sidecar.json").read_text())
    assert sidecar["complete"] == [{"article": "7", "complex_level": "1", "simple_level": "0",
                                    "complex_sentences": 2, "simple_sentences": 2}]
    assert [(r["label"], r["gleu"], r["split"]) for r in sidecar["rows"]] == [
        ("aligned-or-partial", "0.3", "train"), ("undecided", "0.5", "train")]

    target = factories.make_project("Folder back")
    result = import_path(target, first / "wiki-manual", "auto")
    assert result.format == "wiki-manual" and not [w for w in result.warnings if "sparse" in w]
    assert len(exhaustive_pairs(target)) == 1  # complete, not sparse
    assert _gold(target) == values  # the same values: never notAligned
    assert state(target)["ids"] == state(source)["ids"] and state(target)["source"] == state(source)["source"]
    _, second = run(target, settings, tmp_path / "e2", formats=["tsv"])  # and the same folder again
    for name in ("train.tsv", "gold_sidecar.json"):
        assert (second / "wiki-manual" / name).read_bytes() == (first / "wiki-manual" / name).read_bytes()


def test_the_tsv_alone_or_a_pair_it_does_not_carry_whole_stays_sparse(settings, tmp_path, users):
    """Without the sidecar the TSV reads as before (a pair with holes is sparse); with it, a listed pair whose
    cells the files do not all carry is sparse, warned — no re-import claims more than it got."""
    settings.IMPORT_DIR = tmp_path / "imports"
    _, first = run(_unknown_and_tie(tmp_path), settings, tmp_path / "e1", formats=["tsv"])
    alone = factories.make_project("TSV alone")
    import_path(alone, first / "wiki-manual" / "train.tsv", "auto")
    assert exhaustive_pairs(alone) == [] and sorted(_gold(alone).values()) == ["not-aligned", "not-aligned"]

    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "train.tsv").write_text((first / "wiki-manual" / "train.tsv").read_text().splitlines()[0] + "\n")
    (cut / "gold_sidecar.json").write_bytes((first / "wiki-manual" / "gold_sidecar.json").read_bytes())
    holed = factories.make_project("Holed")
    result = import_path(holed, cut, "auto")
    assert exhaustive_pairs(holed) == []
    assert any("listed complete in gold_sidecar.json are not carried whole" in w and "3 of 4 sentence pairs" in w
               for w in result.warnings), result.warnings
    assert sorted(_gold(holed).values()) == ["aligned-or-partial", "not-aligned", "undecided"]


def test_a_zipped_tsv_folder_with_its_sidecar_imports_and_a_bad_sidecar_is_refused_located(settings, tmp_path, users):
    import zipfile

    from annotation.services.corpus.importing import CorpusImportError

    settings.IMPORT_DIR = tmp_path / "imports"
    _, first = run(_unknown_and_tie(tmp_path), settings, tmp_path / "e1", formats=["tsv"])
    archive = tmp_path / "wiki-manual.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in (first / "wiki-manual").iterdir():
            zf.write(path, f"wiki-manual/{path.name}")
    zipped = factories.make_project("Zipped")
    import_path(zipped, archive, "auto")
    assert len(exhaustive_pairs(zipped)) == 1

    path = first / "wiki-manual" / "gold_sidecar.json"
    lines = path.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if '"label": "undecided"' in text)  # a row a line
    path.write_text(path.read_text().replace('"label": "undecided"', '"label": "maybe"'))
    with pytest.raises(CorpusImportError) as refused:
        import_path(factories.make_project("Bad"), first / "wiki-manual", "auto")
    problem = refused.value.problems[0]
    assert problem.file.endswith("gold_sidecar.json") and problem.field == "rows[1].label"
    assert "unknown label 'maybe'" in problem.message and problem.line == line
