"""The training request (``training/request.py``): declared once, parsed once, read by the Models form."""
from __future__ import annotations

import pytest

from annotation.services.training.request import TrainRequest, TrainRequestError, form_fields, seed_field
from workers.engine import TRAIN_PARAMS


def test_absent_options_take_their_defaults_and_given_ones_are_kept_as_given():
    assert TrainRequest.parse(None) == TrainRequest({}, 0, None)
    assert TrainRequest.parse({"config": {"epochs": 1}, "seed": 3}) == TrainRequest({"epochs": 1}, 3, None)


def test_form_text_is_converted_to_the_declared_types():
    assert TrainRequest.parse({"seed": "7", "base_version": ""}, text=True) == TrainRequest({}, 7, None)


def test_every_bad_option_is_named_at_once_a_training_option_under_config():
    with pytest.raises(TrainRequestError) as refused:
        TrainRequest.parse({"config": {"epochs": 0}, "seed": -1, "base_version": 0})
    assert set(refused.value.problems) == {"config", "seed", "base_version"}
    assert "epochs: must be >= 1, got 0" in refused.value.problems["config"]
    assert refused.value.status == 400


def test_the_form_draws_every_declared_training_option_and_the_seed():
    assert [f["name"] for f in form_fields()] == [o.name for o in TRAIN_PARAMS]
    assert seed_field()["name"] == "seed" and seed_field()["default"] == 0
