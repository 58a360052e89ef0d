"""The Django admin: every model it registers lists its rows for a staff user, with the columns it declares."""
from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import Client

from annotation import models
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(users, project):
    """A staff user's client, and a project with one article and one sentence pair to list."""
    article = factories.make_article(project, "Bees", {"adv": [["Bees are dying."]], "int": [["Bees die."]]})
    complex_doc, simple_doc = article.documents.order_by("rank")
    factories.make_pair(article=article, complex_document=complex_doc, simple_document=simple_doc,
                        complex_key="0", simple_key="0", origin="manual")
    client = Client()
    client.force_login(users["admin"])
    return client


def test_every_registered_model_lists_its_rows_for_staff(staff):
    registered = [m for m in admin.site._registry if m._meta.app_label == "annotation"]
    assert models.CandidatePair in registered and models.Label in registered
    for model in registered:
        response = staff.get(f"/admin/annotation/{model._meta.model_name}/")
        assert response.status_code == 200, model.__name__


def test_the_listed_models_show_the_columns_they_declare(staff):
    assert admin.site._registry[models.AlignmentRun].list_display == (
        "id", "project", "method", "status", "progress", "pair_count", "created_at")
    assert admin.site._registry[models.CandidatePair].raw_id_fields == ("article", "complex_document", "simple_document")
    page = staff.get("/admin/annotation/candidatepair/").content.decode()
    assert all(f"column-{name}" in page for name in ("complex_key", "simple_key", "predicted_label", "identical"))
