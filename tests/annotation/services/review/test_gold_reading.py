"""Issue 34: one gold, read one way — the five cases where the consumers disagreed, as regression tests.

Each builds the smallest project that shows the case through the real paths (links saved and articles
completed in the whole-article view, imported gold with its meaning, the export written to files)."""
from __future__ import annotations

import csv
import json

import pytest

from annotation.models import Adjudication, AlignmentRun, CandidatePair, Label, Membership, Status, indices_key
from annotation.services.alignment.run_saving import link_sentences
from annotation.services.editing import article_alignment as aa
from annotation.services.editing import completion as ac
from annotation.services.review import adjudication, gold_reading, qc
from annotation.services.training import dataset
from annotation.services.training.run_scores import run_scores
from tests import factories, labels
from tests.annotation.services.export.conftest import crowd, newsela  # noqa: F401 - fixtures
from tests.annotation.services.export.helpers import all_pairs, jsonl, run
from tests.annotation.services.review.test_queue import build_queue, set_qc

pytestmark = pytest.mark.django_db


def imported(bees, ci: int, si: int, value: str = "aligned-or-partial") -> CandidatePair:
    pair = factories.make_pair(article=bees["article"], complex_document=bees["c"], simple_document=bees["s"],
                               complex_key=indices_key([ci]), simple_key=indices_key([si]), origin="imported")
    link_sentences([pair])
    Adjudication.objects.create(pair=pair, value=value, provenance=Adjudication.IMPORTED)
    return pair


def complete(bees, user, links: list[tuple[int, int, str]]) -> None:
    """``user`` saves ``links`` (complex, simple, aligned|partial) in the whole-article view and marks it complete."""
    article, c, s = bees["article"], bees["c"], bees["s"]
    aa.save_links(user, article, c, s, None, [{"complex": [ci], "simple": [si], "label": label} for ci, si, label in links])
    ac.mark_complete(user, article, c, s, allow_empty=True)


def tsv_rows(root) -> dict[tuple[int, int], str]:
    """``{(complex sentence, simple sentence): label}`` of the wiki-manual TSV (ids end in -<index>)."""
    out = {}
    for path in (root / "wiki-manual").glob("*.tsv"):
        for label, s_id, c_id, *_ in csv.reader(path.open(), delimiter="\t"):
            out[(int(c_id.rsplit("-", 1)[-1]), int(s_id.rsplit("-", 1)[-1]))] = label
    return out


def jsonl_values(root) -> dict[tuple[int, int], tuple[str, str]]:
    return {(r["complex_ids"][0], r["simple_ids"][0]): (r["label"], r["provenance"]) for r in all_pairs(root)}


def scoring_run(bees, links: list[tuple[int, int]]) -> AlignmentRun:
    """A succeeded run that predicts exactly ``links`` (aligned) in Bees."""
    run_ = AlignmentRun.objects.create(project=bees["project"], method="jaccard", status=Status.SUCCEEDED)
    for ci, si in links:
        factories.make_pair(run_, article=bees["article"], complex_document=bees["c"], simple_document=bees["s"],
                            complex_key=indices_key([ci]), simple_key=indices_key([si]), score=0.9,
                            predicted_label="aligned")
    return run_


# --- case 1: a single completer's links are never written as notAligned --------------------------

def test_one_completers_links_are_left_out_under_majority_and_counted_never_written_not_aligned(bees, settings,
                                                                                                 tmp_path):
    complete(bees, bees["anna"], [(0, 0, "aligned"), (1, 1, "partial")])
    done, root = run(bees["project"], settings, tmp_path / "majority", label_policy="majority", derived=False,
                     formats=["tsv", "jsonl", "articles"])
    assert tsv_rows(root) == {}  # old code: (0,0) and (1,1) were notAligned rows of a "complete" document pair
    assert done.manifest["left_out"]["every format (no value under the gold policy)"] == {"one vote": 2}
    articles = [a for split in ("train", "dev", "test") for a in jsonl(root / "articles" / f"{split}.jsonl")]
    assert not any(a["complete"] for a in articles)  # old code: a line marking it complete, with no links
    assert "every format (no value under the gold policy): one vote 2" in (root / "README.txt").read_text()
    # under majority-or-single her completion is exhaustive: her links, and every other cell not aligned
    _, root = run(bees["project"], settings, tmp_path / "mos", label_policy="majority-or-single", derived=False,
                  formats=["tsv"])
    rows = tsv_rows(root)
    assert len(rows) == 9 and rows[(0, 0)] == "aligned" and rows[(1, 1)] == "partialAligned"
    assert sum(label == "notAligned" for label in rows.values()) == 7
    assert gold_reading.exhaustive_documents(bees["project"], "majority") == set()
    assert gold_reading.exhaustive_documents(bees["project"], "majority-or-single") == {(bees["c"].pk, bees["s"].pk)}


# --- case 2: run scores and training read the export's gold ---------------------------------------

def test_an_imported_link_the_completer_left_unlinked_is_not_aligned_in_scores_training_and_export(bees, settings,
                                                                                                  tmp_path):
    for ci in range(3):
        imported(bees, ci, ci)
    complete(bees, bees["anna"], [(0, 0, "aligned"), (1, 1, "aligned"), (2, 1, "partial")])  # (2,2) left unlinked
    key = (bees["c"].pk, bees["s"].pk)
    [exhaustive] = dataset.exhaustive_pairs(bees["project"])
    assert dataset.exhaustive_links(bees["project"], [exhaustive])[key] == {
        (0, 0): "aligned", (1, 1): "aligned", (2, 1): "partial"}  # old code: (2,2) aligned too
    scores = run_scores(scoring_run(bees, [(0, 0), (1, 1), (2, 1)]))
    assert scores["task1"]["n_gold"] == 3 and scores["task1"]["precision"] == 1.0
    assert scores["task2"]["n_gold"] == 2  # old code: 3 (the unlinked imported link as aligned)
    _, root = run(bees["project"], settings, tmp_path, derived=False, formats=["jsonl"])
    assert jsonl_values(root)[(2, 2)] == ("not-aligned", "single")  # old code: aligned-or-partial, imported


def test_an_empty_completion_makes_the_imported_links_not_aligned_for_the_scores_too(bees):
    for ci in range(2):
        imported(bees, ci, ci)
    complete(bees, bees["anna"], [])
    [exhaustive] = dataset.exhaustive_pairs(bees["project"])
    assert dataset.exhaustive_links(bees["project"], [exhaustive])[(bees["c"].pk, bees["s"].pk)] == {}
    scores = run_scores(scoring_run(bees, [(0, 0), (1, 1)]))
    assert scores["task1"]["n_gold"] == 0 and scores["task1"]["n_pred"] == 2  # old code: 2 gold, 2 Task-2 aligned


# --- case 3: a disagreement on an imported link enters adjudication -------------------------------

def test_a_disagreement_on_an_imported_link_is_undecided_and_waits_in_adjudication(bees, settings, tmp_path):
    pair = imported(bees, 0, 0)
    complete(bees, bees["anna"], [(0, 0, "aligned")])
    complete(bees, bees["bob"], [(0, 0, "partial")])
    assert pair.pk in adjudication.queue_pair_ids(bees["project"])  # old code: never (imported gold "agreed")
    _, root = run(bees["project"], settings, tmp_path, derived=False, formats=["jsonl", "tsv"])
    assert jsonl_values(root)[(0, 0)] == ("undecided", "tie")
    assert (0, 0) not in tsv_rows(root)  # neither aligned nor notAligned
    [exhaustive] = dataset.exhaustive_pairs(bees["project"])
    assert (0, 0) not in dataset.exhaustive_links(bees["project"], [exhaustive])[(bees["c"].pk, bees["s"].pk)]


# --- case 4: the empty-completion question says what will be stored --------------------------------

def test_the_empty_completion_question_names_the_imported_links_it_overrules(bees):
    imported(bees, 0, 0), imported(bees, 1, 1, "aligned")
    with pytest.raises(ac.EmptyCompletion) as asked:
        ac.mark_complete(bees["anna"], bees["article"], bees["c"], bees["s"])
    assert "all 9 of its sentence pairs" in str(asked.value) and "the 2 imported links" in str(asked.value)
    assert asked.value.payload()["imported_links"] == 2


# --- case 5: wording and counts that contradicted the rule ------------------------------------------

def test_the_preview_has_a_tie_column_and_the_agreement_counts_implied_not_aligned(bees, settings, tmp_path):
    from annotation.services import export

    imported(bees, 2, 2, "aligned")
    complete(bees, bees["anna"], [(0, 0, "aligned"), (1, 1, "aligned")])
    complete(bees, bees["bob"], [(0, 0, "partial"), (1, 1, "aligned"), (1, 2, "aligned")])
    preview = export.preview(bees["project"], export.ExportOptions.parse({"derived": False, "drop_identical": False}))
    row = preview["policies"]["majority-or-single"]
    # ties: (0,0) aligned vs partial, (1,2) bob's link vs anna's implied not
    assert row["from"]["tie"] == 2 and row["pairs"] == sum(row["from"].values())
    done, root = run(bees["project"], settings, tmp_path, derived=False, formats=["jsonl"])
    binary = done.manifest["agreement"]["binary"]
    # two completions of one article differ on (1,2) and (2,2) (bob links (1,2); anna and bob leave the imported
    # (2,2) unlinked, so they agree on it): binary κ is defined, observed < 1 (old code: κ null, observed 1.0)
    assert binary["items_multi"] == 9 and binary["counts"]["not"] > 0
    assert binary["cohen_mean"] is not None
    [per_pair] = done.manifest["agreement"]["document_pairs"]  # per document pair: (1,2) is their one difference
    assert (per_pair["cells"], per_pair["annotators"], per_pair["observed"]) == (9, 2, 8 / 9)
    assert per_pair["kappa"] is not None and per_pair["kappa"] < 1
    assert "completion" in (root / "README.txt").read_text()
    assert json.loads((root / "manifest.json").read_text())["label_policy"] == "majority-or-single"


# --- Which labels count as votes (counted_labels) ---------------------------------------------------

def test_excluded_annotators_labels_stop_counting(project, users):
    set_qc(project, overlap=2)
    work, _ = build_queue(project, 2)
    bob = users["rita"]  # a researcher may label too
    for user in (users["anna"], bob):
        for _ in work:
            labels.submit(user, project, labels.next_item(user, project).pk, value="aligned")
    assert gold_reading.counted_labels(project).count() == 4
    qc.exclude(users["anna"], project, "low accuracy")
    assert set(gold_reading.counted_labels(project).values_list("annotator__username", flat=True)) == {"rita"}


def test_test_answers_are_not_counted_as_votes(project, users):
    set_qc(project, test_every=1)
    build_queue(project, 2, gold=2)
    anna = users["anna"]
    while (pair := labels.next_item(anna, project)) is not None:
        labels.submit(anna, project, pair.pk, value="aligned")
    assert Label.objects.filter(is_test_question=True).exists()
    assert not gold_reading.counted_labels(project).filter(is_test_question=True).exists()


def test_the_excluded_members_are_a_subquery_of_user_ids(project, users):
    assert list(Membership.objects.excluded(project)) == []
    qc.exclude(users["anna"], project, "low accuracy")
    excluded = Membership.objects.excluded(project)
    assert [row["user_id"] for row in excluded] == [users["anna"].pk]
    assert list(Membership.objects.filter(user_id__in=excluded).values_list("user__username", flat=True)) == ["anna"]


# --- issue 37: every policy read from one gathering of the evidence ---------------------------------------

def test_reading_several_policies_at_once_gives_what_each_reading_gives(bees):
    from annotation.services.review import gold_reading

    imported(bees, 0, 0)
    imported(bees, 2, 2, "aligned")
    complete(bees, bees["anna"], [(0, 0, "aligned"), (1, 1, "partial")])
    complete(bees, bees["bob"], [(0, 0, "partial"), (1, 1, "partial")])
    project = bees["project"]
    policies = ("majority-or-single", "majority", "stored")
    together = gold_reading.read_policies(project, policies)
    assert together == {p: gold_reading.read(project, p) for p in policies}
    assert together["majority"] and together["majority"] != together["stored"]
    assert gold_reading.read_policies(project, policies, articles=[bees["article"].pk]) == together


def test_a_chunks_labels_are_read_within_its_pairs_id_range_and_give_the_same_gold(request, monkeypatch):
    """Issue 37: the chunk's counted votes are read with ``pair_id`` bounds (an index range; without them
    PostgreSQL scanned every label of the table per chunk at a million pairs); the gold is the unbounded reading's
    — articles read one at a time, whose pairs' ids lie among other articles', and all at once."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    project = request.getfixturevalue("newsela")["project"]  # the export tests' corpus: votes, gold, three articles
    articles = sorted(project.articles.values_list("pk", flat=True))
    assert len(articles) >= 2 and Label.objects.filter(pair__article__project=project).exists()

    def reading(chunks):
        return [(k, d.pairs, d.left_out, d.rest) for ids in chunks for k, d in sorted(gold_reading.read(
            project, "majority-or-single", articles=ids).items())]

    with CaptureQueriesContext(connection) as queries:
        bounded = [reading([[a] for a in articles]), reading([articles])]
    label_reads = [q["sql"] for q in queries.captured_queries if 'FROM "annotation_label"' in q["sql"]]
    assert label_reads and all('"annotation_label"."pair_id" >=' in sql for sql in label_reads)
    monkeypatch.setattr(gold_reading, "pair_bounds", lambda pairs: {})
    assert bounded == [reading([[a] for a in articles]), reading([articles])] and bounded[0]

    empty = factories.make_article(project, "Empty", {"adv": [["One."]], "int": [["Two."]]})
    assert gold_reading.read(project, articles=[empty.pk]) == {}
