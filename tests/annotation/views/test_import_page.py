"""The import page (``/projects/<id>/import/``): its options reach the import."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

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
