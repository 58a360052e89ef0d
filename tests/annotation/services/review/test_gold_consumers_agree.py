"""Issue 34 §4: every consumer of gold agrees with the one gold reading, link by link.

Hypothesis draws small projects — one article pair of 3 × 3 sentences; imported gold of each meaning
(sparse or exhaustive; aligned-or-partial, aligned, partial), 1–3 annotators voting through the queue
and/or completing the article pair in the whole-article view (empty completions included, an imported
link a completer left unlinked, a disagreement on an imported link), adjudications, ties — and checks,
for the policy each consumer uses, that the export's files (jsonl, wiki-manual TSV, articles), the
preview's counts, the training labels, the run scores' gold, ``pair_gold`` (calibration, test
questions, curation), the adjudication page's "exported as" and the curation page's gold say what
:func:`annotation.services.review.gold_reading.read` says."""
from __future__ import annotations

import csv
from itertools import count

import pytest
from django.contrib.auth import get_user_model
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from annotation.label_schemes import UNKNOWN_KIND, value_classes
from annotation.models import (
    Adjudication,
    AlignmentRun,
    ArticleCompletion,
    CandidatePair,
    Label,
    Membership,
    Status,
    indices_key,
    key_indices,
)
from annotation.services import export
from annotation.services.alignment.run_saving import link_sentences
from annotation.services.editing import curation
from annotation.services.review import adjudication, gold_reading
from annotation.services.review.gold_reading import pair_gold
from annotation.services.review.gold_rule import UNDECIDED
from annotation.services.training import dataset, run_scores
from tests import factories
from tests.annotation.services.export.helpers import all_pairs, jsonl, run

pytestmark = pytest.mark.django_db
N = 3  # sentences per side
VALUES = ("aligned", "partial", "not-aligned")
PEOPLE = ("anna", "bob", "cleo")
WIKI = {"aligned": "aligned", "partial": "partialAligned", "not": "notAligned"}
_names = count()


@st.composite
def cells(draw) -> dict:
    """What one sentence pair has: imported gold, each person's label (None: none), an adjudication."""
    return {"imported": draw(st.sampled_from((None, None, "aligned-or-partial", "aligned", "partial"))),
            "labels": draw(st.tuples(*[st.sampled_from((None, None) + VALUES) for _ in PEOPLE])),
            "adjudicated": draw(st.sampled_from((None, None, None, "aligned", "not-aligned")))}


@st.composite
def projects(draw) -> dict:
    return {"cells": draw(st.dictionaries(st.tuples(st.integers(0, N - 1), st.integers(0, N - 1)), cells(), max_size=5)),
            "completers": draw(st.sets(st.sampled_from(PEOPLE), max_size=3)),
            "exhaustive_import": draw(st.booleans()),
            "policy": draw(st.sampled_from(("majority-or-single", "majority", "stored")))}


def build(spec: dict, users: dict):
    project = factories.make_project(f"Agree {next(_names)}", scheme="aligned-partial-not")
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    for name in PEOPLE:
        Membership.objects.get_or_create(project=project, user=users[name], defaults={"role": "annotator"})
    article = factories.make_article(project, "Bees", {
        "adv": [[f"Complex sentence {i} has quite a few words." for i in range(N)]],
        "int": [[f"Simple sentence {i}." for i in range(N)]]})
    imported_any = any(cell["imported"] for cell in spec["cells"].values())
    meaning = "exhaustive" if spec["exhaustive_import"] and imported_any else "sparse"
    article.meta = {"gold_import": {"meaning": meaning, "document_pairs": [["adv", "int"]]}}
    article.save()
    c, s = article.documents.order_by("rank")
    for (ci, si), cell in spec["cells"].items():
        pair = CandidatePair.objects.create(article=article, complex_document=c, simple_document=s,
                                            complex_key=indices_key([ci]), simple_key=indices_key([si]), origin="manual")
        link_sentences([pair])
        for name, value in zip(PEOPLE, cell["labels"]):
            if value:
                Label.objects.create(pair=pair, annotator=users[name], value=value, seconds=10)
        if cell["adjudicated"]:
            Adjudication.objects.create(pair=pair, value=cell["adjudicated"], provenance=Adjudication.ADJUDICATED,
                                        reviewer=users["rita"])
        elif cell["imported"]:
            Adjudication.objects.create(pair=pair, value=cell["imported"], provenance=Adjudication.IMPORTED)
    for name in spec["completers"]:
        ArticleCompletion.objects.create(article=article, complex_document=c, simple_document=s, annotator=users[name])
    return project, article, c, s


def expected_cells(project, doc) -> dict[tuple[int, int], str]:
    """Every cell's class the reading gives (the rest included when exhaustive); no value: absent."""
    found = gold_reading.cell_classes(project, doc) if doc is not None else {}
    if doc is not None and doc.exhaustive:
        rest = value_classes(project.label_scheme).get(doc.rest.value, "not")
        left = {(key_indices(doc.keys[pid][0])[0], key_indices(doc.keys[pid][1])[0]) for pid in doc.left_out}
        return {(ci, si): found.get((ci, si), rest) for ci in range(N) for si in range(N) if (ci, si) not in left}
    return found


def tsv_cells(root) -> dict[tuple[int, int], str]:
    out = {}
    for path in (root / "wiki-manual").glob("*.tsv"):
        for label, s_id, c_id, *_ in csv.reader(path.open(), delimiter="\t"):
            out[(int(c_id.rsplit("-", 1)[-1]), int(s_id.rsplit("-", 1)[-1]))] = label
    return out


@hsettings(max_examples=50, deadline=None, derandomize=True,
           suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(spec=projects())
def test_every_consumer_reads_the_same_gold(spec, users, settings, tmp_path_factory):
    users = {**users, **{name: get_user_model().objects.get_or_create(username=name)[0] for name in PEOPLE}}
    project, article, c, s = build(spec, users)
    policy, key = spec["policy"], (c.pk, s.pk)
    reading = gold_reading.read(project, policy)
    doc = reading.get(key)
    values = {pid: g for pid, g in (doc.pairs.items() if doc else ())}
    written = {pid: g.value for pid, g in values.items() if g.value != UNDECIDED or doc.exhaustive}

    # the export, read back from its files
    done, root = run(project, settings, tmp_path_factory.mktemp("agree"), label_policy=policy, derived=False,
                     drop_identical=False, formats=["jsonl", "tsv", "articles"])
    assert {r["pair"]: r["label"] for r in all_pairs(root)} == written
    cells_now = expected_cells(project, doc)
    assert tsv_cells(root) == {cell: WIKI[cls] for cell, cls in cells_now.items() if cls in WIKI}
    articles = [a for split in ("train", "dev", "test") for a in jsonl(root / "articles" / f"{split}.jsonl")]
    complete = any(a["complete"] for a in articles)
    assert complete == bool(doc is not None and doc.exhaustive)
    assert key in gold_reading.exhaustive_documents(project, policy) or not complete
    left = done.manifest["left_out"].get("every format (no value under the gold policy)", {})
    assert sum(left.values()) == len(doc.left_out if doc else {}) + sum(
        1 for g in values.values() if g.value == UNDECIDED and not doc.exhaustive)

    # the preview's count for the policy is what the export wrote
    preview = export.preview(project, export.ExportOptions.parse({"derived": False, "drop_identical": False,
                                                       "label_policy": policy}))
    assert preview["policies"][policy]["pairs"] == len(written) == done.pair_count

    # everything else reads majority-or-single
    default = gold_reading.read(project).get(key)
    classes = value_classes(project.label_scheme)
    decided = {pid: g.value for pid, g in (default.pairs.items() if default else ())}
    pairs = CandidatePair.objects.filter(article__project=project)
    assert {pid: g.value for pid, g in pair_gold(project, pairs, ties=True).items()} == decided  # calibration, QC
    items = adjudication.queue_items(project, list(decided))
    assert {i["pair"]: i["decided"]["value"] for i in items} == decided  # the adjudication page's "exported as"
    shown = {cell: g["value"] for cell, g in curation.gold_links(c, s, classes).items()}  # the curation page
    assert shown == {(key_indices(default.keys[pid][0])[0], key_indices(default.keys[pid][1])[0]): v
                     for pid, v in decided.items()}  # ties shown as undecided

    exhaustive = dataset.exhaustive_pairs(project)
    links = {cell: ("aligned" if cls == UNKNOWN_KIND else cls)
             for cell, cls in expected_cells(project, default).items() if cls in ("aligned", "partial", UNKNOWN_KIND)}
    if exhaustive:
        assert default is not None and default.exhaustive
        assert dataset.exhaustive_links(project, exhaustive)[key] == links  # training and model metrics
        run_ = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
        [gold] = run_scores.gold_pairs(run_, exhaustive)  # the run scores' gold
        assert dict(zip(gold.gold, gold.gold_labels)) == links
        undecided = any(cls == UNDECIDED for cls in expected_cells(project, default).values())
        trained = dataset.training_set(project).exhaustive
        assert sum(len(v) for v in trained.values()) == (0 if undecided or not _split(article) else 1)
    else:
        assert default is None or not default.exhaustive


def _split(article) -> bool:
    return dataset.article_splits(article.project).get(article.pk) in ("train", "dev", "test")
