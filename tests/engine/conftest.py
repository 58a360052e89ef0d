"""Engine test fixtures: the bundled MiniLM encoder is loaded once per session."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def sbert_similarity():
    from workers.engine.similarity import get_similarity

    return get_similarity("sbert")


@pytest.fixture(scope="session")
def minilm_path() -> str:
    from workers.engine.encoders import default_model_path

    return default_model_path()
