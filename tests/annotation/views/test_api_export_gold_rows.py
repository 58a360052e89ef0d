"""``/api/projects/<id>/gold/rows/``: the gold streamed as JSON lines, read only unless ``lock`` (issue 37)."""
from __future__ import annotations

import json

import pytest

from annotation.models import AuditEvent, Export, Job, Split
from tests.annotation.views.test_api_export import corpus, url  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


def rows(response) -> list[dict]:
    assert response.status_code == 200, getattr(response, "content", b"")
    assert response["Content-Type"] == "application/x-ndjson"
    return [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines() if line]


def test_reading_the_gold_makes_no_export_and_assigns_or_locks_no_split(corpus, api, users):  # noqa: F811
    audits = AuditEvent.objects.count()
    got = rows(api(users["rita"]).get(url(corpus, "gold/rows/")))
    assert len(got) == 8 and {r["label"] for r in got} == {"aligned", "partial"}
    assert {r["split"] for r in got} <= {"train", "dev", "test"} and all(r["split"] for r in got)
    assert not Export.objects.exists() and not Job.objects.exists() and not Split.objects.exists()
    assert AuditEvent.objects.count() == audits


def test_the_rows_are_the_records_of_a_jsonl_gold_export(corpus, api, users, tmp_path):  # noqa: F811
    from annotation.services import export

    got = rows(api(users["rita"]).get(url(corpus, "gold/rows/")))
    Split.objects.all().delete()  # the export below assigns the same splits by the same policy
    done = export.run_export(corpus, export.ExportOptions.parse({"formats": ["jsonl"], "lock": False}), archive=False)
    written = [json.loads(line) for split in ("train", "dev", "test")
               for path in (export.export_dir(done) / "jsonl").glob(f"{split}.jsonl")
               for line in path.read_text().splitlines()]
    assert sorted(got, key=lambda r: r["id"]) == sorted(written, key=lambda r: r["id"])


def test_splits_and_options_narrow_the_rows(corpus, api, users):  # noqa: F811
    client = api(users["rita"])
    every = rows(client.get(url(corpus, "gold/rows/")))
    test = rows(client.get(url(corpus, "gold/rows/"), {"split": "test"}))
    assert test and {r["split"] for r in test} == {"test"} and len(test) < len(every)
    aligned = rows(client.get(url(corpus, "gold/rows/"), {"options": json.dumps({"labels": ["aligned"]})}))
    assert len(aligned) == 4 and {r["label"] for r in aligned} == {"aligned"}
    bad = client.get(url(corpus, "gold/rows/"), {"options": json.dumps({"formats": ["x"], "colour": 1})})
    assert bad.status_code == 400 and "colour" in bad.json()["options"]
    for text in ("[1", "[1]"):
        bad = client.get(url(corpus, "gold/rows/"), {"options": text})
        assert bad.status_code == 400 and "JSON object" in bad.json()["options"], bad.content


def test_lock_assigns_and_locks_the_read_splits_without_an_export(corpus, api, users):  # noqa: F811
    response = api(users["rita"]).post(url(corpus, "gold/rows/"), {"options": {"splits": ["train"]}, "lock": True},
                                       format="json")
    got = rows(response)
    assert got and {r["split"] for r in got} == {"train"}
    assert Split.objects.count() == 4 and not Export.objects.exists()
    assert set(Split.objects.filter(locked=True).values_list("name", flat=True)) == {"train"}
    assert not Split.objects.filter(locked=True).exclude(name="train").exists()


def test_only_researchers_read_the_gold(corpus, api, users):  # noqa: F811
    for user, code in ((users["anna"], 403), (users["olga"], 404), (None, 401)):
        assert api(user).get(url(corpus, "gold/rows/")).status_code == code
