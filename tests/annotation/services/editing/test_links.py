"""The per-link model (``editing.links``): links and the groups they make, labels read as links (1:1 pairs
decide, n:m pairs spread, aligned wins), what changed between two alignments, the labels' version and the
links a client sends, every problem listed."""
from __future__ import annotations

import pytest

from annotation.models import Label
from annotation.services.editing.links import (
    AlignmentInputError,
    Link,
    diff,
    expand,
    group_of,
    groups,
    links_from,
    parse_links,
    version,
)
from tests import factories


def test_groups_are_the_connected_links_with_their_kind_and_label():
    found = groups([Link(0, 0), Link(0, 1, "partial"), Link(2, 3), Link(4, 5), Link(5, 5), Link(6, 6), Link(6, 7),
                    Link(7, 6)])
    assert [(g.complex, g.simple, g.kind, g.label) for g in found] == [
        ((0,), (0, 1), "split", "mixed"), ((2,), (3,), "1:1", "aligned"), ((4, 5), (5,), "fusion", "aligned"),
        ((6, 7), (6, 7), "n:m", "aligned")]
    assert group_of([Link(0, 0), Link(0, 1)])[(0, 1)].kind == "split"
    assert found[1].as_dict()["links"] == [{"complex": [2], "simple": [3], "label": "aligned"}]


def test_labels_read_as_links_one_to_one_pairs_decide_and_aligned_wins_among_n_to_m():
    rows = [([0], [0, 1], "partial"), ([0, 1], [1], "aligned"), ([0], [1], None), ([2], [2], "not"),
            ([3], [3], "partial")]
    # C0→S1: partial then aligned from n:m pairs (aligned wins), but its own 1:1 pair says no link
    assert links_from(rows) == [Link(0, 0, "partial"), Link(1, 1, "aligned"), Link(3, 3, "partial")]
    assert links_from([([4], [4, 5], "partial"), ([4, 6], [5], "aligned")]) == [
        Link(4, 4, "partial"), Link(4, 5, "aligned"), Link(6, 5, "aligned")]  # aligned wins among n:m pairs
    assert links_from([([0], [0], "aligned-or-partial")], linking=("aligned-or-partial",)) == [
        Link(0, 0, "aligned-or-partial")]
    assert expand([1, 0, 1], [2], "partial") == [Link(0, 2, "partial"), Link(1, 2, "partial")]


def test_the_diff_lists_added_removed_and_relabelled_links():
    assert diff([Link(0, 0), Link(1, 1), Link(2, 2)], [Link(0, 0, "partial"), Link(2, 2), Link(3, 3)]) == {
        "added": [{"complex": [3], "simple": [3], "label": "aligned"}],
        "removed": [{"complex": [1], "simple": [1], "label": "aligned"}],
        "relabelled": [{"complex": [0], "simple": [0], "from": "aligned", "to": "partial"}]}


def test_a_client_s_links_are_parsed_with_every_problem_listed():
    assert parse_links([{"complex": 0, "simple": [0, 1], "label": "partial"}, {"complex": [2], "simple": 1}], 3, 2) \
        == [Link(0, 0, "partial"), Link(0, 1, "partial"), Link(2, 1)]
    with pytest.raises(AlignmentInputError) as refused:
        parse_links([{"complex": 5, "simple": 0}, {"complex": [True], "simple": 0}, "x",
                     {"complex": 0, "simple": 0, "label": "maybe"}, {"complex": 1, "simple": 0, "label": "partial"},
                     {"complex": 1, "simple": [0], "label": "aligned"}], 3, 2)
    assert refused.value.messages == [
        "link 1: complex sentence 5 is out of range (the complex document has 3 sentences, 0–2)",
        "link 2: complex sentence True is not an integer index",
        "link 3: must be an object with 'complex', 'simple' and label",
        "link 4: label 'maybe' is not one of: aligned, partial",
        "link 6: link C1 → S0 is given twice, as partial and as aligned"]
    with pytest.raises(AlignmentInputError, match="no 'partial' value"):
        parse_links([{"complex": 0, "simple": 0, "label": "partial"}], 1, 1, has_partial=False)
    assert parse_links(None, 1, 1, name="removed", labelled=False) == []


@pytest.mark.django_db
def test_the_version_changes_with_every_write_of_the_users_labels(project, users):
    article = factories.make_article(project, "Bees", {"adv": [["A."]], "int": [["B."]]})
    c, s = article.documents.order_by("rank")
    empty = version(users["anna"], c, s)
    pair = factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key="0",
                               simple_key="0", origin="manual")
    label = Label.objects.create(pair=pair, annotator=users["anna"], value="aligned")
    labelled = version(users["anna"], c, s)
    label.value = "partial"
    label.save()
    assert len({empty, labelled, version(users["anna"], c, s)}) == 3
    assert version(users["rita"], c, s) == empty  # another annotator's labels are not hers
