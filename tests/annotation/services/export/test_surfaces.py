"""Issue 27, done-when: ``manage.py export``, the API (which the export page and the Python client call) and
the service write the same files for the same choices — here the defaults and a split policy, over a corpus
with imported sparse gold, a refinement, a tie and identical pairs."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Export, Job
from annotation.services import export

from .test_precedence import onestop  # noqa: F401 - the corpus of issue 27 (a fixture)

pytestmark = pytest.mark.django_db

POLICY = {"mode": "counts", "train": 1, "dev": 0, "test": 1, "seed": 3}


def files(root: Path, export_id: int) -> dict[str, str]:
    """Every file under an export's folder, its text with the export's own id taken out; the manifest
    without its id, times and checksums, a saved dataset split without its random fingerprint."""
    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix != ".zip"):
        text = path.read_text(errors="replace") if path.suffix not in (".arrow", ".parquet") else path.read_bytes().hex()
        if path.name == "manifest.json":
            manifest = json.loads(text)
            # how long each step took, and the files' checksums (the files themselves are compared here)
            for key in ("created", "created_at", "export", "export_id", "id", "user", "finished_at", "timings", "files"):
                manifest.pop(key, None)
            text = json.dumps(manifest, sort_keys=True)
        elif path.name == "state.json":  # the datasets library's own random fingerprint of a saved split
            text = json.dumps({k: v for k, v in json.loads(text).items() if k != "_fingerprint"}, sort_keys=True)
        out[str(path.relative_to(root))] = text.replace(f"export-{export_id}", "export-N").replace(f"#{export_id}", "#N").replace(
            f"export {export_id} ", "export N ")
    return out


def by_command(project) -> Export:
    call_command("export", str(project.pk), "--counts", "1,0,1", "--seed", "3", "--no-zip", stdout=StringIO())
    return Export.objects.latest("pk")


def by_api(project, api, users, capture) -> Export:
    with capture(execute=False):
        response = api(users["rita"]).post(f"/api/projects/{project.pk}/exports/", {"split_policy": POLICY},
                                           format="json")
    assert response.status_code == 202, response.content
    export.run_export_job(Job.objects.get(pk=response.json()["job"]).pk)  # what the worker does
    return Export.objects.get(pk=response.json()["id"])


def test_the_command_and_the_api_write_the_same_files(request, api, users, settings, tmp_path,
                                                       django_capture_on_commit_callbacks):
    corpus = request.getfixturevalue("onestop")
    settings.MEDIA_ROOT = str(tmp_path)
    first = by_command(corpus)
    second = by_api(corpus, api, users, django_capture_on_commit_callbacks)
    a, b = files(export.export_dir(first), first.pk), files(export.export_dir(second), second.pk)
    assert sorted(a) == sorted(b) and len(a) > 5
    differ = [name for name in a if a[name] != b[name]]
    assert differ == [], differ
    # and they say what was labelled: the tie and the imported-only link are not in the six-column TSV
    assert first.manifest["left_out"] == second.manifest["left_out"] == {"tsv": {"aligned-or-partial": 1, "undecided": 1}}
