from __future__ import annotations

from workers.engine.grouping import Component, connected_groups, group_links


def test_groups_sharing_a_sentence_through_a_chain_become_one_component():
    # 0→0, then 1→0 (shares simple 0), then 1→2 (shares complex 1): one component of three groups
    found = connected_groups([((0,), (0,)), ((5,), (7,)), ((1,), (0,)), ((1,), (2,))])
    assert found == [Component((0, 1), (0, 2), (0, 2, 3)), Component((5,), (7,), (1,))]


def test_a_group_with_only_one_side_still_joins_its_sentences_and_an_empty_group_joins_nothing():
    found = connected_groups([((0, 1), ()), ((0,), (3,)), ((), ()), ((), (4,))])
    assert found == [Component((), (4,), (3,)), Component((0, 1), (3,), (0, 1))]


def test_no_groups_give_no_components():
    assert connected_groups([]) == []
    assert group_links([]) == []


def test_an_incomplete_component_is_split_per_simple_sentence_and_rejoined_by_equal_complex_sets():
    # complex 0 and 1 both → simple 0; complex 1 → simple 1 only: not complete (0→1 missing)
    assert group_links([(0, 0), (1, 0), (1, 1), (1, 0)]) == [((0, 1), (0,)), ((1,), (1,))]
    # complex 2 → simple 3, 4 and complex 3 → simple 5, linked through nothing: two complete groups
    assert group_links([(2, 4), (2, 3), (3, 5)]) == [((2,), (3, 4)), ((3,), (5,))]
