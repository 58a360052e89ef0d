from __future__ import annotations

import hashlib
import json

import pytest

from annotation.models import Export

from .helpers import run

pytestmark = pytest.mark.django_db


def test_the_manifest_records_how_the_export_was_made(newsela, settings, tmp_path):
    done, root = run(newsela["project"], settings, tmp_path, label_policy="majority", bleu_band=[0.0, 1.0],
                     thresholds=[{"key": "score", "op": "gte", "value": 0}])
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["project"]["name"] == "Newsela sample"
    assert manifest["split_policy"] == {"mode": "counts", "train": 1, "dev": 0, "test": 1, "seed": 0, "stratify": None,
                                        "overflow": "train"}
    assert manifest["label_policy"] == "majority"
    assert manifest["filters"]["bleu_band"] == [0.0, 1.0] and manifest["filters"]["thresholds"][0]["key"] == "score"
    assert manifest["counts"]["pairs"] == done.pair_count == sum(s["pairs"] for s in manifest["counts"]["splits"].values())
    assert manifest["application"]["alignapp"] and manifest["application"]["Django"]
    assert manifest["agreement"]["classes"]["annotators"] >= 3
    assert manifest["model"] is None
    for name, meta in manifest["files"].items():
        assert hashlib.sha256((root / name).read_bytes()).hexdigest() == meta["sha256"]
    assert Export.objects.get().manifest["counts"] == manifest["counts"]


def test_an_auto_manifest_names_the_model_version_and_its_runs(auto_run, settings, tmp_path):
    done, _ = run(auto_run["project"], settings, tmp_path, kind="auto", model_version=auto_run["model_version"].pk)
    model = done.manifest["model"]
    assert model["model_version"]["name"] == "crf-v1" and [r["id"] for r in model["runs"]] == [auto_run["run"].pk]
    assert done.manifest["label_policy"] is None


def test_counts_per_split_label_and_provenance(newsela, settings, tmp_path):
    done, _ = run(newsela["project"], settings, tmp_path, label_policy="majority")
    splits = done.manifest["counts"]["splits"]
    bees = next(s for s in splits.values() if s["articles"] and "0-2" in s["level_pairs"])
    assert bees["provenance"]["derived"] == bees["derived"] == 3
    assert bees["labels"]["not-aligned"] == 1


def test_the_manifest_lists_the_language_tools_and_the_features_the_exported_runs_left_out(auto_run, settings, tmp_path):
    from annotation.models import AlignmentRun

    AlignmentRun.objects.filter(pk=auto_run["run"].pk).update(result={
        "missing_features": {"access_dep_depth_ratio": "no dependency parser (spaCy pipeline 'en_core_web_sm' is not installed)"}})
    done, _ = run(auto_run["project"], settings, tmp_path, kind="auto", model_version=auto_run["model_version"].pk)
    tools = done.manifest["language_tools"]
    assert tools["language"] == auto_run["project"].language and tools["encoder"]
    [missing] = tools["missing_features"]
    assert missing["feature"] == "access_dep_depth_ratio" and missing["id"] == auto_run["run"].pk
    assert "is not installed" in missing["why"]


def test_the_manifests_agreement_says_its_time_and_whether_it_is_of_the_data_exported(newsela, monkeypatch):
    """A big project's agreement is the dashboard's kept one: the manifest says when it was computed and, when the
    labels changed since, that it is not current (the dashboard's job computes anew); none kept yet: computing."""
    from django.core.cache import cache
    from django.utils import timezone

    from annotation.models import Job, KeptAggregate, Label
    from annotation.services.export.manifest import agreement_summary
    from annotation.services.review import dashboard, review_state

    project = newsela["project"]
    now = agreement_summary(project)  # a small project: computed now
    assert now["current"] is True and now["as_of"] and now["classes"]["annotators"] >= 3
    monkeypatch.setattr(review_state, "LAZY_ARTICLES", 1)
    assert agreement_summary(project) == now  # big, nothing changed: the kept one, current
    Label.objects.filter(pair__article__project=project).update(updated_at=timezone.now())  # the labels move on
    stale = agreement_summary(project)
    assert stale["current"] is False and stale["as_of"] == now["as_of"] and stale["classes"] == now["classes"]
    assert Job.objects.filter(project=project, kind=dashboard.FIGURES_JOB).count() == 1
    KeptAggregate.objects.filter(project=project).delete()
    cache.clear()
    computing = agreement_summary(project)
    assert computing["computing"] is True and "classes" not in computing
