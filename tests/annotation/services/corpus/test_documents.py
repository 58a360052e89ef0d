"""Stored documents read back: the engine's input, the views' payload and a pair's texts."""
from __future__ import annotations

import pytest

from annotation.models import CandidatePair, Document, Paragraph
from annotation.services.alignment.run_saving import link_sentences
from annotation.services.corpus import documents
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def article(project):
    return factories.make_article(project, "Owls", {
        "0": [["Owls hunt at night.", "They hear well."], ["They live everywhere."]],
        "1": [["Owls hunt.", "They hear.", "They live anywhere."]],
    })


def test_the_engine_input_is_the_documents_paragraphs_of_sentences_in_order_with_their_level(article):
    complex_doc, simple_doc = article.documents.order_by("rank")
    pair = documents.engine_pair(complex_doc, simple_doc)
    assert pair.id == f"{complex_doc.pk}-{simple_doc.pk}"
    assert pair.complex.paragraphs == (("Owls hunt at night.", "They hear well."), ("They live everywhere.",))
    assert pair.simple.paragraphs == (("Owls hunt.", "They hear.", "They live anywhere."),)
    assert (pair.complex.level, pair.simple.level) == ("0", "1")
    by_id = documents.engine_pair(complex_doc.pk, simple_doc.pk, id="a:1-2", gold=((0, 0),), gold_labels=("aligned",))
    assert (by_id.id, by_id.complex, by_id.gold, by_id.gold_labels) == ("a:1-2", pair.complex, ((0, 0),), ("aligned",))


def test_the_view_payload_numbers_paragraphs_and_sentences_as_stored(article):
    complex_doc = article.documents.get(level="0")
    payload = documents.document_payload(complex_doc)
    assert payload == {"id": complex_doc.pk, "level": "0", "sentence_count": 3, "paragraphs": [
        {"index": 0, "sentences": [{"index": 0, "text": "Owls hunt at night."}, {"index": 1, "text": "They hear well."}]},
        {"index": 1, "sentences": [{"index": 2, "text": "They live everywhere."}]}]}


def test_a_document_without_sentences_reads_as_empty_and_streaming_gives_one_document_at_a_time(project, article):
    empty = Document.objects.create(article=article, level="2", rank=2)
    Paragraph.objects.create(document=empty, index=0)
    read = documents.document_sentences([empty.pk, *article.documents.exclude(pk=empty.pk).values_list("pk", flat=True)])
    assert read[empty.pk] == [] and documents.engine_document(empty).paragraphs == ()
    streamed = list(documents.stream_sentences(document__article=article))
    assert [(d, [s.text for s in rows]) for d, rows in streamed] == [
        (d, [s.text for s in read[d]]) for d in sorted(read) if read[d]]


def test_a_pairs_texts_join_its_sentences_in_document_order(article):
    complex_doc, simple_doc = article.documents.order_by("rank")
    pair = CandidatePair.objects.create(article=article, complex_document=complex_doc, simple_document=simple_doc,
                                        complex_key="0,2", simple_key="0")
    link_sentences([pair])
    assert documents.pair_sentences([pair.pk]) == {pair.pk: (["Owls hunt at night.", "They live everywhere."], ["Owls hunt."])}
    assert documents.pair_texts([pair.pk]) == {pair.pk: ("Owls hunt at night. They live everywhere.", "Owls hunt.")}
    assert documents.sentence_texts([simple_doc.pk]) == {simple_doc.pk: {0: "Owls hunt.", 1: "They hear.", 2: "They live anywhere."}}
