"""One exported pair (``export/records.py``): its texts are its sentences joined, its vote count its votes."""
from __future__ import annotations

from annotation.services.export.records import CLASSES, ArticleBatch
from tests.annotation.services.export.formats.helpers import batch, record


def test_a_pairs_texts_join_its_sentences_and_it_counts_its_votes():
    r = record([0], [0, 1], votes=[{"annotator": "a1", "value": "aligned"}, {"annotator": "a2", "value": "partial"}])
    assert r.complex == "Owls, which hunt at night, have exceptional hearing."
    assert r.simple == "Owls hunt at night. They hear very well."
    assert r.vote_count == 2 and r.level_pair == ("0", "1")
    assert record([1], [2]).vote_count == 0 and record([1], [2]).features == {}


def test_records_do_not_share_their_default_lists():
    first, second = record([0], [0]), record([1], [1])
    first.votes.append({"annotator": "a1"})
    first.features["x"] = 1.0
    assert second.votes == [] and second.features == {} and CLASSES == ("aligned", "partial", "not")
    assert isinstance(batch([first]), ArticleBatch) and batch([first]).records == [first]


def test_a_batch_flattens_each_document_once_and_a_copy_does_not_share_it():
    """Issue 37: ``ArticleBatch.flat`` gives a document's sentences in order with each one's paragraph (what
    ``completeness.sentence_fields`` reads per pair), computed once per batch; ``dataclasses.replace`` starts afresh."""
    from dataclasses import replace

    from annotation.services.export.completeness import paragraph_positions
    from tests.annotation.services.export.formats.helpers import SIMPLE

    b = batch([])
    sentences, positions = b.flat(2)
    assert sentences == SIMPLE and positions == paragraph_positions(b.documents[2]) == [0, 0, 1]
    assert b.flat(2)[0] is sentences and b.flat(99) == ([], [])  # once per batch; a document it does not hold
    other = replace(b, documents={2: {"level": "1", "rank": 1, "paragraphs": [["Other."]]}})
    assert other.flat(2) == (["Other."], [0]) and b.flat(2)[0] is sentences
