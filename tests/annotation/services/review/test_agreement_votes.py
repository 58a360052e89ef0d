"""The votes agreement reads (``review/agreement_votes.py``): counted labels plus each completion's implied "not"
on every cell its completer left unlabelled (issue 34 §3), read without a list of every labelled pair and held
compactly at a million votes (issue 37)."""
from __future__ import annotations

import pytest

from annotation.models import Label, indices_key
from annotation.services.review import agreement_votes, gold_reading
from tests import factories
from tests.annotation.services.review.test_gold_reading import complete

pytestmark = pytest.mark.django_db


def test_a_completion_implies_not_on_every_cell_its_completer_left_unlabelled(bees):
    """Bees is 3 × 3 sentences: anna links (0, 0) and completes; bob labels (1, 1) without completing. anna's
    rows: her link, an implied "not" on bob's pair (an item with a pair id), and on the 7 cells with no pair (items
    named by document pair and cell); bob's row is his label only. Each username is one string object however many
    rows hold it (issue 37: a new string per row held hundreds of MB at a million votes)."""
    complete(bees, bees["anna"], [(0, 0, "aligned")])
    pair = factories.make_pair(article=bees["article"], complex_document=bees["c"], simple_document=bees["s"],
                               complex_key=indices_key([1]), simple_key=indices_key([1]))
    Label.objects.create(pair=pair, annotator=bees["bob"], value="aligned", source="queue")
    rows, no = agreement_votes.vote_rows(bees["project"]), gold_reading.not_value(bees["project"])
    anna = [r for r in rows if r[1] == "anna"]
    assert [r for r in rows if r[1] == "bob"] == [(pair.pk, "bob", "aligned", {})]
    assert (pair.pk, "anna", no, None) in anna and len(anna) == 9
    c, s = bees["c"].pk, bees["s"].pk
    named = {r[0] for r in anna if isinstance(r[0], str)}
    assert named == {f"c{c}-s{s}:{ci},{si}" for ci in range(3) for si in range(3)} - {f"c{c}-s{s}:0,0",
                                                                                       f"c{c}-s{s}:1,1"}
    assert len({id(r[1]) for r in anna}) == 1 and len({id(r[2]) for r in anna if r[2] == no}) == 1


def test_the_votes_completions_imply_are_read_without_a_list_of_every_labelled_pair(bees):
    """Issue 37: agreement's implied nots read the completed document pairs' sentence pairs by document; the
    old reading sent the id of every labelled pair of the project (an IN list of 100,000 ids at 1M pairs)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    complete(bees, bees["anna"], [(0, 0, "aligned")])
    other = factories.make_article(bees["project"], "Owls", {"adv": [[f"Owls {i}." for i in range(6)]],
                                                             "int": [[f"Owl {i}." for i in range(6)]]})
    c, s = other.documents.order_by("rank")
    made = iter(range(36))

    def sql_text(labelled: int) -> int:
        for i in (next(made) for _ in range(labelled)):
            pair = factories.make_pair(article=other, complex_document=c, simple_document=s,
                                       complex_key=indices_key([i // 6]), simple_key=indices_key([i % 6]))
            Label.objects.create(pair=pair, annotator=bees["bob"], value="aligned", source="article")
        with CaptureQueriesContext(connection) as queries:
            rows = agreement_votes.vote_rows(bees["project"])
        assert sum(1 for r in rows if r[1] == "bob") == Label.objects.filter(annotator=bees["bob"]).count()
        return sum(len(q["sql"]) for q in queries.captured_queries)

    assert sql_text(2) == sql_text(30)  # more labelled pairs elsewhere: the same statements
