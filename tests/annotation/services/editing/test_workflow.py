"""An annotator's articles as to do / in progress / complete (``editing/workflow.py``): read from their own labels
and completions only, filtered by state, and paged with only the page's articles annotated."""
from __future__ import annotations

import pytest

from annotation.models import Article
from annotation.services.editing import article_alignment as aa
from annotation.services.editing import completion as ac
from annotation.services.editing import workflow
from tests import factories

pytestmark = pytest.mark.django_db

COMPLEX = [["C0 the river flooded the town.", "C1 residents left their homes."], ["C2 rain fell for days.", "C3 roads closed."]]
SIMPLE = [["S0 the river flooded the town.", "S1 people left."], ["S2 it rained and roads closed."]]


@pytest.fixture
def article(project, users):
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    return factories.make_article(project, "Flood", {"adv": COMPLEX, "int": SIMPLE})


@pytest.fixture
def docs(article):
    return aa.resolve_documents(article, None, None)


def test_an_annotators_articles_are_to_do_in_progress_or_complete(project, article, docs, users):
    anna = users["anna"]
    other = factories.make_article(project, "Quiet", {"adv": [["Q0."]], "int": [["q0."]]})
    third = factories.make_article(project, "Third", {"adv": [["T0."]], "int": [["t0."]]})
    articles = Article.objects.filter(project=project)
    assert workflow.state_counts(articles, anna) == {"todo": 3, "in_progress": 0, "complete": 0, "all": 3}

    aa.save_links(anna, article, *docs, None, [{"complex": 0, "simple": 0}])
    ac.mark_complete(anna, third, *aa.resolve_documents(third, None, None), allow_empty=True)  # complete with no link
    states = {a.title: (a.work_state, a.labels) for a in workflow.my_articles(articles, anna)}
    assert states == {"Flood": ("in_progress", 1), "Quiet": ("todo", 0), "Third": ("complete", 0)}

    ac.mark_complete(anna, article, *docs)
    assert workflow.state_counts(articles, anna) == {"todo": 1, "in_progress": 0, "complete": 2, "all": 3}
    assert [a.title for a in workflow.my_articles(articles, anna, "todo")] == [other.title]
    # someone else's work does not count as anna's
    assert workflow.state_counts(articles, users["rita"])["todo"] == 3
    with pytest.raises(workflow.WorkflowError):
        workflow.my_articles(articles, anna, "done")


def test_an_article_with_a_completed_document_pair_and_open_labels_in_another_is_in_progress(project, users):
    anna = users["anna"]
    three = factories.make_article(project, "Levels", {"adv": [["A0."]], "int": [["I0."]], "ele": [["E0."]]})
    adv, int_, ele = three.documents.order_by("rank")
    aa.save_links(anna, three, adv, int_, None, [{"complex": 0, "simple": 0}])
    ac.mark_complete(anna, three, adv, int_)
    assert workflow.state_counts(Article.objects.all(), anna)["complete"] == 1
    aa.save_links(anna, three, int_, ele, None, [{"complex": 0, "simple": 0}])
    (row,) = workflow.my_articles(Article.objects.all(), anna)
    assert (row.work_state, row.labels, row.completed_pairs) == ("in_progress", 2, 1)
    assert workflow.article_row(row) == {"id": three.pk, "title": "Levels", "state": "in_progress",
                                         "state_name": "In progress", "labels": 2, "completed_pairs": 1}


def test_a_page_holds_only_its_articles_in_title_order_with_their_states(project, users, article, docs):
    anna = users["anna"]
    for title in ("Bees", "Owls", "Ants"):
        factories.make_article(project, title, {"adv": [["x."]], "int": [["y."]]})
    aa.save_links(anna, article, *docs, None, [{"complex": 0, "simple": 0}])
    articles = Article.objects.filter(project=project)
    first = workflow.articles_page(articles, anna, None, 1, 3)
    assert [a.title for a in first.object_list] == ["Ants", "Bees", "Flood"] and first.paginator.count == 4
    assert first.object_list[2].work_state == "in_progress" and first.object_list[2].labels == 1
    assert [a.title for a in workflow.articles_page(articles, anna, None, "x", 3).object_list] == ["Ants", "Bees", "Flood"]
    assert [a.title for a in workflow.articles_page(articles, anna, None, 9, 3).object_list] == ["Owls"]  # past the end
    todo = workflow.articles_page(articles, anna, "todo", 1, 10)
    assert [a.title for a in todo.object_list] == ["Ants", "Bees", "Owls"]
    assert [a.title for a in workflow.articles_page(articles, anna, "in_progress", 1, 10).object_list] == ["Flood"]
    with pytest.raises(workflow.WorkflowError, match="state must be one of todo, in_progress, complete, got 'done'"):
        workflow.articles_page(articles, anna, "done", 1, 10)


def test_no_state_means_every_article():
    assert workflow.check_state(None) is None and workflow.check_state("") is None
    assert workflow.check_state("complete") == "complete"
