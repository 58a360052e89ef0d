"""``manage.py import_corpus``."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Article, AuditEvent, Document, Project, Sentence
from tests import factories

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[3] / "annotation" / "fixtures" / "demo_corpus"


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_corpus", *args, stdout=out, stderr=err)
    summary = "".join(line for line in out.getvalue().splitlines(keepends=True)
                      if not line.startswith("import: "))  # the progress lines are tested in test_progress.py
    return summary, err.getvalue()


def test_it_imports_a_folder_and_prints_a_one_line_summary(project):
    out, err = run("Newsela sample", str(DEMO))
    sentences = Sentence.objects.filter(document__article__project=project).count()
    assert out == f"imported 4 articles, 12 documents, {sentences} sentences, 0 pairs (levels) into 'Newsela sample'\n"
    assert err == ""
    assert project.articles.count() == 4


def test_it_finds_the_project_by_id(project):
    run(str(project.pk), str(DEMO), "--format", "levels")
    assert project.articles.count() == 4


def test_it_creates_the_project_when_asked(users, tmp_path):
    (tmp_path / "a.jsonl").write_text(json.dumps(
        {"id": "a", "complex": {"text": "Die Mauer fiel am 9. November 1989. Danach war alles anders."},
         "simple": {"paragraphs": [["Die Mauer fiel."]]}, "gold": [[0, 0]]}) + "\n")
    out, _ = run("Neu", str(tmp_path), "--create", "--language", "de")
    project = Project.objects.get(name="Neu")
    assert (project.language, project.label_scheme.slug) == ("de", "aligned-partial-not")
    assert out == ("imported 1 articles, 2 documents, 3 sentences, 1 pairs (jsonl) into 'Neu'\n"
                   "gold: 1 links as sparse gold (Task 1 only: 1 without a kind), 0 articles complete, 0 test questions\n")


def parallel_files(folder: Path) -> str:
    (folder / "x.src").write_text("A long sentence.\n")
    (folder / "x.dst").write_text("A short one.\n")
    return str(folder)


def test_the_project_it_creates_has_the_researcher_it_names(users, tmp_path, api):
    """Issue 28 item 5: the researcher who ran ``--create`` got 404 until an admin added them."""
    out, err = run("Mine", parallel_files(tmp_path), "--create", "--researcher", "rita")
    project = Project.objects.get(name="Mine")
    assert list(project.memberships.values_list("user__username", "role")) == [("rita", "researcher")]
    assert out.endswith("researcher of the new project: rita\n") and err == ""
    assert api(users["rita"]).get(f"/api/projects/{project.pk}/").status_code == 200
    assert AuditEvent.objects.get(action="project.create").details["researcher"] == "rita"


def test_with_one_researcher_account_the_project_it_creates_is_theirs(tmp_path):
    factories.make_user("root", staff=True)  # admins see every project anyway: not counted
    factories.make_user("rosa", researcher=True)
    factories.make_user("ann")
    run("Solo", parallel_files(tmp_path), "--create")
    assert list(Project.objects.get(name="Solo").memberships.values_list("user__username", "role")) == [("rosa", "researcher")]


def test_with_several_researchers_and_none_named_it_says_nobody_is_a_member(users, tmp_path):
    _, err = run("Shared", parallel_files(tmp_path), "--create")
    assert not Project.objects.get(name="Shared").memberships.exists()
    assert "has no members" in err and "--researcher USERNAME" in err


def test_an_unknown_researcher_creates_nothing(users, tmp_path):
    with pytest.raises(CommandError, match="no active account named 'nobody'"):
        run("Ghost", parallel_files(tmp_path), "--create", "--researcher", "nobody")
    assert not Project.objects.filter(name="Ghost").exists() and not AuditEvent.objects.exists()


def test_it_refuses_an_unknown_project_without_create(users):
    with pytest.raises(CommandError, match="no project named 'Nope'; pass --create"):
        run("Nope", str(DEMO))
    assert not Project.objects.filter(name="Nope").exists()


def test_it_prints_every_problem_and_fails_without_writing(project, tmp_path):
    (tmp_path / "x.src").write_text("a\n\nc\n")
    (tmp_path / "x.dst").write_text("a\nb\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match=r"nothing imported: 2 problem\(s\)"):
        call_command("import_corpus", "Newsela sample", str(tmp_path), stdout=io.StringIO(), stderr=err)
    assert err.getvalue().splitlines() == [
        "x.src:2: empty line at line 2 of x.src; every line must hold a sentence",
        "x.src: x.src has 3 lines but x.dst has 2; line-aligned files need the same number of lines",
    ]
    assert Article.objects.count() == 0 and Document.objects.count() == 0


def test_a_failed_import_does_not_leave_a_created_project_behind(users, tmp_path):
    (tmp_path / "Lonely-adv.txt").write_text("Alone.")
    with pytest.raises(CommandError):
        run("Fresh", str(tmp_path), "--create")
    assert not Project.objects.filter(name="Fresh").exists()


def test_existing_articles_are_an_error_unless_skipped(project):
    run("Newsela sample", str(DEMO))
    with pytest.raises(CommandError):
        run("Newsela sample", str(DEMO))
    out, err = run("Newsela sample", str(DEMO), "--on-conflict", "skip")
    assert out == "imported 0 articles, 0 documents, 0 sentences, 0 pairs (levels) into 'Newsela sample'\n"
    assert err.startswith("warning: skipped 4 article(s) already in project 'Newsela sample'")
    assert project.articles.count() == 4


def test_the_refusal_of_articles_already_there_names_the_option_that_skips_them(project):
    """Issue 28 item 5: re-importing said "skip existing articles" but not how."""
    run("Newsela sample", str(DEMO))
    err = io.StringIO()
    with pytest.raises(CommandError, match=r"nothing imported: 4 problem\(s\)"):
        call_command("import_corpus", "Newsela sample", str(DEMO), stdout=io.StringIO(), stderr=err)
    lines = err.getvalue().splitlines()
    assert "--on-conflict skip" in lines[0] and "Skip articles already in the project" in lines[0]
    assert all("already exists in project 'Newsela sample'" in line for line in lines)


def test_a_project_it_creates_is_in_the_audit_log_before_the_import(users, tmp_path):
    (tmp_path / "x.src").write_text("A long sentence.\n")
    (tmp_path / "x.dst").write_text("A short one.\n")
    run("Audited", str(tmp_path), "--create", "--language", "de")
    project = Project.objects.get(name="Audited")
    events = list(AuditEvent.objects.filter(project=project).order_by("created_at", "id"))
    assert [e.action for e in events] == ["project.create", "import"]
    created = events[0]
    assert (created.actor, created.target) == (None, "Audited")
    assert created.details == {"via": "command", "language": "de", "label_scheme": "aligned-partial-not"}


def test_importing_into_an_existing_project_records_no_creation(project):
    run("Newsela sample", str(DEMO))
    assert not AuditEvent.objects.filter(action="project.create").exists()


def test_a_refused_import_leaves_neither_the_project_nor_its_creation_event(users, tmp_path):
    (tmp_path / "Lonely-adv.txt").write_text("Alone.")
    with pytest.raises(CommandError):
        run("Fresh", str(tmp_path), "--create")
    assert not Project.objects.filter(name="Fresh").exists()
    assert not AuditEvent.objects.filter(action="project.create").exists()
