"""The export formats' registry (``export/formats/``): every registered format is offered by the
export page, accepted by the API and written by an export (its files and its README lines); a format
registered by a test shows up everywhere at once and is refused once removed."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, CandidatePair, Job, indices_key
from annotation.services import export
from annotation.services.export import formats as registry
from annotation.services.export import run_export_job
from annotation.services.export.formats.base import Writer
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(project, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    for a in range(2):
        article = factories.make_article(project, f"a{a}", {"0": [["Complex one here.", "Complex two here."]],
                                                            "1": [["Simple one.", "Simple two."]]})
        docs = {d.level: d for d in article.documents.all()}
        for i, value in ((0, "aligned"), (1, "partial")):
            pair = CandidatePair.objects.create(article=article, complex_document=docs["0"], simple_document=docs["1"],
                                                complex_key=indices_key([i]), simple_key=indices_key([i]))
            Adjudication.objects.create(pair=pair, value=value, provenance="adjudicated")
    return project


def _page(client, users, project) -> str:
    client.force_login(users["rita"])
    response = client.get(f"/projects/{project.pk}/export/")
    assert response.status_code == 200
    return response.content.decode()


def _export(api, users, project, formats: list[str]):
    response = api(users["rita"]).post(f"/api/projects/{project.pk}/exports/", {"formats": formats}, format="json")
    if response.status_code != 202:
        return response, None
    run_export_job(Job.objects.get(pk=response.json()["job"]).pk)
    return response, export.export_dir(export.Export.objects.get(pk=response.json()["id"]))


def test_the_built_in_formats_are_registered_in_list_order():
    assert export.format_names() == ("tsv", "parallel", "jsonl", "articles", "hf")
    assert export.ExportOptions().formats == list(export.format_names())
    assert all(f.exact for f in registry.formats())  # research data: every text as stored


@pytest.mark.parametrize("fmt", [f.name for f in registry.formats()])
def test_every_format_is_offered_accepted_and_written(fmt, corpus, client, api, users):
    spec = registry.get(fmt)
    assert f'value="{fmt}" checked> {spec.label}' in _page(client, users, corpus)
    response, root = _export(api, users, corpus, [fmt])
    assert response.status_code == 202, response.content
    folder = root / spec.writer.folder
    assert folder.is_dir() and any(p.is_file() for p in folder.rglob("*"))
    readme = (root / "README.txt").read_text()
    assert spec.readme in readme
    others = [f.writer.folder for f in registry.formats() if f.name != fmt]
    assert not any((root / other).exists() for other in others)


class DummyWriter(Writer):
    folder = "dummy"

    def names(self, split: str) -> list[str]:
        return [f"{split}.txt"]

    def write(self, batch, records) -> None:
        self._file(f"{batch.split}.txt").writelines(f"{r.pair_id}\t{r.label}\n" for r in records)


@pytest.fixture
def dummy_format():
    registry.register("dummy", label="dummy pairs", order=99, readme="dummy/*.txt          pair id, label")(DummyWriter)
    yield "dummy"
    registry.unregister("dummy")


def test_a_registered_format_is_listed_accepted_by_the_api_and_refused_once_removed(dummy_format, corpus, client,
                                                                                    api, users):
    assert 'value="dummy" checked> dummy pairs' in _page(client, users, corpus)
    response, root = _export(api, users, corpus, ["jsonl", "dummy"])
    assert response.status_code == 202, response.content
    rows = [line.split("\t") for split in ("train", "dev", "test") if (root / "dummy" / f"{split}.txt").exists()
            for line in (root / "dummy" / f"{split}.txt").read_text().splitlines()]
    assert sorted(label for _, label in rows) == ["aligned", "aligned", "partial", "partial"]
    assert "dummy/*.txt          pair id, label" in (root / "README.txt").read_text()

    registry.unregister("dummy")
    assert 'value="dummy"' not in _page(client, users, corpus)
    response, _ = _export(api, users, corpus, ["dummy"])
    assert response.status_code == 400 and "unknown formats 'dummy'" in response.json()["options"]


def test_a_format_cannot_be_registered_twice():
    with pytest.raises(ValueError, match="registered twice"):
        registry.register("jsonl", readme="")(DummyWriter)
