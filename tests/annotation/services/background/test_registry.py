"""The one table of background work (``background/registry.py``): job kinds registered by their modules, the
run, chunk and reaper entries, Celery's routing by task name, and the hooks the reaper calls."""
from __future__ import annotations

import pytest

from annotation.plugins import UnknownName
from annotation.services.background import registry
from annotation.services.background.registry import Queue, Work


@pytest.fixture
def throwaway():
    """A job kind registered for one test (its service a function of the standard library)."""
    work = registry.register_job("throwaway", Work(registry.task_name("throwaway"), "os.path.basename", Queue.GPU,
                                                   "A job kind of the tests.", lost="os.path.dirname"))
    yield work
    registry.unregister_job("throwaway")


def test_kinds_sharing_a_task_share_its_service_queue_and_retry_rule():
    by_task: dict[str, registry.Work] = {}
    for work in [registry.RUN, registry.RUN_CHUNK, *(w for _, w in registry.jobs()), registry.REAPER]:
        assert by_task.setdefault(work.task, work) == work, work.task


def test_an_unknown_job_kind_is_refused_with_the_known_ones():
    with pytest.raises(UnknownName, match="unknown job kind 'nope'; choose one of: access-attributes, corpus-stats"):
        registry.job("nope")


def test_a_registered_kind_is_listed_routed_and_loaded_and_gone_once_removed(throwaway):
    assert registry.job("throwaway") is throwaway and ("throwaway", throwaway) in registry.jobs()
    assert throwaway in registry.every() and registry.route("workers.tasks.throwaway") == {"queue": "gpu"}
    assert throwaway.function()("/a/b") == "b" and registry.lost_hook("throwaway")("/a/b") == "/a"
    registry.register_job("throwaway", throwaway)  # the same entry again (a module imported twice): no change
    with pytest.raises(ValueError, match="registered twice"):
        registry.register_job("throwaway", Work(registry.task_name("other"), "os.getcwd", Queue.CPU, "Another."))
    registry.unregister_job("throwaway")
    with pytest.raises(UnknownName):
        registry.job("throwaway")
    assert registry.route("workers.tasks.throwaway") == {"queue": "cpu"}  # a task no entry names: cpu
    registry.register_job("throwaway", throwaway)  # for the fixture to remove


def test_only_tasks_of_workers_tasks_are_routed():
    assert registry.route("celery.chord_unlock") is None
    assert registry.route(registry.RUN.task) == {"queue": "gpu"} and registry.route(registry.REAPER.task) == {"queue": "cpu"}
    assert registry.task_routes() == (registry.route,)


def test_every_entry_is_one_per_task_name_with_the_run_first_and_the_reaper_last():
    every = registry.every()
    assert every[0] is registry.RUN and every[1] is registry.RUN_CHUNK and every[-1] is registry.REAPER
    assert len({w.task for w in every}) == len(every)
    assert [k for k, _ in registry.jobs()] == sorted(k for k, _ in registry.jobs())


def test_a_kind_without_a_lost_hook_has_none_and_an_unknown_kind_none_either():
    assert registry.lost_hook("corpus-stats") is None and registry.lost_hook("no-such-kind") is None
    assert registry.lost_hook("import") is not None  # an interrupted import removes what it wrote


def test_the_sweeps_and_the_retry_rules_load():
    assert [f.__name__ for f in registry.sweeps()] == ["sweep_stale_files", "sweep_lost_chunks"]
    assert registry.RUN.retry.on == registry.TRANSIENT and registry.RUN.retry.acks_late
    assert registry.REAPER.retry.on == () and registry.task_name("x") == "workers.tasks.x"
