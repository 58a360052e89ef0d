"""Issue 27 §4: every gold format round-trips.

Small projects are drawn (hypothesis) with splits, fusions, identical pairs, ties, imported sparse
gold refined by an annotator, adjudicated links and complete (exhaustively annotated) articles. Each
is exported with the defaults; each gold format's folder is imported into a new project with
``--format auto`` and the gold meaning the manifest states, and the new project holds the same
documents (what the format carries of them), the same links with the same values and the same
completeness. What each format can carry (README "What each format carries"):

* ``articles`` — everything: whole documents, n:m pairs, every value (``undecided`` and
  ``aligned-or-partial`` included), completeness, split;
* ``hf`` — as ``articles``: its ``hf/articles`` rows hold the whole documents (the pair rows beside
  them are left out on import);
* ``jsonl`` — one pair per line: the sentences the pairs name (with their paragraphs),
  n:m pairs, every value, completeness, split;
* ``tsv`` (wiki-manual) — 1:1 rows of aligned / partialAligned / notAligned: a complete document
  pair whole (every m × n row), links of unknown kind and ties left out of the TSV (counted in the
  manifest) and written with their values to ``gold_sidecar.json`` beside it, with the complete
  document pairs: the folder gives back every value and the same completeness; exported again, the
  imported file gives the same rows (ids, GLEU, split).
"""
from __future__ import annotations

import json
from collections import defaultdict
from itertools import count

import pytest
from django.contrib.auth import get_user_model
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from annotation.models import (
    Adjudication,
    Article,
    ArticleCompletion,
    CandidatePair,
    Document,
    Sentence,
    Split,
    key_indices,
)
from annotation.services.corpus.importing import import_path
from annotation.services.corpus.importing.formats.wiki_manual import SIDECAR
from annotation.services.review.exhaustive import exhaustive_pairs
from annotation.services.review.gold_reading import pair_gold
from annotation.services.review.gold_rule import UNDECIDED
from tests import factories

from .conftest import gold, make_pair, vote
from .helpers import all_pairs, run

pytestmark = pytest.mark.django_db
NOT_CLASS = {"not-aligned"}
LEFT_OUT_OF_TSV = {"aligned-or-partial", UNDECIDED}
SPLIT_POLICY = {"mode": "counts", "train": 1, "dev": 1, "test": 1, "seed": 0}
KINDS = ("aligned", "partial", "not", "adjudicated", "tie", "refined", "imported", "split", "fusion", "identical")
_names = count()


# --- building a project -----------------------------------------------------------------------

@st.composite
def article_specs(draw) -> dict:
    """One article: its links (kinds of :data:`KINDS`), extra unlinked sentences, where the
    paragraphs break and whether annotators completed it."""
    links = draw(st.lists(st.sampled_from(KINDS), min_size=0, max_size=4))
    return {"links": links, "extra": (draw(st.integers(0, 1)), draw(st.integers(0, 1))),
            "complete": draw(st.booleans()), "break": draw(st.integers(1, 3))}


def _user(name: str):
    return get_user_model().objects.get_or_create(username=name)[0]


def build(specs: list[dict]):
    """A project from :func:`article_specs`: each link over fresh sentences (distinct texts)."""
    project = factories.make_project(f"Round trip {next(_names)}")
    for name in ("anna", "bea"):
        project.memberships.get_or_create(user=_user(name), defaults={"role": "annotator"})
    for a, spec in enumerate(specs):
        complex_, simple, shapes = [], [], []
        for k, kind in enumerate(spec["links"]):
            c_n, s_n = {"split": (1, 2), "fusion": (2, 1)}.get(kind, (1, 1))
            c_ids = list(range(len(complex_), len(complex_) + c_n))
            s_ids = list(range(len(simple), len(simple) + s_n))
            complex_ += [f"Complex {a}.{k}.{i} has many more words in it." for i in range(c_n)]
            simple += ([complex_[-1]] if kind == "identical" else [f"Simple {a}.{k}.{i}." for i in range(s_n)])
            shapes.append((kind, c_ids, s_ids))
        complex_ += [f"Unlinked complex {a}.{i} sentence here." for i in range(spec["extra"][0] + (not complex_))]
        simple += [f"Unlinked simple {a}.{i}." for i in range(spec["extra"][1] + (not simple))]
        cut = min(spec["break"], len(complex_))
        article = factories.make_article(project, f"story {a}", {"adv": [complex_[:cut], complex_[cut:]] if cut < len(complex_)
                                                                  else [complex_], "ele": [simple]})
        article.meta = {"gold_import": {"meaning": "sparse", "test_questions": False}}
        article.save()
        for kind, c_ids, s_ids in shapes:
            _link(make_pair(article, "adv", "ele", c_ids, s_ids), kind)
        if spec["complete"]:
            docs = {d.level: d for d in article.documents.all()}
            ArticleCompletion.objects.create(article=article, complex_document=docs["adv"], simple_document=docs["ele"],
                                             annotator=_user("anna"))
    return project


def _link(pair, kind: str) -> None:
    if kind in ("aligned", "partial", "split", "fusion", "identical"):
        vote(pair, "anna", "partial" if kind == "partial" else "aligned")
    elif kind == "not":
        vote(pair, "anna", "not-aligned")
    elif kind == "adjudicated":
        vote(pair, "anna", "aligned"), vote(pair, "bea", "aligned")
        gold(pair, "partial")
    elif kind == "tie":
        vote(pair, "anna", "partial"), vote(pair, "bea", "aligned")
    else:  # imported sparse gold of unknown kind, refined by an annotator or not
        gold(pair, "aligned-or-partial", Adjudication.IMPORTED)
        if kind == "refined":
            vote(pair, "bea", "partial")


# --- what a project says ------------------------------------------------------------------------

def complete_pairs(project) -> set[tuple[str, str, str]]:
    """(article, complex level, simple level) of every exhaustively annotated document pair."""
    docs = {d.pk: (d.article.title, d.level) for d in
            Document.objects.filter(article__project=project).select_related("article")}
    return {(docs[p.complex_document_id][0], docs[p.complex_document_id][1], docs[p.simple_document_id][1])
            for p in exhaustive_pairs(project)}


def links(project, *, by: str = "ids") -> dict[tuple, str]:
    """Every link with a value, ``(article, levels, complex side, simple side) → value``; sides as
    sentence ids or texts (``by``), or each sentence pair apart (``cells``: by text, n:m as 1:1).
    A tie counts only in a complete document pair; there a not-aligned value is what no link says too."""
    complete = complete_pairs(project)
    pairs = CandidatePair.objects.filter(article__project=project).select_related("article", "complex_document",
                                                                                  "simple_document")
    values = pair_gold(project, pairs, ties=True)
    texts = {d: list(Sentence.objects.filter(document_id=d).order_by("index").values_list("text", flat=True))
             for d in {p.complex_document_id for p in pairs} | {p.simple_document_id for p in pairs}}
    out: dict[tuple, str] = {}
    for p in pairs:
        value = values.get(p.pk)
        where = (p.article.title, p.complex_document.level, p.simple_document.level)
        if value is None or (value.value == UNDECIDED and where not in complete):
            continue
        if value.value in NOT_CLASS and where in complete:
            continue
        c_ids, s_ids = key_indices(p.complex_key), key_indices(p.simple_key)
        if by == "ids":
            out[(*where, tuple(c_ids), tuple(s_ids))] = value.value
            continue
        c_text = tuple(texts[p.complex_document_id][i] for i in c_ids)
        s_text = tuple(texts[p.simple_document_id][i] for i in s_ids)
        if by == "texts":
            out[(*where, c_text, s_text)] = value.value
        else:
            out.update({(*where, (c,), (s,)): value.value for c in c_text for s in s_text})
    return out


def documents(project, titles) -> dict[tuple[str, str], list[list[str]]]:
    out: dict[tuple[str, str], list[list[str]]] = defaultdict(list)
    for s in (Sentence.objects.filter(document__article__project=project, document__article__title__in=titles)
              .select_related("document__article", "paragraph").order_by("document_id", "index")):
        paragraphs = out[(s.document.article.title, s.document.level)]
        while len(paragraphs) <= s.paragraph.index:
            paragraphs.append([])
        paragraphs[s.paragraph.index].append(s.text)
    return {key: [p for p in value if p] for key, value in out.items()}


def splits(project) -> dict[str, str]:
    return dict(Split.objects.filter(article__project=project).values_list("article__title", "name"))


def reimport(root, fmt: str, manifest: dict):
    """The format's folder imported into a new project as the manifest says (``--format auto``)."""
    guide = manifest["reimport"][fmt]
    target = factories.make_project(f"Back {next(_names)}")
    result = import_path(target, root / guide["folder"], "auto", gold_meaning=guide["gold_meaning"])
    assert result.format == guide["format"]
    return target


def tsv_rows(root) -> list[str]:
    return sorted(line for path in (root / "wiki-manual").glob("*.tsv") for line in path.read_text().splitlines())


# --- the round trips --------------------------------------------------------------------------

def check_articles(source, root, manifest, fmt: str = "articles") -> None:
    target = reimport(root, fmt, manifest)
    assert links(target) == links(source)
    assert complete_pairs(target) == complete_pairs(source)
    titles = list(Article.objects.filter(project=target).values_list("title", flat=True))
    assert documents(target, titles) == documents(source, titles)
    assert splits(target) == {t: s for t, s in splits(source).items() if t in titles}


def check_pair_lines(source, root, manifest, fmt: str) -> None:
    lines = {(r["article"], r["complex_level"], r["simple_level"]) for r in all_pairs(root)}
    if not lines:  # complete articles without a link: no line to import
        assert links(source) == {}
        return
    target = reimport(root, fmt, manifest)
    # a document pair without a pair has no line; one whose lines miss a sentence of its documents reads back sparse
    named: dict[tuple[str, str], set[int]] = defaultdict(set)
    sizes: dict[tuple[str, str], int] = {}
    for r in all_pairs(root):
        for side in ("complex", "simple"):
            named[(r["article"], r[f"{side}_level"])].update(r[f"{side}_ids"])
            sizes[(r["article"], r[f"{side}_level"])] = r[f"{side}_sentence_count"]
    carried = {key for key in lines if all(len(named[(key[0], lv)]) == sizes[(key[0], lv)] for lv in key[1:])}
    assert complete_pairs(target) == complete_pairs(source) & carried
    # a tie is a link only inside a complete document pair: one read back sparse has none (and there the
    # not-aligned values, implied while it was complete, are stated)
    sparse_now = complete_pairs(source) - carried
    assert {k: v for k, v in links(target, by="texts").items() if not (v in NOT_CLASS and k[:3] in sparse_now)} == {
        k: v for k, v in links(source, by="texts").items() if not (v == UNDECIDED and k[:3] in sparse_now)}
    for (title, level), paragraphs in documents(target, list(splits(target))).items():  # the named sentences, in order
        whole = [t for p in documents(source, [title])[(title, level)] for t in p]
        named = [t for p in paragraphs for t in p]
        assert named == [t for t in whole if t in named]
    assert splits(target) == {t: s for t, s in splits(source).items() if t in splits(target)}


def check_tsv(source, root, manifest, settings, tmp_path) -> None:
    rows = tsv_rows(root)
    assert not any(line.split("\t")[0] in LEFT_OUT_OF_TSV for line in rows)
    assert all(path.read_text().strip() for path in (root / "wiki-manual").glob("*.tsv"))  # no empty split file
    sidecar = root / "wiki-manual" / SIDECAR
    if not rows and not sidecar.exists():
        assert not any(v in LEFT_OUT_OF_TSV for v in links(source).values())
        return
    target = reimport(root, "tsv", manifest)
    # the folder (TSV + sidecar): every value, n:m pairs as 1:1 rows, the links of unknown kind and the ties
    # from the sidecar (never notAligned), and the same completeness
    assert links(target, by="cells") == links(source, by="cells")
    assert complete_pairs(target) == complete_pairs(source)
    counts = manifest["reimport"]["tsv"]["complete_pairs"]
    assert counts["read_back_complete"] == len(complete_pairs(source)) == counts["written"]
    assert sidecar.exists() == (counts["sidecar"] is not None)
    for title, c_level, s_level in complete_pairs(source):
        for level in (c_level, s_level):
            assert documents(target, [title])[(title, level)] == documents(source, [title])[(title, level)]
    assert splits(target) == {t: s for t, s in splits(source).items() if t in splits(target)}
    _, again = run(target, settings, tmp_path / "again", formats=["tsv"])
    assert tsv_rows(again) == rows  # same rows, ids, GLEU and split files
    assert (again / "wiki-manual" / SIDECAR).exists() == sidecar.exists()


@hsettings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(specs=st.lists(article_specs(), min_size=1, max_size=3))
def test_every_gold_format_round_trips(specs, settings, tmp_path_factory):
    source = build(specs)
    tmp = tmp_path_factory.mktemp("round")
    done, root = run(source, settings, tmp, split_policy=SPLIT_POLICY)
    manifest = json.loads((root / "manifest.json").read_text())
    assert set(manifest["reimport"]) == {"tsv", "jsonl", "articles", "hf"}
    if not any(path.read_text().strip() for path in (root / "articles").glob("*.jsonl")):
        assert links(source) == {} and not complete_pairs(source)  # nothing to say: nothing exported
        return
    check_articles(source, root, manifest)
    check_pair_lines(source, root, manifest, "jsonl")
    check_articles(source, root, manifest, "hf")  # hf/articles: whole documents (issue 28 §4)
    check_tsv(source, root, manifest, settings, tmp)


WIKI = {  # ids by paragraph position (article-level-paragraph-sentence in paragraph), the file's own GLEU
    "train.tsv": ("aligned\t7-0-0-0\t7-1-0-0\tBees dance.\tHoney bees dance to talk.\t0.3000\n"
                  "notAligned\t7-0-0-0\t7-1-2-1\tBees dance.\tThey found the food.\t0.0100\n"
                  "partialAligned\t7-0-1-0\t7-1-2-1\tThey find food.\tThey found the food.\t0.5\n"
                  "notAligned\t7-0-1-0\t7-1-0-0\tThey find food.\tHoney bees dance to talk.\t0.0200\n"),
    "test.tsv": "aligned\t9-0-0-3\t9-1-4-2\tOwls hunt.\tOwls hunt at night.\t0.7777\n",
}


def test_an_imported_wiki_manual_file_exported_again_gives_the_same_rows(settings, tmp_path, users):
    folder = tmp_path / "wiki"
    folder.mkdir()
    for name, text in WIKI.items():
        (folder / name).write_text(text)
    project = factories.make_project("Wiki")
    import_path(project, folder, "auto")
    assert splits(project) == {"7": "train", "9": "test"}  # the files' split, not a new one
    _, root = run(project, settings, tmp_path / "out", formats=["tsv"])
    assert sorted(p.name for p in (root / "wiki-manual").iterdir()) == ["test.tsv", "train.tsv"]  # no empty dev.tsv
    for name, text in WIKI.items():
        assert sorted((root / "wiki-manual" / name).read_text().splitlines()) == sorted(text.splitlines())
