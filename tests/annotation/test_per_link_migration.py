"""The data migration to per-link labels (0008 → 0009) on a database holding whole-article group
labels: an n:m group labelled aligned by one annotator and partial by another (mixed groups), a
link of a group the annotator also labelled on its own 1:1 pair, and a queue label on an n:m pair."""
from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotation", "0008_liveness_and_audit")]
AFTER = [("annotation", "0009_per_link_labels")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _old_world(apps) -> dict:
    User = apps.get_model("auth", "User")
    LabelScheme, Project = apps.get_model("annotation", "LabelScheme"), apps.get_model("annotation", "Project")
    Article, Document = apps.get_model("annotation", "Article"), apps.get_model("annotation", "Document")
    Paragraph, Sentence = apps.get_model("annotation", "Paragraph"), apps.get_model("annotation", "Sentence")
    Pair, Label = apps.get_model("annotation", "CandidatePair"), apps.get_model("annotation", "Label")
    Adjudication = apps.get_model("annotation", "Adjudication")
    scheme, _ = LabelScheme.objects.get_or_create(slug="aligned-partial-not", defaults={
        "name": "Aligned / partial / not", "kind": "categorical", "values": [{"value": "aligned"}]})
    project = Project.objects.create(name="Per link", label_scheme=scheme)
    anna, bob = User.objects.create(username="anna"), User.objects.create(username="bob")
    article = Article.objects.create(project=project, title="Flood")
    docs = []
    for rank, n in enumerate((3, 3)):
        doc = Document.objects.create(article=article, level=f"l{rank}", rank=rank)
        paragraph = Paragraph.objects.create(document=doc, index=0)
        for i in range(n):
            Sentence.objects.create(document=doc, paragraph=paragraph, index=i, text=f"s{rank}-{i}")
        docs.append(doc)

    def pair(c, s, origin="manual"):
        return Pair.objects.create(article=article, complex_document=docs[0], simple_document=docs[1],
                                   complex_key=c, simple_key=s, origin=origin)

    split, fusion, queued, one = pair("0", "0,1"), pair("1,2", "2"), pair("0,1", "2", "model"), pair("0", "1", "model")
    labels = {
        "anna_split": Label.objects.create(pair=split, annotator=anna, value="aligned", seconds=10, source="article"),
        "bob_split": Label.objects.create(pair=split, annotator=bob, value="partial", seconds=4, source="article"),
        "anna_one": Label.objects.create(pair=one, annotator=anna, value="partial", seconds=3, source="article"),
        "bob_fusion": Label.objects.create(pair=fusion, annotator=bob, value="not-aligned", source="article"),
        "anna_queue": Label.objects.create(pair=queued, annotator=anna, value="aligned", source="queue"),
    }
    Adjudication.objects.create(pair=fusion, value="not-aligned", provenance="single")
    Adjudication.objects.create(pair=split, value="partial", provenance="adjudicated")
    return {"anna": anna.pk, "bob": bob.pk, "split": split.pk, "fusion": fusion.pk, "queued": queued.pk,
            **{k: v.pk for k, v in labels.items()}}


@pytest.mark.django_db(transaction=True)
def test_group_labels_become_per_link_labels_with_history_and_nothing_counts_twice():
    old = _old_world(_migrate(BEFORE))
    try:
        apps = _migrate(AFTER)
        Label, LabelChange = apps.get_model("annotation", "Label"), apps.get_model("annotation", "LabelChange")
        Pair, Adjudication = apps.get_model("annotation", "CandidatePair"), apps.get_model("annotation", "Adjudication")
        PairSentence = apps.get_model("annotation", "PairSentence")

        def labels(user):
            return {(lab.pair.complex_key, lab.pair.simple_key): lab.value
                    for lab in Label.objects.filter(annotator_id=old[user]).select_related("pair")}

        # anna's aligned split: C0→S0 gets aligned; her own 1:1 partial on C0→S1 stands; her queue label stays
        assert labels("anna") == {("0", "0"): "aligned", ("0", "1"): "partial", ("0,1", "2"): "aligned"}
        # bob's partial split and not-aligned fusion, link by link (mixed groups: each annotator's own value)
        assert labels("bob") == {("0", "0"): "partial", ("0", "1"): "partial", ("1", "2"): "not-aligned",
                                 ("2", "2"): "not-aligned"}
        assert not Label.objects.filter(pk__in=[old["anna_split"], old["bob_split"], old["bob_fusion"]]).exists()
        assert Label.objects.get(annotator_id=old["bob"], pair__complex_key="0", pair__simple_key="0").seconds == 2.0
        # history: each group label's removal and each new link label, source "migration"
        changes = LabelChange.objects.filter(source="migration")
        removed = sorted((c.annotator_id, c.pair_id, c.old_value) for c in changes if c.new_value == "")
        assert removed == sorted([(old["anna"], old["split"], "aligned"), (old["bob"], old["split"], "partial"),
                                  (old["bob"], old["fusion"], "not-aligned")])
        assert sorted((c.annotator_id, c.new_value) for c in changes if c.new_value) == sorted(
            [(old["anna"], "aligned"), (old["bob"], "partial"), (old["bob"], "partial"), (old["bob"], "not-aligned"),
             (old["bob"], "not-aligned")])
        # new 1:1 pairs are manual with their sentences
        made = Pair.objects.get(complex_key="2", simple_key="2")
        assert made.origin == "manual" and PairSentence.objects.filter(pair=made).count() == 2
        # the fusion lost its only label: its automatic gold goes (recorded); adjudicated gold stays
        assert not Adjudication.objects.filter(pair_id=old["fusion"]).exists()
        assert apps.get_model("annotation", "AdjudicationChange").objects.get(pair_id=old["fusion"]).action == "migration"
        assert Adjudication.objects.get(pair_id=old["split"]).provenance == "adjudicated"
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
