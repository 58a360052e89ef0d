"""Issue 35 §3: folders upload as folders, their relative paths kept — the API's ``paths``, the import
page's folder picker (which sends them as ``paths``), the client — for a ``save_to_disk`` folder, the
hub converter's ``manual/dev/0000.parquet`` layout and an alignapp ``hf/`` export folder; a folder
sent without its paths is refused naming the real problem."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Article, Split
from annotation.services.review.exhaustive import exhaustive_pairs
from tests import factories

datasets = pytest.importorskip("datasets")
pytestmark = pytest.mark.django_db
ROWS = {"alignment_label": [1, 0, 0, 2], "normal_sentence_id": ["7-1-0-0", "7-1-0-1", "7-1-0-0", "7-1-0-1"],
        "simple_sentence_id": ["7-0-0-0", "7-0-0-0", "7-0-0-1", "7-0-0-1"],
        "normal_sentence": ["Bees dance to show food.", "The dance is old.", "Bees dance to show food.",
                            "The dance is old."],
        "simple_sentence": ["Bees dance.", "Bees dance.", "It is old.", "It is old."], "gleu_score": [0.5, 0.0, 0.0, 0.25]}
FEATURES = datasets.Features({"alignment_label": datasets.ClassLabel(names=["notAligned", "aligned", "partialAligned"]),
                              **{k: datasets.Value("string") for k in list(ROWS)[1:5]},
                              "gleu_score": datasets.Value("float32")})


@pytest.fixture(autouse=True)
def import_dir(settings, tmp_path):
    settings.IMPORT_DIR = tmp_path / "imports"
    settings.MEDIA_ROOT = str(tmp_path / "media")


def folder_files(root: Path) -> tuple[list[SimpleUploadedFile], list[str]]:
    """Every file under ``root`` as the browser sends a folder: the file name only, the path aside."""
    found = sorted(p for p in root.rglob("*") if p.is_file())
    return ([SimpleUploadedFile(p.name, p.read_bytes(), content_type="application/octet-stream") for p in found],
            [p.relative_to(root).as_posix() for p in found])


def save_to_disk(tmp_path: Path) -> Path:
    data = datasets.Dataset.from_dict(ROWS, features=FEATURES)
    other = datasets.Dataset.from_dict({"alignment_label": [1], "normal_sentence_id": ["8-1-0-0"],
                                        "simple_sentence_id": ["8-0-0-0"], "normal_sentence": ["Owls hunt at night."],
                                        "simple_sentence": ["Owls hunt."], "gleu_score": [0.3]}, features=FEATURES)
    datasets.DatasetDict({"train": data, "validation": other}).save_to_disk(str(tmp_path / "manual"))
    return tmp_path / "manual"


def test_a_save_to_disk_folder_uploads_through_the_api_with_its_paths(api, users, project, tmp_path):
    files, paths = folder_files(save_to_disk(tmp_path))
    assert len({f.name for f in files}) < len(files)  # train/ and validation/ hold files of one name
    answer = api(users["rita"]).post(f"/api/projects/{project.pk}/import/", {"files": files, "paths": paths},
                                     format="multipart")
    assert answer.status_code == 201, answer.content
    assert answer.json()["format"] == "hf" and answer.json()["articles"] == 2
    assert dict(Split.objects.filter(article__project=project).values_list("article__title", "name")) == {
        "7": "train", "8": "dev"}
    assert len(exhaustive_pairs(project)) == 2  # each listed m × n


def test_a_folder_without_its_paths_is_refused_naming_the_real_problem(api, users, project, tmp_path):
    files, _ = folder_files(save_to_disk(tmp_path))
    answer = api(users["rita"]).post(f"/api/projects/{project.pk}/import/", {"files": files}, format="multipart")
    assert answer.status_code == 400
    problem = " ".join(answer.json()["problems"])
    assert "files of different folders? Upload the folder as a folder" in problem and "'paths'" in problem
    assert not Article.objects.filter(project=project).exists()


@pytest.mark.parametrize("paths", [["../x.parquet"], ["/etc/x.parquet"], ["a.parquet", "b.parquet"]])
def test_a_bad_path_or_one_path_too_many_is_refused(api, users, project, paths):
    upload = SimpleUploadedFile("x.parquet", b"PAR1", content_type="application/octet-stream")
    answer = api(users["rita"]).post(f"/api/projects/{project.pk}/import/", {"files": [upload], "paths": paths},
                                     format="multipart")
    assert answer.status_code == 400
    assert "relative path inside the uploaded folder" in str(answer.json()) or "give one per file" in str(answer.json())


def test_the_hub_converter_layout_uploads_through_the_page_with_its_split(client, users, project, tmp_path):
    root = tmp_path / "converted"
    (root / "manual" / "dev").mkdir(parents=True)
    datasets.Dataset.from_dict(ROWS, features=FEATURES).to_parquet(str(root / "manual" / "dev" / "0000.parquet"))
    files, paths = folder_files(root)
    client.force_login(users["rita"])
    page = client.get(f"/projects/{project.pk}/import/").content.decode()
    assert "webkitdirectory" in page and "import_paths.js" in page  # the folder picker; the script sends its paths
    answer = client.post(f"/projects/{project.pk}/import/", {"files": files, "paths": paths, "format": "auto"})
    assert answer.status_code == 200, answer.content.decode()[:2000]
    assert Split.objects.get(article__project=project).name == "dev"


def test_an_hf_export_folder_uploads_through_the_api_and_keeps_completeness(api, users, project, tmp_path, settings):
    from annotation.services import export

    source = factories.make_project("Source", rita="researcher")
    data = datasets.Dataset.from_dict(ROWS, features=FEATURES)
    data.to_parquet(str(tmp_path / "dev.parquet"))
    from annotation.services.corpus.importing import import_path

    import_path(source, tmp_path / "dev.parquet", "auto")
    done = export.run_export(source, export.ExportOptions.parse({"formats": ["hf"]}, allow_paths=True))
    files, paths = folder_files(export.export_dir(done) / "hf")
    answer = api(users["rita"]).post(f"/api/projects/{project.pk}/import/", {"files": files, "paths": paths},
                                     format="multipart")
    assert answer.status_code == 201, answer.content
    assert len(exhaustive_pairs(project)) == 1 and Split.objects.get(article__project=project).name == "dev"


def test_a_tsv_export_folder_with_its_sidecar_uploads_through_the_api_complete(api, users, project, settings, tmp_path):
    """Issue 35 §1: the wiki-manual folder (TSV + gold_sidecar.json) of a complete pair with a link of unknown
    kind and a tie, uploaded as a folder: complete again, the two values kept."""
    from annotation.models import Adjudication

    from ..services.export.helpers import run
    from ..services.export.test_round_trip_matrix import _unknown_and_tie

    _, root = run(_unknown_and_tie(tmp_path), settings, tmp_path / "export", formats=["tsv"])
    settings.MEDIA_ROOT = str(tmp_path / "media")
    files, paths = folder_files(root / "wiki-manual")
    assert paths == ["gold_sidecar.json", "train.tsv"]
    answer = api(users["rita"]).post(f"/api/projects/{project.pk}/import/", {"files": files, "paths": paths},
                                     format="multipart")
    assert answer.status_code == 201, answer.content
    assert answer.json()["format"] == "wiki-manual" and len(exhaustive_pairs(project)) == 1
    assert sorted(Adjudication.objects.filter(pair__article__project=project).values_list("value", flat=True)) == [
        "aligned-or-partial", "undecided"]
