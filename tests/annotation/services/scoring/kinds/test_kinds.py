"""The scoring kinds' registry (``scoring/kinds/``): each kind's module declares everything about it — options,
reference need, checks, queue, task, feature prefix — and its job kind comes from that declaration."""
from __future__ import annotations

import pytest

from annotation.management.commands.score_pairs import Command as ScorePairs
from annotation.services.background import registry
from annotation.services.scoring import jobs as scoring
from annotation.services.scoring import kinds
from workers.engine import Option

pytestmark = pytest.mark.django_db


def test_the_built_in_kinds_are_registered_in_list_order():
    assert kinds.names() == ("access-attributes", "sum4simp-filter", "wivico-thresholds", "gain-classifier",
                             "pivot-select")


@pytest.mark.parametrize("name", kinds.names())
def test_every_kind_is_a_job_kind_on_its_own_queue_and_task(name):
    kind = kinds.get(name)
    work = registry.job(name)
    assert work.task == f"workers.tasks.{kind.task}" and work.queue.value == kind.queue and work.doc == kind.doc
    assert work.service == kinds.SERVICE and callable(work.function())


@pytest.mark.parametrize("name", kinds.names())
def test_every_kind_declares_its_options_once_with_help(name):
    schema = kinds.get(name).schema()
    assert len({o.name for o in schema}) == len(schema), "an option declared twice"
    assert all(isinstance(o, Option) and o.help for o in schema)
    assert {"run", "origin"} <= {o.name for o in schema}
    fits = kinds.get(name).needs_reference
    assert ({"reference_project", "model_version"} <= {o.name for o in schema}) == fits


def test_defaults_and_ranges_come_from_the_declaration(project):
    request = scoring.parse_request(project, "pivot-select", {"h_bleu": 20, "orient": False})
    assert request.kind is kinds.get("pivot-select")
    assert request.params == {"h_bleu": 20.0, "orient": False} and isinstance(request.params["h_bleu"], float)
    with pytest.raises(scoring.ScoringRefused) as info:
        scoring.parse_request(project, "pivot-select", {"h_fres": -201})
    assert info.value.problems == {"h_fres": "must be >= -200, got -201"} and info.value.code == "bad_scoring_params"


def test_the_command_offers_the_registered_kinds():
    parser = ScorePairs().create_parser("manage.py", "score_pairs")
    kind = next(a for a in parser._actions if a.dest == "kind")
    assert tuple(kind.choices) == kinds.names()
    assert "pivot-select: Pivot-translation BLEU/FRES selectors over every pair." in kind.help
