"""An annotator's own links under the project's scheme (``editing.own_links``), shared by the whole-article
save and the completion of a document pair: the scheme's aligned / partial / not values, the links the
user's labels make, the save's seconds, and the question an empty completion asks."""
from __future__ import annotations

import pytest

from annotation.models import Label, LabelScheme
from annotation.services.editing import own_links
from annotation.services.editing.links import AlignmentInputError, Link
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def docs(project):
    article = factories.make_article(project, "Flood", {"adv": [["C0 a.", "C1 b.", "C2 c."]],
                                                        "int": [["S0 a.", "S1 b."]]})
    return article, *article.documents.order_by("rank")


def _label(user, article, c, s, ci, si, value):
    pair = factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key=str(ci),
                               simple_key=str(si), origin="manual")
    return Label.objects.create(pair=pair, annotator=user, value=value, source="article")


def test_the_schemes_first_value_of_each_class(project):
    assert own_links.scheme_values(project.label_scheme) == {"aligned": "aligned", "partial": "partial",
                                                             "not": "not-aligned"}
    likert = LabelScheme.objects.get(slug="likert-human-eval")
    with pytest.raises(AlignmentInputError, match="needs a categorical scheme"):
        own_links.scheme_values(likert)
    assert own_links.counts_as(likert) == {}


def test_own_links_are_the_users_labels_that_link_and_none_without_labels(project, users, docs):
    article, c, s = docs
    assert own_links.own_links(users["anna"], c, s, project.label_scheme) is None
    _label(users["anna"], article, c, s, 0, 0, "aligned")
    _label(users["anna"], article, c, s, 1, 1, "partial")
    _label(users["anna"], article, c, s, 2, 1, "not-aligned")
    _label(users["rita"], article, c, s, 2, 0, "aligned")  # someone else's
    assert own_links.own_links(users["anna"], c, s, project.label_scheme) == [Link(0, 0), Link(1, 1, "partial")]
    assert own_links.not_aligned_if_completed(users["anna"], c, s) == 3 * 2 - 2


@pytest.mark.parametrize("seconds", [-1, float("nan"), float("inf"), True, "3"])
def test_the_saves_seconds_must_be_a_non_negative_number(seconds):
    with pytest.raises(AlignmentInputError, match="'seconds' must be a non-negative number"):
        own_links.checked_seconds(seconds)


def test_an_empty_completion_names_what_it_will_store():
    asked = own_links.EmptyCompletion(6, {"imported_links": 1, "adjudicated": 2})
    assert (asked.status, asked.code) == (409, "empty")
    assert "all 6 of its sentence pairs" in str(asked) and "including the 1 imported link " in str(asked)
    assert "2 adjudicated pairs keep their gold" in str(asked)
    assert asked.payload()["not_aligned"] == 6 and asked.payload()["adjudicated"] == 2
    assert "save anyway" in str(own_links.EmptyCompletion(1, saving=True))
