"""``hf/articles/`` — the ``hf`` export's article rows (issue 28 §4): ``datasets.load_from_disk("hf/articles")``,
one row per exported document pair in ``wiki_auto``'s ``auto`` layout, so the ``hf`` import gets the
same documents, paragraphs and gold back (the pair rows hold only the sentences their pairs name).

A row (``complex`` stands where ``wiki_auto`` has ``normal``)::

    {"example_id": "Bees", "article": "Bees", "split": "train", "complete": true,
     "complex": {"complex_level": "adv", "complex_article_title": "Bees",
                 "complex_article_content": {"complex_sentence_id": ["adv-0-0", "adv-0-1", "adv-1-0"],
                                             "complex_sentence": ["S0.", "S1.", "S2."]}},
     "simple": {...},
     "sentence_alignment": {"complex_sentence_id": [["adv-0-0"], ...], "simple_sentence_id": [["ele-0-0", "ele-0-1"], ...],
                            "label": ["aligned", ...], "provenance": [...], "score": [...],
                            "attributes": ["{}", ...], "derived": [false, ...]}}

Each sentence id is ``<level>-<paragraph>-<sentence in paragraph>``; an alignment lists every
sentence of its pair (n:m) with the pair's label (scheme value), provenance, score, attributes (JSON)
and derived flag. ``complete``: the document pair is exhaustively annotated (an unlinked sentence pair
is not aligned), written also for a complete document pair without a pair. What an imported Wiki-Manual
file said of its own rows (``export/identity.py``; null otherwise): ``complex_source_ids`` /
``simple_source_ids`` (each sentence's id as the source wrote it), ``gleu`` (parallel lists ``complex``,
``simple`` sentence indices and ``value``, the GLEU cell as written) and ``row_order`` (JSON: ``"simple"``,
``"complex"`` or the ``[ci, si]`` cells in file order); the ``hf`` import keeps them, so the ``tsv`` export
of the re-imported project writes the source's rows.
"""
from __future__ import annotations

import json
from pathlib import Path

from annotation.services.export.completeness import by_document_pair
from annotation.services.export.identity import SourceIdentity, source_identity
from annotation.services.export.records import ArticleBatch, PairRecord

FOLDER = "articles"
BATCH_ROWS = 2_000


def articles_schema():
    """The Arrow schema of the article rows."""
    import pyarrow as pa

    def side(p: str):
        content = pa.struct([(f"{p}_sentence_id", pa.list_(pa.string())), (f"{p}_sentence", pa.list_(pa.string()))])
        return pa.struct([(f"{p}_level", pa.string()), (f"{p}_article_title", pa.string()),
                          (f"{p}_article_content", content)])

    ids = pa.list_(pa.list_(pa.string()))
    alignment = pa.struct([("complex_sentence_id", ids), ("simple_sentence_id", ids), ("label", pa.list_(pa.string())),
                           ("provenance", pa.list_(pa.string())), ("score", pa.list_(pa.float64())),
                           ("attributes", pa.list_(pa.string())), ("derived", pa.list_(pa.bool_()))])
    gleu = pa.struct([("complex", pa.list_(pa.int32())), ("simple", pa.list_(pa.int32())),
                      ("value", pa.list_(pa.string()))])
    return pa.schema([("example_id", pa.string()), ("article", pa.string()), ("split", pa.string()),
                      ("complete", pa.bool_()), ("complex", side("complex")), ("simple", side("simple")),
                      ("sentence_alignment", alignment), ("complex_source_ids", pa.list_(pa.string())),
                      ("simple_source_ids", pa.list_(pa.string())), ("gleu", gleu), ("row_order", pa.string())])


def _ids(document: dict) -> list[str]:
    return [f"{document['level']}-{p}-{k}" for p, sentences in enumerate(document["paragraphs"])
            for k in range(len(sentences))]


def _side(p: str, title: str, document: dict) -> dict:
    return {f"{p}_level": document["level"], f"{p}_article_title": title, f"{p}_article_content": {
        f"{p}_sentence_id": _ids(document), f"{p}_sentence": [t for para in document["paragraphs"] for t in para]}}


def article_row(batch: ArticleBatch, c_doc: int, s_doc: int, records: list[PairRecord], complete: bool,
                single: bool, identity: SourceIdentity | None = None) -> dict:
    """One document pair of ``batch`` with its pairs ``records`` (and what ``identity`` kept of the source)."""
    complex_doc, simple_doc = batch.documents[c_doc], batch.documents[s_doc]
    c_ids, s_ids = _ids(complex_doc), _ids(simple_doc)
    identity = identity or SourceIdentity(batch.title)
    gleu, order = identity.of_pair(complex_doc["level"], simple_doc["level"])
    cells = [(tuple(int(x) for x in key.split(",")), value) for key, value in gleu.items()]
    return {
        "example_id": batch.title if single else f"{batch.title} [{complex_doc['level']}→{simple_doc['level']}]",
        "article": batch.title, "split": batch.split, "complete": complete,
        "complex": _side("complex", batch.title, complex_doc), "simple": _side("simple", batch.title, simple_doc),
        "sentence_alignment": {
            "complex_sentence_id": [[c_ids[i] for i in r.complex_ids] for r in records],
            "simple_sentence_id": [[s_ids[i] for i in r.simple_ids] for r in records],
            "label": [r.label for r in records], "provenance": [r.provenance for r in records],
            "score": [r.score for r in records],
            "attributes": [json.dumps(r.features or {}, sort_keys=True) for r in records],
            "derived": [bool(r.derived) for r in records]},
        "complex_source_ids": identity.sentence_ids(c_doc, complex_doc["level"]),
        "simple_source_ids": identity.sentence_ids(s_doc, simple_doc["level"]),
        "gleu": {"complex": [c for (c, _), _ in cells], "simple": [s for (_, s), _ in cells],
                 "value": [v for _, v in cells]} if cells else None,
        "row_order": None if order is None else json.dumps(order),
    }


class ArticleRows:
    """Writes ``hf/articles/<split>/data-00000-of-00001.arrow`` (an Arrow stream per split with rows,
    in record batches) and its ``save_to_disk`` metadata."""

    def __init__(self, root: Path, complete: set[tuple[int, int]]) -> None:
        self.root = root / FOLDER
        self.complete = complete
        self.schema = articles_schema()
        self.streams: dict[str, object] = {}
        self.buffers: dict[str, list[dict]] = {}
        self.complete_written = 0

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        by_docs = by_document_pair(batch, records, self.complete)
        rank = {d: doc["rank"] for d, doc in batch.documents.items()}
        rows = self.buffers.setdefault(batch.split, [])
        identity = source_identity(batch) if by_docs else None
        self.complete_written += sum(key in self.complete for key in by_docs)
        for (c_doc, s_doc), pairs in sorted(by_docs.items(), key=lambda kv: (rank[kv[0][0]], rank[kv[0][1]])):
            rows.append(article_row(batch, c_doc, s_doc, pairs, (c_doc, s_doc) in self.complete, len(by_docs) == 1,
                                    identity))
        if len(rows) >= BATCH_ROWS:
            self._flush(batch.split)

    def _flush(self, split: str) -> None:
        import pyarrow as pa

        rows = self.buffers.get(split)
        if not rows:
            return
        if split not in self.streams:
            (self.root / split).mkdir(parents=True, exist_ok=True)
            self.streams[split] = pa.ipc.new_stream(str(self.root / split / "data-00000-of-00001.arrow"), self.schema)
        self.streams[split].write_batch(pa.RecordBatch.from_pylist(rows, schema=self.schema))
        rows.clear()

    def close(self) -> list[Path]:
        """The files written (none when no document pair was exported)."""
        paths: list[Path] = []
        for split in list(self.buffers):
            self._flush(split)
        for split, stream in self.streams.items():
            stream.close()
            paths += [self.root / split / "data-00000-of-00001.arrow",
                      *write_split_metadata(self.root / split, split, self.schema)]
        if self.streams:
            (self.root / "dataset_dict.json").write_text(json.dumps({"splits": list(self.streams)}))
            paths.append(self.root / "dataset_dict.json")
        return paths


def write_split_metadata(folder: Path, split: str, schema) -> list[Path]:
    """``dataset_info.json`` and ``state.json`` as ``Dataset.save_to_disk`` writes them (both hf folders:
    pairs and articles)."""
    import hashlib

    features = None
    try:
        from datasets import Features

        features = Features.from_arrow_schema(schema).to_dict()
    except ImportError:  # the directory still loads: datasets infers the features from the Arrow schema
        pass
    info = {"description": "alignapp export: complex→simple sentence pairs with labels, provenance and votes",
            "citation": "", "homepage": "", "license": "", "features": features, "splits": None}
    (folder / "dataset_info.json").write_text(json.dumps(info, indent=2))
    fingerprint = hashlib.sha256(f"{folder.resolve()}:{split}".encode()).hexdigest()[:16]
    state = {"_data_files": [{"filename": "data-00000-of-00001.arrow"}], "_fingerprint": fingerprint,
             "_format_columns": None, "_format_kwargs": {}, "_format_type": None, "_output_all_columns": False,
             "_split": split}
    (folder / "state.json").write_text(json.dumps(state, indent=2))
    return [folder / "dataset_info.json", folder / "state.json"]
