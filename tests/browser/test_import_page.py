"""The import page follows a large upload's background job: progress, then the result; or a cancel."""
from __future__ import annotations

import json

import pytest

from annotation.models import Job, Status
from annotation.services.corpus.demo import ensure_demo
from annotation.services.corpus.importing.uploads import run_import_job
from tests.browser.conftest import login

pytestmark = pytest.mark.browser


@pytest.fixture
def big_upload(settings, tmp_path):
    """A 40-article JSONL file, over the (lowered) background threshold."""
    settings.IMPORT_BACKGROUND_BYTES = 1000
    settings.IMPORT_DIR = tmp_path / "imports"
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps({"id": f"big-{i}", "complex": {"paragraphs": [[f"Complex {i}."]]},
                                        "simple": {"paragraphs": [[f"Simple {i}."]]}}) + "\n" for i in range(40)))
    return path


def upload(page, project, path) -> Job:
    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/import/")
    page.set_input_files("input[name=files]", str(path))
    page.click("#import-form button[type=submit]")
    page.locator("#import-job").wait_for()
    return Job.objects.get(kind="import")


def test_the_page_shows_the_job_s_progress_and_then_what_was_imported(page, transactional_db, big_upload):
    project, _ = ensure_demo()
    job = upload(page, project, big_upload)
    assert f"job #{job.pk}" in page.locator("#import-job h2").inner_text()
    page.locator("#import-status").filter(has_text="queued").wait_for()
    run_import_job(job.pk)  # what the cpu worker does with the queued task
    outcome = page.locator("#import-outcome .ok")
    outcome.wait_for(timeout=20000)
    assert "40 articles, 80 documents, 80 sentences, 0 pairs (jsonl)." in outcome.inner_text()
    assert page.locator("#import-progress").get_attribute("value") == "100"
    assert project.articles.filter(title__startswith="big-").count() == 40


def test_cancelling_on_the_page_stops_the_job_and_says_nothing_was_imported(page, transactional_db, big_upload):
    project, _ = ensure_demo()
    before = project.articles.count()
    job = upload(page, project, big_upload)
    page.on("dialog", lambda dialog: dialog.accept())
    page.click("#import-cancel")
    page.locator("#import-outcome .problems").filter(has_text="Import cancelled").wait_for(timeout=20000)
    job.refresh_from_db()
    assert job.status == Status.CANCELLED
    run_import_job(job.pk)  # a worker that gets the message now imports nothing and drops the upload
    assert project.articles.count() == before
    assert list((big_upload.parent / "imports").iterdir()) == []


@pytest.mark.parametrize("meaning", ["sparse", "exhaustive", "predictions"])
def test_the_page_asks_what_the_gold_means_and_says_what_was_stored(page, transactional_db, tmp_path, settings, meaning):
    """Issue 18: sparse gold → no article complete, no test questions, no "aligned" invented."""
    from annotation.models import Adjudication, AlignmentRun
    from annotation.services.review import queue_serving
    from annotation.services.review.exhaustive import exhaustive_pairs

    settings.IMPORT_DIR = tmp_path / "imports"
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    project, _ = ensure_demo()
    path = tmp_path / "onestop.jsonl"
    path.write_text(json.dumps({"id": "gold-1", "complex": {"paragraphs": [["C0.", "C1."]]},
                                "simple": {"paragraphs": [["S0."]]}, "gold": [[0, 0]]}) + "\n")
    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/import/")
    assert page.locator("#gold-meaning input[value=sparse]").is_checked()  # the default
    page.check(f"#gold-meaning input[value={meaning}]")
    page.set_input_files("input[name=files]", str(path))
    page.click("#import-form button[type=submit]")
    summary = page.locator(".import-gold").inner_text()
    imported = Adjudication.objects.filter(pair__article__title="gold-1")
    if meaning == "predictions":
        assert "1 links as predictions" in summary and not imported.exists()
        assert AlignmentRun.objects.filter(method="import", params__file="onestop.jsonl").exists()
    else:
        assert list(imported.values_list("value", flat=True)) == ["aligned-or-partial"]  # never "aligned"
        complete = 1 if meaning == "exhaustive" else 0
        assert f"1 links as {meaning} gold (Task 1 only: 1 without a kind), {complete} articles complete, " \
               "0 test questions" in summary
        assert len([p for p in exhaustive_pairs(project) if p.imported]) == complete
    assert not queue_serving.test_pairs(project).filter(article__title="gold-1").exists()


def test_a_folder_chosen_with_the_folder_picker_imports_with_its_paths(page, transactional_db, settings, tmp_path):
    """Issue 35 §3: a save_to_disk folder (train/ and test/ hold files of one name) through the page."""
    datasets = pytest.importorskip("datasets")
    settings.IMPORT_DIR = tmp_path / "imports"
    rows = {"complex_id": ["3-1-0-0", "4-1-0-0"], "simple_id": ["3-0-0-0", "4-0-0-0"],
            "complex": ["Bees dance to show food.", "Owls hunt at night."], "simple": ["Bees dance.", "Owls hunt."],
            "label": ["aligned", "partialAligned"]}
    data = datasets.Dataset.from_dict(rows)
    datasets.DatasetDict({"train": data.select([0]), "test": data.select([1])}).save_to_disk(str(tmp_path / "ds"))
    project, _ = ensure_demo()
    login(page, "researcher", "researcher")
    page.goto(f"/projects/{project.pk}/import/")
    page.set_input_files("#import-folder", str(tmp_path / "ds"))
    page.click("#import-form button[type=submit]")
    page.get_by_text("2 articles, 4 documents").wait_for(timeout=20000)
    assert dict(project.articles.filter(title__in=["3", "4"]).values_list("title", "split__name")) == {
        "3": "train", "4": "test"}
