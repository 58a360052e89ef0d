"""The training options, where the training modules import them from: declared in
:mod:`workers.engine.training_config`, outside this package so that reading them (the web app's Models
page and API) imports no torch."""
from __future__ import annotations

from ..training_config import TRAIN_PARAMS, TrainConfig

__all__ = ["TRAIN_PARAMS", "TrainConfig"]
