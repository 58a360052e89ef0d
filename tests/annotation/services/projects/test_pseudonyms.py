"""How the app names people where names are off (``projects.pseudonyms``): ``a<id>``, and a project's user
names replaced by it in notes, as whole words only."""
from __future__ import annotations

import pytest

from annotation.models import Label
from annotation.services.projects import pseudonyms
from tests import factories


def test_a_pseudonym_is_the_user_id_after_an_a():
    assert pseudonyms.pseudonym(3) == "a3"


def test_whole_user_names_are_replaced_and_longer_names_first():
    scrub = pseudonyms.name_scrubber({"ann": 1, "anna": 2, "bob.s": 3})
    assert scrub("anna and ann agreed; bob.s did not") == "a2 and a1 agreed; a3 did not"
    assert scrub("annabel, joanna, bob.smith, ann@x") == "annabel, joanna, bob.smith, ann@x"  # not whole names
    assert scrub("") == "" and pseudonyms.name_scrubber({})("anna") == "anna"
    assert pseudonyms.scrub_names("accepted A (anna)", {"anna": 3}) == "accepted A (a3)"


@pytest.mark.django_db
def test_a_projects_names_are_its_members_voters_and_reviewers(project, users):
    article = factories.make_article(project, "Bees", {"adv": [["Bees die."]], "int": [["Bees die."]]})
    c, s = article.documents.order_by("rank")
    pair = factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key="0",
                               simple_key="0", origin="manual")
    Label.objects.create(pair=pair, annotator=users["olga"], value="aligned")  # a voter, no longer a member
    names = pseudonyms.project_user_ids(project)
    assert set(names) == {"rita", "anna", "olga"} and names["anna"] == users["anna"].pk
