"""The import page (``/projects/<id>/import/``): its options reach the import."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils.html import escape

from annotation.models import Article

pytestmark = pytest.mark.django_db


def jsonl(*ids: str) -> SimpleUploadedFile:
    data = "".join(json.dumps({"id": i, "complex": {"paragraphs": [["A complex sentence."]]},
                               "simple": {"paragraphs": [["A simple one."]]}}) + "\n" for i in ids).encode()
    return SimpleUploadedFile("more.jsonl", data, content_type="application/octet-stream")


def test_articles_already_there_are_refused_naming_the_option_and_skipped_with_it(client, users, project):
    """Issue 28 item 5: the refusal names the page's option, and the page has one."""
    Article.objects.create(project=project, title="a")
    client.force_login(users["rita"])
    url = f"/projects/{project.pk}/import/"
    assert 'name="on_conflict" value="skip"' in client.get(url).content.decode()
    refused = client.post(url, {"files": jsonl("a", "b"), "format": "jsonl"})
    assert refused.status_code == 400
    page = refused.content.decode()
    assert "Nothing was imported" in page and "Skip articles already in the project" in page.split("Nothing was imported")[1]
    assert not Article.objects.filter(title="b").exists()
    skipped = client.post(url, {"files": jsonl("a", "b"), "format": "jsonl", "on_conflict": "skip"})
    assert skipped.status_code == 200 and "skipped 1 article(s) already in project" in skipped.content.decode()
    assert sorted(project.articles.values_list("title", flat=True)) == ["a", "b"]


def test_the_form_reads_the_import_options_declarations_and_echoes_only_what_was_typed(client, users, project):
    """Issue 38: the choices, defaults and help come from ``import_options()``; after a refusal the form shows the raw
    text the user typed (a bad ``columns`` included), not a value the page parsed itself."""
    from annotation.services.corpus.importing.request import import_options

    declared = {o.name: o for o in import_options()}
    client.force_login(users["rita"])
    url = f"/projects/{project.pk}/import/"
    page = client.get(url).content.decode()
    for fmt in declared["format"].choices:
        assert f"<option{' selected' if fmt == 'auto' else ''}>{fmt}</option>" in page
    assert f'title="{escape(declared["columns"].help)}"' in page
    meaning = declared["gold_meaning"].default
    assert f'name="gold_meaning" value="{meaning}" checked' in page
    assert page.count('name="gold_meaning" value=') == len(declared["gold_meaning"].choices)
    typed = {"files": jsonl("a"), "format": "jsonl", "columns": " a, b ,c,d", "on_conflict": "skip",
             "gold_meaning": "exhaustive", "test_questions": "on"}
    refused = client.post(url, typed)
    assert refused.status_code == 400, refused.content[:300]
    page = refused.content.decode()
    assert "at most three column names" in page and 'value=" a, b ,c,d"' in page
    assert "<option selected>jsonl</option>" in page and 'value="skip" checked' in page
    assert 'value="exhaustive" checked' in page and 'name="test_questions" value="1" checked' in page
    assert not project.articles.exists()
