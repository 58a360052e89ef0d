"""``project.gold()`` reads the gold without side effects (issue 37): no export, no split assigned or locked,
unless ``lock=True``; one table per split either way."""
from __future__ import annotations

import pytest
from alignapp_client import Client

from annotation.models import Adjudication, CandidatePair, Export, Job, Split, indices_key
from annotation.services.projects.accounts import issue_token
from tests import factories


@pytest.fixture
def gold_project(transactional_db):
    rita = factories.make_user("rita", researcher=True)
    project = factories.make_project("Gold", rita="researcher")
    for a in range(6):
        article = factories.make_article(project, f"a{a}", {"0": [["Complex one here.", "Complex two here."]],
                                                            "1": [["Simple one.", "Simple two."]]})
        docs = {d.level: d for d in article.documents.all()}
        for i, value in ((0, "aligned"), (1, "not-aligned")):
            pair = CandidatePair.objects.create(article=article, complex_document=docs["0"], simple_document=docs["1"],
                                                complex_key=indices_key([i]), simple_key=indices_key([i]))
            Adjudication.objects.create(pair=pair, value=value, provenance="adjudicated")
    return project, issue_token(rita).key


def test_gold_reads_every_split_and_leaves_the_project_as_it_was(live_server, gold_project):
    project, token = gold_project
    Split.objects.create(article=project.articles.get(title="a0"), name="test", origin=Split.MANUAL)
    before = list(Split.objects.values_list("article_id", "name", "locked"))
    tables = Client(live_server.url, token).project(project.pk).gold()
    assert sorted(tables) == ["dev", "test", "train"]
    assert sum(len(tables[name]) for name in tables) == 12
    assert tables["train"].features["label"].names[:3] == ["aligned", "partial", "not-aligned"]
    assert not Export.objects.exists() and not Job.objects.exists()
    assert list(Split.objects.values_list("article_id", "name", "locked")) == before


def test_gold_with_lock_locks_the_read_splits_and_still_makes_no_export(live_server, gold_project):
    project, token = gold_project
    records = Client(live_server.url, token).gold_records(project.pk, "test", lock=True)
    assert records and {r["split"] for r in records} == {"test"}
    assert Split.objects.count() == 6 and not Export.objects.exists()
    assert set(Split.objects.filter(locked=True).values_list("name", flat=True)) == {"test"}
