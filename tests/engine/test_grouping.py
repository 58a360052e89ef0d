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


def test_connected_groups_equal_the_components_a_search_of_the_graph_finds():
    """Issue 37: the union-find gives what a plain graph search gives (sorted components, members ascending)."""
    import random

    from workers.engine.grouping import Component, connected_groups

    def by_search(groups):
        groups = [(list(c), list(s)) for c, s in groups]
        seen: set[int] = set()
        out = []
        for start, (c, s) in enumerate(groups):
            if start in seen or not (c or s):
                continue
            members, todo, nodes = set(), [start], set()
            while todo:
                k = todo.pop()
                if k in members:
                    continue
                members.add(k)
                nodes |= {(0, i) for i in groups[k][0]} | {(1, j) for j in groups[k][1]}
                todo += [m for m, (c2, s2) in enumerate(groups) if m not in members
                         and nodes & ({(0, i) for i in c2} | {(1, j) for j in s2})]
            seen |= members
            out.append(Component(tuple(sorted({i for side, i in nodes if side == 0})),
                                 tuple(sorted({j for side, j in nodes if side == 1})), tuple(sorted(members))))
        return sorted(out)

    rng = random.Random(37)
    for _ in range(500):
        groups = [(rng.sample(range(8), rng.randint(0, 3)), rng.sample(range(8), rng.randint(0, 3)))
                  for _ in range(rng.randint(0, 12))]
        assert connected_groups(groups) == by_search(groups), groups
