"""Parsed articles between validation and writing (``importing.spool``): read back in order, as many as
were added, from memory or, once large, from a file in the import's folder."""
from __future__ import annotations

from annotation.services.corpus.importing import spool
from annotation.services.corpus.importing.base import ParsedArticle


def test_articles_come_back_in_order_and_can_be_read_twice(tmp_path):
    store = spool.Spool(tmp_path)
    for title in ("Bees", "Owls", "Cats"):
        store.add(ParsedArticle(title=title, file="a.jsonl", line=1, documents=[]))
    assert store.count == 3
    assert [a.title for a in store] == ["Bees", "Owls", "Cats"]
    assert [a.title for a in store] == ["Bees", "Owls", "Cats"]  # a second pass rereads from the start
    store.close()


def test_a_large_spool_goes_to_a_file_in_the_given_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(spool, "SPOOL_MEMORY", 10)
    store = spool.Spool(tmp_path)
    store.add(ParsedArticle(title="x" * 100, file="a.jsonl", line=1, documents=[]))
    assert store.file._rolled and [a.title for a in store] == ["x" * 100]
    store.close()
