"""Model download: parallel first downloads of a version all get a complete, valid zip (issue 19 item 3)."""
from __future__ import annotations

import io
import os
import threading
import zipfile
from concurrent.futures import ThreadPoolExecutor

from annotation.models import ModelVersion
from annotation.services.training import versions as training


def model_folder(tmp_path):
    root = tmp_path / "crf-v1"
    (root / "encoder").mkdir(parents=True)
    (root / "config.json").write_text('{"kind": "crf"}')
    for i in range(4):  # incompressible, so building the zip takes a while
        (root / "encoder" / f"shard{i}.bin").write_bytes(os.urandom(2_000_000))
    return root


def expected_members(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_parallel_first_downloads_all_read_a_complete_zip(tmp_path):
    root = model_folder(tmp_path)
    version = ModelVersion(name="crf-v1", kind="crf", path=str(root))
    barrier = threading.Barrier(8)

    def download(_):
        barrier.wait(timeout=30)
        with training.zip_version(version).open("rb") as f:
            return f.read()

    with ThreadPoolExecutor(max_workers=8) as pool:
        bodies = list(pool.map(download, range(8)))
    expected = expected_members(root)
    for body in bodies:
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            assert archive.testzip() is None
            assert {n: archive.read(n) for n in archive.namelist() if not n.endswith("/")} == expected
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")], "no partial file is left behind"


def test_the_download_endpoint_serves_the_zip(api, users, project, tmp_path):
    root = model_folder(tmp_path)
    version = ModelVersion.objects.create(project=project, name="crf-v1", kind="crf", path=str(root))
    response = api(users["rita"]).get(f"/api/model-versions/{version.pk}/download/")
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        assert archive.read("config.json") == b'{"kind": "crf"}'
