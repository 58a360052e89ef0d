"""The job kinds (``annotation/job_kinds/``): one module per kind registers its background work; the Celery
router and the send path read the registry, so a kind registered later is routed to its own queue."""
from __future__ import annotations

import pkgutil

import pytest

import annotation.job_kinds
from alignapp.celery import app
from annotation.services.background import registry
from annotation.services.background.registry import Queue, Work, register_job, task_name, unregister_job


def test_every_module_registers_a_job_kind_whose_service_resolves():
    modules = {info.name for info in pkgutil.iter_modules(annotation.job_kinds.__path__)}
    assert {"train_aligner", "training_summary", "corpus_stats", "import_corpus", "export", "paragraph_alignment",
            "scoring", "dashboard_figures", "run_scores", "run_comparison", "export_preview",
            "score_distribution"} == modules
    kinds = dict(registry.jobs())
    assert {"train-aligner", "training-summary", "corpus-stats", "import", "export", "paragraph-alignment",
            "dashboard-figures", "run-scores", "run-comparison", "export-preview", "score-distribution",
            "regenerate-candidates", "access-attributes", "pivot-select"} <= set(kinds)
    assert all(callable(work.function()) for work in kinds.values())
    assert kinds["paragraph-alignment"] is kinds["regenerate-candidates"]  # one task, one service


@pytest.fixture
def extra_kind():
    work = register_job("tidy-up", Work(task_name("tidy_up"), "annotation.services.corpus.corpus_stats.run_stats_job",
                                        Queue.GPU, "A test's own job kind."))
    yield work
    unregister_job("tidy-up")


def test_a_job_kind_registered_later_is_known_and_routed_to_its_queue(extra_kind):
    assert registry.job("tidy-up") is extra_kind
    assert app.amqp.router.route({}, "workers.tasks.tidy_up")["queue"].name == "gpu"
    unregister_job("tidy-up")
    assert app.amqp.router.route({}, "workers.tasks.tidy_up")["queue"].name == "cpu"  # the default
    with pytest.raises(ValueError, match="unknown job kind 'tidy-up'"):
        registry.job("tidy-up")


def test_a_job_kind_name_cannot_be_taken_twice():
    registry.jobs()  # the kinds' modules loaded
    with pytest.raises(ValueError, match="job kind 'export' registered twice"):
        register_job("export", Work(task_name("other"), "x.y", Queue.CPU, "another"))
