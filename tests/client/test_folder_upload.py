"""Issue 35 §3: the client uploads a folder as a folder (each file's relative path as ``paths``), so a
``save_to_disk`` folder, whose splits hold files of one name, imports with its splits."""
from __future__ import annotations

import pytest
from alignapp_client import Client

from annotation.models import Split
from tests import factories

datasets = pytest.importorskip("datasets")


@pytest.mark.services
def test_a_save_to_disk_folder_uploads_with_its_relative_paths(live_server, researcher, settings, tmp_path):
    settings.IMPORT_DIR = tmp_path / "imports"
    _, token = researcher
    project = factories.make_project("Folders", rita="researcher")
    rows = {"complex_id": ["3-1-0-0", "4-1-0-0"], "simple_id": ["3-0-0-0", "4-0-0-0"],
            "complex": ["Bees dance to show food.", "Owls hunt at night."], "simple": ["Bees dance.", "Owls hunt."],
            "label": ["aligned", "partialAligned"]}
    data = datasets.Dataset.from_dict(rows)
    datasets.DatasetDict({"train": data.select([0]), "test": data.select([1])}).save_to_disk(str(tmp_path / "ds"))
    done = Client(live_server.url, token).import_corpus(project.pk, tmp_path / "ds").wait(progress=False)
    assert done["format"] == "hf" and done["articles"] == 2
    assert dict(Split.objects.filter(article__project=project).values_list("article__title", "name")) == {
        "3": "train", "4": "test"}
