"""The data migration to project-level sentence pairs (0004 → 0006) on a database holding the same
sentence pair several times (one copy per run, plus a manual copy), with labels on the copies."""
from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("annotation", "0004_sentence_pairs_and_history")]
AFTER = [("annotation", "0006_pair_identity")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _old_world(apps) -> dict:
    User = apps.get_model("auth", "User")
    LabelScheme = apps.get_model("annotation", "LabelScheme")
    Project = apps.get_model("annotation", "Project")
    Article, Document = apps.get_model("annotation", "Article"), apps.get_model("annotation", "Document")
    Paragraph, Sentence = apps.get_model("annotation", "Paragraph"), apps.get_model("annotation", "Sentence")
    Run, Pair = apps.get_model("annotation", "AlignmentRun"), apps.get_model("annotation", "CandidatePair")
    PairSentence = apps.get_model("annotation", "PairSentence")
    Label, Assignment = apps.get_model("annotation", "Label"), apps.get_model("annotation", "Assignment")
    Adjudication = apps.get_model("annotation", "Adjudication")

    scheme, _ = LabelScheme.objects.get_or_create(slug="aligned-partial-not", defaults={
        "name": "Aligned / partial / not", "kind": "categorical", "values": [{"value": "aligned"}]})
    project = Project.objects.create(name="Migrated", label_scheme=scheme)
    anna, bob = User.objects.create(username="anna"), User.objects.create(username="bob")
    article = Article.objects.create(project=project, title="Bees")
    docs = []
    for rank, texts in enumerate((["Bees are dying.", "Pesticides are blamed."], ["Bees die.", "Pesticides are blamed!"])):
        doc = Document.objects.create(article=article, level=f"l{rank}", rank=rank)
        paragraph = Paragraph.objects.create(document=doc, index=0)
        for i, text in enumerate(texts):
            Sentence.objects.create(document=doc, paragraph=paragraph, index=i, text=text)
        docs.append(doc)
    runs = [Run.objects.create(project=project, method=m, status="succeeded") for m in ("crf", "sbert", "crf")]

    def pair(run, c, s, score, label, origin="model"):
        p = Pair.objects.create(run=run, article=article, complex_document=docs[0], simple_document=docs[1],
                                complex_key=str(c), simple_key=str(s), score=score, predicted_label=label,
                                origin=origin, features={f"f{run.pk if run else 0}": 1.0})
        for doc, i, side in ((docs[0], c, "complex"), (docs[1], s, "simple")):
            PairSentence.objects.create(pair=p, sentence=Sentence.objects.get(document=doc, index=i), side=side)
        return p

    copies = [pair(runs[0], 0, 0, 0.9, "aligned"), pair(runs[1], 0, 0, 0.7, "partial"),
              pair(runs[2], 0, 0, 0.8, "aligned"), pair(None, 0, 0, None, "", origin="manual")]
    other = pair(runs[0], 1, 1, 0.95, "aligned")
    t0 = timezone.now() - datetime.timedelta(hours=2)
    labels = [
        Label.objects.create(pair=copies[0], annotator=anna, value="aligned", seconds=11, created_at=t0),
        Label.objects.create(pair=copies[1], annotator=anna, value="partial", seconds=12,
                             created_at=t0 + datetime.timedelta(hours=1)),
        Label.objects.create(pair=copies[2], annotator=bob, value="not-aligned", seconds=13, created_at=t0),
        Label.objects.create(pair=other, annotator=bob, value="aligned", seconds=14, created_at=t0),
    ]
    # the later label stands: make its updated_at later too (auto_now set both to "now")
    Label.objects.filter(pk=labels[0].pk).update(updated_at=t0)
    Label.objects.filter(pk=labels[1].pk).update(updated_at=t0 + datetime.timedelta(hours=1))
    Assignment.objects.create(pair=copies[0], annotator=anna, status="done")
    Assignment.objects.create(pair=copies[1], annotator=anna, status="open")
    Assignment.objects.create(pair=copies[2], annotator=bob, status="done")
    Adjudication.objects.create(pair=copies[1], value="partial", provenance="majority")
    Adjudication.objects.create(pair=copies[3], value="aligned", provenance="adjudicated")
    return {"runs": [r.pk for r in runs], "copies": [p.pk for p in copies], "other": other.pk,
            "anna": anna.pk, "bob": bob.pk}


@pytest.mark.django_db(transaction=True)
def test_duplicates_merge_into_one_pair_and_every_label_survives():
    old = _old_world(_migrate(BEFORE))
    apps = _migrate(AFTER)
    try:
        Pair = apps.get_model("annotation", "CandidatePair")
        Prediction, Label = apps.get_model("annotation", "Prediction"), apps.get_model("annotation", "Label")
        LabelChange, Assignment = apps.get_model("annotation", "LabelChange"), apps.get_model("annotation", "Assignment")
        Adjudication = apps.get_model("annotation", "Adjudication")
        AdjudicationChange = apps.get_model("annotation", "AdjudicationChange")

        assert Pair.objects.count() == 2  # (0,0) once, (1,1)
        merged = Pair.objects.get(complex_key="0", simple_key="0")
        assert merged.pk == old["copies"][0]  # the oldest copy stays
        assert merged.origin == "model"
        assert sorted(Prediction.objects.filter(pair=merged).values_list("run_id", "score")) == [
            (old["runs"][0], 0.9), (old["runs"][1], 0.7), (old["runs"][2], 0.8)]
        assert (merged.score, merged.predicted_label) == (0.8, "aligned")  # the newest run's prediction
        assert merged.features == {f"f{r}": 1.0 for r in old["runs"]} | {"f0": 1.0}
        assert Prediction.objects.filter(pair_id=old["other"], run_id=old["runs"][0]).exists()

        # every label survives: the later of anna's two stands, the earlier is in its history
        stands = {(lab.annotator_id, lab.value) for lab in Label.objects.filter(pair=merged)}
        assert stands == {(old["anna"], "partial"), (old["bob"], "not-aligned")}
        [change] = LabelChange.objects.all()
        assert (change.pair_id, change.annotator_id, change.old_value, change.new_value, change.source) == (
            merged.pk, old["anna"], "aligned", "partial", "merge")
        assert Label.objects.count() + LabelChange.objects.count() == 4

        # one assignment per annotator (done wins over open); adjudicated gold wins over majority
        assert sorted(Assignment.objects.values_list("pair_id", "annotator_id", "status")) == sorted([
            (merged.pk, old["anna"], "done"), (merged.pk, old["bob"], "done")])
        gold = Adjudication.objects.get()
        assert (gold.pair_id, gold.value, gold.provenance) == (merged.pk, "aligned", "adjudicated")
        [folded] = AdjudicationChange.objects.all()
        assert (folded.old_value, folded.old_provenance, folded.new_value, folded.action) == (
            "partial", "majority", "aligned", "merge")

        # "Pesticides are blamed." / "Pesticides are blamed!" are the same text after normalisation
        assert Pair.objects.get(pk=old["other"]).identical and not merged.identical
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
