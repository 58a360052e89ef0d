"""The retraining loop end to end on a real worker: import article pairs with gold, label pairs
through the API, train (a tiny model built here, one epoch), a ModelVersion with held-out metrics,
re-align with it, and the what-changed queue serves exactly the pairs whose prediction differs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from annotation.models import AlignmentRun, Article, CandidatePair, Job, ModelVersion, Prediction, Split, Status
from annotation.services.alignment import run_comparison
from annotation.services.corpus.importing import import_files
from tests import factories
from tests.engine.cases import structured_cases
from tests.engine.conftest import minilm_path  # noqa: F401 - fixtures of the tiny-BERT builder
from tests.engine.test_training import record, tiny_base  # noqa: F401
from tests.worker_process import wait_for

pytestmark = [pytest.mark.services, pytest.mark.slow]
FAST = {"epochs": 1, "crf_epochs": 5, "base_similarity": "charngram"}


def _links(run) -> dict[int, str]:
    return dict(Prediction.objects.filter(run=run, predicted_label__in=("aligned", "partial"))
                .values_list("pair_id", "predicted_label"))


def _wait_run(run_id: int, log) -> AlignmentRun:
    wait_for(lambda: AlignmentRun.objects.get(pk=run_id).is_finished, 300, log, f"run #{run_id}")
    run = AlignmentRun.objects.get(pk=run_id)
    assert run.status == Status.SUCCEEDED, run.error
    return run


@pytest.fixture
def tiny_base_root(tiny_base, monkeypatch, settings):  # noqa: F811
    """The tiny encoder's folder as an allowed model root, here and in the worker started after it."""
    root = str(Path(tiny_base).parent)
    monkeypatch.setenv("MODEL_ROOTS", root)
    settings.MODEL_ROOTS = [root]


def test_label_train_realign_and_review_what_changed(api, users, tiny_base_root, embedded_worker, tiny_base):  # noqa: F811
    project = factories.make_project("Retrain", rita="researcher", anna="annotator")
    project.config = {"encoder": tiny_base, "qc": {"min_seconds": 0, "test_every": 0, "overlap": 3}}
    project.save()
    cases = structured_cases()
    # one train article without gold (its labelled pairs train the pair model only), then exhaustive ones
    unlabelled = {k: v for k, v in record(cases[0]).items() if k not in ("gold", "gold_labels")}
    jsonl = "".join(json.dumps(r) + "\n" for r in [{**unlabelled, "id": "no-gold"}]
                    + [{**record(p), "id": f"case-{p.id}"} for p in cases]).encode()
    import_files(project, [("cases.jsonl", jsonl)], "jsonl", gold_meaning="exhaustive")  # complete article pairs
    articles = list(Article.objects.filter(project=project).order_by("id"))
    assert len(articles) >= 5
    for i, article in enumerate(articles):
        Split.objects.create(article=article, name="dev" if i == 1 else "test" if i == 2 else "train")
    rita, anna = api(users["rita"]), api(users["anna"])

    # a lexical run proposes pairs; anna labels a portion of the train articles' pairs through the API
    first = _wait_run(rita.post("/api/runs/", {"project": project.pk, "method": "jaccard"}, format="json").json()["id"],
                      embedded_worker)
    state = anna.get(f"/api/projects/{project.pk}/queue/next/").json()
    for _ in range(6):
        if state["item"] is None:
            break
        state = anna.post(f"/api/projects/{project.pk}/queue/submit/",
                          {"pair": state["item"]["pair"], "value": "aligned", "seconds": 1}, format="json").json()

    response = rita.post(f"/api/projects/{project.pk}/train/", {"config": FAST, "seed": 1}, format="json")
    assert response.status_code == 202, response.content
    job_id = response.json()["id"]
    wait_for(lambda: Job.objects.get(pk=job_id).is_finished, 600, embedded_worker, "the training job")
    job = Job.objects.get(pk=job_id)
    assert job.status == Status.SUCCEEDED, job.error
    version = ModelVersion.objects.get(job=job)
    assert version.kind == "crf" and version.metrics["dev"]["trained"]  # held-out (dev) metrics
    assert version.training_snapshot["exhaustive_pairs"]["train"] and version.training_snapshot["pair_examples"] >= 1
    listed = rita.get(f"/api/projects/{project.pk}/model-versions/").json()
    assert [v["id"] for v in listed] == [version.pk]
    learnt = listed[0]["decisions"]  # what training chose on its held-out articles, shown under the version
    assert learnt["label_rule"] in learnt["label_rule_heldout_task2"] and 0 <= learnt["pair_model_weight"] <= learnt["weight_cap"]
    assert learnt["domain_statistics"] == ["complex_coherence", "simple_coherence", "simple_per_complex"]

    realigned = rita.post(f"/api/model-versions/{version.pk}/realign/", {"scope": "all"}, format="json")
    assert realigned.status_code == 201, realigned.content
    second = _wait_run(realigned.json()["id"], embedded_worker)
    assert second.model_version_id == version.pk
    assert 0 <= second.result["outside_model_domain"] <= second.result["document_pairs"]

    # what changed, computed here from the two runs' predictions, against the review queue
    before, after = _links(first), _links(second)
    differing = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    assert {c.pair_id for c in run_comparison.changes(first, second)} == differing
    assert rita.post(f"/api/projects/{project.pk}/review-changes/", {"old": first.pk, "new": second.pk},
                     format="json").status_code == 200
    reviewer = get_user_model().objects.create_user("rev")
    project.memberships.create(user=reviewer, role="annotator")
    client = api(reviewer)
    served, state = [], client.get(f"/api/projects/{project.pk}/queue/next/").json()
    while state["item"] is not None:
        served.append(state["item"]["pair"])
        state = client.post(f"/api/projects/{project.pk}/queue/submit/",
                            {"pair": served[-1], "value": "aligned", "seconds": 1}, format="json").json()
    queueable = set(CandidatePair.objects.filter(pk__in=differing, gold__isnull=True, identical=False)
                    .values_list("pk", flat=True))
    assert queueable and sorted(served) == sorted(queueable)
