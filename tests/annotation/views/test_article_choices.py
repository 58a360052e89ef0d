"""The article filters of the run page and the my-labels page list a bounded number of titles
(``views.article_choices``) and say when there are more; a run's pairs carry their article's title."""
from __future__ import annotations

import re

import pytest

from annotation.models import AlignmentRun, Label
from annotation.views import article_choices
from tests import factories

pytestmark = pytest.mark.django_db

TITLES = ("Wasps", "Ants", "Bees")


@pytest.fixture
def run_pairs(project):
    """A run that predicts one pair in each of three articles, each labelled by anna."""
    run = AlignmentRun.objects.create(project=project, method="jaccard", status="succeeded")
    pairs = []
    for title in TITLES:
        article = factories.make_article(project, title, {"adv": [["A complex one."]], "ele": [["A simple one."]]})
        c, s = article.documents.order_by("rank")
        pairs.append(factories.make_pair(run, article=article, complex_document=c, simple_document=s, complex_key="0",
                                         simple_key="0", score=0.5, predicted_label="aligned"))
    return run, pairs


def listed(html: str) -> list[str]:
    select = html.split('<select name="article">', 1)[1].split("</select>", 1)[0]
    return re.findall(r'<option value="\d+">([^<]+)</option>', select)


@pytest.mark.parametrize("cap,expected,note", [(500, ["Ants", "Bees", "Wasps"], False), (2, ["Ants", "Bees"], True)])
def test_the_run_page_lists_the_first_articles_by_title(client, users, run_pairs, monkeypatch, cap, expected, note):
    monkeypatch.setattr(article_choices, "ARTICLE_CHOICES", cap)
    client.force_login(users["rita"])
    html = client.get(f"/runs/{run_pairs[0].pk}/").content.decode()
    assert listed(html) == expected
    assert ('id="articles-listed">the first 2 by title<' in html) is note


@pytest.mark.parametrize("cap,expected,note", [(500, ["Ants", "Bees", "Wasps"], False), (2, ["Ants", "Bees"], True)])
def test_the_my_labels_page_lists_the_first_labelled_articles(client, users, run_pairs, monkeypatch, cap, expected, note):
    for pair in run_pairs[1]:
        Label.objects.create(pair=pair, annotator=users["anna"], value="aligned")
    monkeypatch.setattr(article_choices, "ARTICLE_CHOICES", cap)
    client.force_login(users["anna"])
    html = client.get(f"/projects/{run_pairs[1][0].article.project_id}/my-labels/").content.decode()
    assert listed(html) == expected
    assert ("the first 2 by title; search finds any title" in html) is note


def test_a_runs_pairs_carry_their_articles_title(api, users, run_pairs):
    run, _ = run_pairs
    rows = api(users["rita"]).get(f"/api/pairs/?run={run.pk}").json()["results"]
    assert sorted(row["article_title"] for row in rows) == sorted(TITLES)
