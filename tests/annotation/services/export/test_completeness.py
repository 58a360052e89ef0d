"""Complete document pairs found among an article's documents (``export.completeness``)."""
from __future__ import annotations

import random

from annotation.services.export.completeness import DocumentPairs, among, by_document_pair
from annotation.services.export.records import ArticleBatch


def test_an_indexed_set_finds_the_same_pairs_as_a_scan_of_the_set():
    """Issue 37: the writers look up an article's complete document pairs by its documents, not by scanning
    the project's set per article; the pairs found are the scan's."""
    rng = random.Random(37)
    pairs = {(rng.randrange(60), rng.randrange(60)) for _ in range(300)}
    indexed = DocumentPairs(pairs)
    assert indexed == pairs
    for _ in range(200):
        documents = {d: {} for d in rng.sample(range(60), rng.randint(0, 8))}
        assert sorted(among(indexed, documents)) == sorted(among(pairs, documents)) == sorted(
            (c, s) for c, s in pairs if c in documents and s in documents)


def test_a_complete_document_pair_without_records_gets_an_empty_group():
    batch = ArticleBatch(article_id=1, title="Owls", split="train", documents={1: {}, 2: {}, 3: {}}, records=[])
    assert by_document_pair(batch, [], DocumentPairs({(1, 2), (1, 9), (3, 2)})) == {(1, 2): [], (3, 2): []}
    assert not DocumentPairs() and among(DocumentPairs(), batch.documents) == []
