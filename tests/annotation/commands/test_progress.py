"""Long commands show progress: plain lines when stdout is not a terminal, then a one-line summary."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.management.progress import CommandProgress
from annotation.models import Adjudication, CandidatePair, Job, ModelVersion, indices_key
from annotation.services.corpus.importing import import_files
from tests import factories

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[3] / "annotation" / "fixtures" / "demo_corpus"
LINE = re.compile(r"^(?P<what>[^:]+): (?P<percent>\d+)%")


def run(*args: str) -> list[str]:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().splitlines()


def progress_lines(lines: list[str], what: str) -> list[int]:
    """The percentages of the ``what: N% ...`` lines, in order."""
    return [int(m["percent"]) for m in map(LINE.match, lines) if m and m["what"] == what]


def assert_progress_then_summary(lines: list[str], what: str, summary: str) -> None:
    percents = progress_lines(lines, what)
    assert percents and percents == sorted(percents) and percents[-1] == 100, lines
    last_progress = max(i for i, line in enumerate(lines) if line.startswith(f"{what}: "))
    after = lines[last_progress + 1:]
    assert after and after[0].startswith(summary), lines  # the summary comes after the progress lines
    assert not any(line.startswith(f"{what}: ") for line in after)


def test_import_corpus_shows_progress_lines_and_a_summary(project):
    lines = run("import_corpus", project.name, str(DEMO))
    assert_progress_then_summary(lines, "import", "imported 4 articles, 12 documents")
    assert any("written" in line for line in lines if line.startswith("import: "))


def test_align_now_shows_progress_lines_and_a_summary(project):
    import_files(project, [("a.src", b"The feline reposed upon the rug.\nIt slept.\n"),
                           ("a.dst", b"The cat lay on the rug.\nIt slept.\n")], "parallel")
    lines = run("align", project.name, "--method", "jaccard", "--now")
    run_line = lines[-1]
    assert re.match(r"alignment run #\d+ \(jaccard\) succeeded: \d+ pairs", run_line)
    number = re.match(r"alignment run #(\d+)", run_line)[1]
    assert_progress_then_summary(lines, f"run #{number}", "alignment run #")


def test_score_pairs_now_shows_progress_lines_and_a_summary(project):
    import_files(project, [("pivot.src", b"The feline reposed upon the rug.\nThe cat lay on the rug.\n"),
                           ("pivot.dst", b"The cat lay on the rug.\nThe cat lay on the rug.\n")], "parallel")
    lines = run("score_pairs", project.name, "--kind", "pivot-select", "--now")
    job = Job.objects.get()
    assert_progress_then_summary(lines, f"pivot-select #{job.pk}", f"pivot-select job #{job.pk} succeeded")


def test_export_shows_progress_lines_and_a_summary(project, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    for a in range(3):
        article = factories.make_article(project, f"a{a}", {"0": [["The complex sentence number one."]],
                                                            "1": [["The simple one."]]})
        docs = {d.level: d for d in article.documents.all()}
        pair = CandidatePair.objects.create(article=article, complex_document=docs["0"], simple_document=docs["1"],
                                            complex_key=indices_key([0]), simple_key=indices_key([0]))
        Adjudication.objects.create(pair=pair, value="aligned", provenance="adjudicated")
    lines = run("export", project.name, "--format", "jsonl")
    assert_progress_then_summary(lines, "export", "export #")
    assert "3 pairs" in lines[-1]


def test_train_aligner_now_shows_the_training_jobs_progress_and_a_summary(project, monkeypatch):
    """The command shows what the job reports to its row (a stand-in job: real training is slow)."""
    from annotation.services.background import progress
    from annotation.services.training import versions as training

    def start_training(target, *request, **options):
        return Job.objects.create(project=target, kind="train", params={})

    def run_training_job(job_id: int) -> None:
        assert progress.claim(Job, job_id)
        report = progress.reporter(Job, job_id, every_seconds=60)  # throttled for the row, not for the display
        for step in range(5):
            report(step / 5, f"pair model: epoch {step + 1}/5")
        version = ModelVersion.objects.create(project=project, name="v1", kind="crf", path="/nowhere",
                                              metrics={"test": {"f1": 0.5}})
        progress.succeed(Job, job_id, result={"model_version": version.pk})

    monkeypatch.setattr(training, "start_training", start_training)
    monkeypatch.setattr(training, "run_training_job", run_training_job)
    lines = run("train_aligner", project.name, "--now")
    job = Job.objects.get()
    assert_progress_then_summary(lines, f"training #{job.pk}", f"training job #{job.pk} succeeded: model version #")
    assert f"training #{job.pk}: 40% pair model: epoch 3/5" in lines


def test_on_a_terminal_it_draws_a_tqdm_bar_instead_of_lines():
    out = io.StringIO()
    display = CommandProgress(out, "import", tty=True)
    for i in range(11):
        display(i / 10, f"step {i}")
    display.close()
    text = out.getvalue()
    assert "import: 100%|" in text and "\r" in text and "step 10" in text
    assert "import: 10% step 1\n" not in text


def test_plain_lines_come_every_ten_percent_not_on_every_report():
    out = io.StringIO()
    display = CommandProgress(out, "work", tty=False)
    for i in range(1001):
        display(i / 1000, "same message")
    display.close()
    assert progress_lines(out.getvalue().splitlines(), "work") == list(range(0, 101, 10))


def test_plain_lines_stay_one_per_ten_percent_when_the_message_changes_on_every_slow_report(monkeypatch):
    """Issue 28 item 5: a training's message changes with every batch (its elapsed time, the batch
    number); a report every few seconds used to print a line each (one per 1–2 %), not every 10 %."""
    import time

    now = [0.0]

    def clock() -> float:  # every report comes 6 s after the one before
        now[0] += 6.0
        return now[0]

    out = io.StringIO()
    display = CommandProgress(out, "training", tty=False)
    with monkeypatch.context() as patched:
        patched.setattr(time, "monotonic", clock)
        for i in range(301):
            display(i / 300, f"pair model: batch {i}/300 · {i * 6} s elapsed")
    display.close()
    lines = out.getvalue().splitlines()
    assert progress_lines(lines, "training") == list(range(0, 101, 10)) and len(lines) == 11
    assert lines[3] == "training: 30% pair model: batch 90/300 · 540 s elapsed"
