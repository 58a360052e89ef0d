"""Each exported pair carries the split/fusion/n:m group derived from the links (issue 18); the
released TSV layout stays exactly six columns, one row per link."""
from __future__ import annotations

from annotation.services.export.grouping import assign_groups
from annotation.services.export.records import PairRecord
from tests.annotation.services.export.helpers import all_pairs, jsonl, run


def record(c, s, klass, *, c_doc=1, s_doc=2) -> PairRecord:
    return PairRecord(pair_id=None, article_id=1, article="A", split="train", complex_level="0", simple_level="1",
                      complex_rank=0, simple_rank=1, complex_document=c_doc, simple_document=s_doc,
                      complex_ids=tuple(c), simple_ids=tuple(s), complex_sentences=[], simple_sentences=[],
                      label=klass, counts_as=klass, provenance="single")


def test_groups_are_the_connected_links_of_each_document_pair_and_a_1to1_not_aligned_removes_its_link():
    rows = [record([0], [0], "partial"), record([0], [1], "aligned"), record([1, 2], [2], "partial"),
            record([2], [2], "not"), record([3], [3], "aligned-or-partial"), record([0], [0], "aligned", s_doc=9)]
    assign_groups(rows)
    split, piece, rest, removed, unknown, other = (r.group for r in rows)
    assert split == piece == {"id": "g1-2-1", "kind": "split", "complex": [0], "simple": [0, 1], "label": "mixed"}
    assert rest == {"id": "g1-2-2", "kind": "1:1", "complex": [1], "simple": [2], "label": "partial"}  # C2→S2 removed
    assert removed is None  # "not aligned" links nothing
    assert unknown["kind"] == "1:1" and unknown["label"] == "aligned-or-partial"
    assert other["id"] == "g1-9-1"


def test_jsonl_and_articles_show_each_pairs_group_and_the_tsv_keeps_one_six_column_row_per_link(newsela, settings, tmp_path):
    _, root = run(newsela["project"], settings, tmp_path, derived=False, label_policy="majority",
                  formats=["jsonl", "articles", "tsv"])
    kinds = {(r["article"], r["complex_level"], tuple(r["complex_ids"]), tuple(r["simple_ids"])):
             r["group"] and r["group"]["kind"] for r in all_pairs(root)}
    assert kinds[("Bees", "0", (1,), (1,))] == kinds[("Bees", "0", (2,), (1,))] == "fusion"  # partial + aligned
    assert kinds[("Bees", "0", (1,), (0,))] is None and kinds[("Bees", "1", (0,), (0,))] == "1:1"
    assert kinds[("Owls", "0", (0,), (0, 1))] == "split"
    lines = [line for split in ("train", "dev", "test") for line in jsonl(root / "articles" / f"{split}.jsonl")]
    owls = next(line for line in lines if line["article"] == "Owls")
    # the identical O1→P2 link stays in the gold files (issue 27 §3): a 1:1 group of its own
    assert [(g["kind"], g["complex"], g["simple"]) for g in owls["groups"]] == [("split", [0], [0, 1]), ("1:1", [1], [2])]
    assert {p["group"] for p in owls["pairs"]} == {g["id"] for g in owls["groups"]}
    rows = [line.split("\t") for path in (root / "wiki-manual").glob("*.tsv")  # splits with rows only
            for line in path.read_text().splitlines()]
    assert rows and all(len(row) == 6 for row in rows)
    assert sum(1 for row in rows if row[2].startswith("Owls-0-0-0")) == 2  # the split: one row per link


def _groups_by_definition(records) -> list[dict | None]:
    """Each record's group as assign_groups gave it before issue 37: ``group_of`` the links, numbered by value."""
    from annotation.services.editing.links import expand, group_of, groups, links_from
    from annotation.services.export.grouping import LINKING

    out = {}
    by_docs: dict = {}
    for r in records:
        by_docs.setdefault((r.complex_document, r.simple_document), []).append(r)
    for (c_doc, s_doc), rows in by_docs.items():
        links = links_from(((r.complex_ids, r.simple_ids, r.counts_as) for r in rows), linking=LINKING)
        number = {g: n for n, g in enumerate(groups(links), start=1)}
        found = group_of(links)
        for r in rows:
            group = None if r.counts_as not in LINKING else next(
                (found[link.key] for link in expand(r.complex_ids, r.simple_ids, r.counts_as) if link.key in found), None)
            out[id(r)] = None if group is None else {"id": f"g{c_doc}-{s_doc}-{number[group]}", "kind": group.kind,
                                                     "complex": list(group.complex), "simple": list(group.simple),
                                                     "label": group.label}
    return [out[id(r)] for r in records]


def test_groups_found_once_per_document_pair_equal_the_definition_on_random_links():
    """Issue 37: each document pair's groups are found and described once; every record's group equals the one
    ``group_of`` and numbering by value gave (1:1, n:m, not, unknown-kind links over three document pairs), and
    records of one group do not share one dict."""
    import random

    rng = random.Random(37)
    for _ in range(200):
        rows = []
        for _ in range(rng.randint(1, 25)):
            c = rng.sample(range(5), rng.choice((1, 1, 1, 2)))
            s = rng.sample(range(4), rng.choice((1, 1, 1, 2)))
            rows.append(record(c, s, rng.choice(("aligned", "partial", "not", "aligned-or-partial")),
                               s_doc=rng.choice((2, 2, 3)), c_doc=rng.choice((1, 1, 4))))
        expected = _groups_by_definition(rows)
        assign_groups(rows)
        assert [r.group for r in rows] == expected
        groups = [r.group for r in rows if r.group]
        assert len({id(g) for g in groups}) == len(groups) and len({id(g["complex"]) for g in groups}) == len(groups)
