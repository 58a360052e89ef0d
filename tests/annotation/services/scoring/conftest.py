"""Fixtures of the scoring tests: a model folder per test, a reference corpus, a WIVICO project whose
sentence vectors (and so SBERT cosines) are known."""
from __future__ import annotations

import numpy as np
import pytest

from annotation.models import Adjudication, AlignmentRun, CandidatePair, Status
from annotation.services.alignment import run_saving
from tests import factories
from tests.annotation.services.scoring.helpers import REFERENCE, alignment, parallel


@pytest.fixture(autouse=True)
def _model_root(settings, tmp_path):
    settings.MODEL_ROOT = tmp_path / "models"


@pytest.fixture
def reference(users):
    ref = factories.make_project("WikiLarge sample", rita="researcher")
    parallel(ref, "wikilarge.train", REFERENCE)
    return ref


class TableEncoder:
    """Known unit vectors for known texts; anything else gets a fixed far-away vector."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = {k: np.array(v, dtype=np.float32) / np.linalg.norm(v) for k, v in table.items()}

    def encode(self, texts):
        other = np.array([0.0, 0.0, 1.0], dtype=np.float32)
        return np.stack([self.table.get(t, other) for t in texts]) if texts else np.zeros((0, 3), dtype=np.float32)


@pytest.fixture
def wivico_project(users, monkeypatch):
    project = factories.make_project("WIVICO", scheme="wivico-validity", rita="researcher", anna="annotator")
    factories.make_article(project, "Doc", {
        "complex": [["A1.", "A2.", "A3.", "A4."]],
        "simple": [["B1.", "B2.", "B3.", "B4."]],
    })
    table = {"A1.": [1, 0, 0], "B1.": [1, 0, 0],  # cosine 1.0
             "A2.": [1, 0, 0], "B2.": [0.6, 0.8, 0],  # cosine 0.6
             "A3.": [0, 1, 0], "B3.": [0.8, 0.6, 0],  # cosine 0.6
             "A4.": [1, 0, 0], "B4.": [0, 1, 0]}  # cosine 0.0
    monkeypatch.setattr("workers.engine.simplicity.embedding.default_encoder", lambda model=None, device=None: TableEncoder(table))
    run = AlignmentRun.objects.create(project=project, method="wivico", status=Status.SUCCEEDED)
    article = project.articles.get()
    c, s = article.documents.order_by("rank")
    run_saving.save_alignment(run, article, c, s, alignment([(0, 0), (1, 1), (2, 2), (3, 3)]))
    pairs = list(CandidatePair.objects.filter(predictions__run=run).order_by("complex_key"))
    for pair, gold in zip(pairs, ["valid", "valid", "partially-valid", "non-valid"]):
        Adjudication.objects.create(pair=pair, value=gold, provenance=Adjudication.ADJUDICATED)
    return project

