"""``hf`` — ``hf/``: a ``datasets.load_from_disk`` directory (Arrow IPC stream per split, written in
  record batches) and ``parquet/<split>.parquet`` (``datasets.load_dataset("parquet", data_files=…)``).
  Every vote carries its annotator (pseudonymous), value, seconds and comment; ``note`` is the
  adjudication note; each attribute is its own typed column ``attr_<key>`` (float64, bool or string);
  ``complete``, ``complex_sentences`` / ``simple_sentences`` and ``complex_paragraphs`` /
  ``simple_paragraphs`` as in the jsonl format (``export/completeness.py``), so the ``hf`` import gets the
  same sentences, paragraphs and completeness back. ``hf/articles/`` holds a row per document pair with
  the whole documents (``export/hf_articles.py``): the ``hf`` import of the ``hf`` folder reads those,
  so it gets the same documents, paragraphs and gold back.
"""
from __future__ import annotations

import json
from pathlib import Path

from annotation.services.export.completeness import complete_documents, pair_fields
from annotation.services.export.formats import register
from annotation.services.export.formats.base import Writer, pair_dict
from annotation.services.export.hf_articles import ArticleRows, write_split_metadata
from annotation.services.export.records import ArticleBatch, PairRecord
from annotation.services.export.source import attribute_types

REIMPORT_MEANING = (
    'hf/articles rows say it (complete true = exhaustive, whole documents), as articles; the pair rows '
    'beside them are left out on import'
)
"""What this format's gold means once imported back (the manifest's ``reimport``, README.txt)."""


@register("hf", reimport="hf", reimport_meaning=REIMPORT_MEANING, order=50, readme=(
    'hf/                  datasets.load_from_disk("hf")\n'
    'parquet/*.parquet    datasets.load_dataset("parquet", data_files={"train": "parquet/train.parquet", ...})\n'
    '                     (name only splits with pairs: datasets refuses an empty parquet split)\n'
    'hf/articles/         datasets.load_from_disk("hf/articles"): a row per document pair, whole documents with\n'
    '                     sentence ids and the pairs as sentence_alignment (wiki_auto "auto" layout)'
))
class HfWriter(Writer):
    """Arrow IPC streams for ``datasets.load_from_disk`` plus parquet, in record batches."""

    folder = "hf"
    BATCH_ROWS = 20_000

    def __init__(self, root: Path, splits: list[str], attributes: dict[str, str] | None = None,
                 complete: set[tuple[int, int]] | None = None) -> None:
        super().__init__(root, splits)
        self.complete = complete or set()  # (complex document, simple document) exhaustively annotated
        self.attributes = dict(attributes or {})  # attribute key → Arrow type: one typed column each
        self.parquet_root = root / "parquet"
        self.buffers: dict[str, dict[str, list]] = {}
        self.streams: dict[str, object] = {}
        self.parquets: dict[str, object] = {}
        self.rows: dict[str, int] = {}
        self._schema = None
        self.articles = ArticleRows(self.root, self.complete)  # hf/articles: whole documents, wiki_auto "auto" layout

    @classmethod
    def for_export(cls, root: Path, splits: list[str], project, options) -> HfWriter:
        """One typed ``attr_<key>`` column per attribute the exported pairs can carry."""
        return cls(root, splits, attribute_types(project, derived=options.derived), complete_documents(project, options))

    @property
    def schema(self):
        if self._schema is None:
            self._schema = hf_schema(self.attributes)
        return self._schema

    def open(self) -> None:
        """Nothing up front: a split's Arrow and parquet files are created with its first rows (no empty split)."""

    def _writers(self, split: str):
        if split not in self.streams:
            import pyarrow as pa
            import pyarrow.parquet as pq

            (self.root / split).mkdir(parents=True, exist_ok=True)
            self.parquet_root.mkdir(parents=True, exist_ok=True)
            self.streams[split] = pa.ipc.new_stream(str(self.root / split / "data-00000-of-00001.arrow"), self.schema)
            self.parquets[split] = pq.ParquetWriter(str(self.parquet_root / f"{split}.parquet"), self.schema)
            self.buffers[split] = {name: [] for name in self.schema.names}
            self.rows[split] = 0
        return self.streams[split], self.parquets[split]

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        self.articles.write(batch, records)
        if not records:
            return
        self._writers(batch.split)
        buf = self.buffers[batch.split]
        for name, values in columns(batch, records, self.complete, self.attributes).items():
            buf[name].extend(values)
        if len(buf["id"]) >= self.BATCH_ROWS:
            self._flush(batch.split)

    def _flush(self, split: str) -> None:
        import pyarrow as pa

        buf = self.buffers[split]
        if not buf["id"]:
            return
        record_batch = pa.RecordBatch.from_pydict(buf, schema=self.schema)
        stream, parquet = self._writers(split)
        stream.write_batch(record_batch)
        parquet.write_batch(record_batch)
        self.rows[split] += record_batch.num_rows
        for column in buf.values():
            column.clear()

    def complete_back(self) -> tuple[int, int]:
        """The import reads hf/articles (whole documents): every complete document pair comes back complete."""
        return self.articles.complete_written, self.articles.complete_written

    def close(self) -> list[Path]:
        paths = []
        for split in list(self.streams):
            self._flush(split)
            self.streams[split].close()
            self.parquets[split].close()
            paths += [self.root / split / "data-00000-of-00001.arrow", self.parquet_root / f"{split}.parquet"]
            paths += write_split_metadata(self.root / split, split, self.schema)
        if self.streams:
            (self.root / "dataset_dict.json").write_text(json.dumps({"splits": list(self.streams)}))
            paths.append(self.root / "dataset_dict.json")
        return paths + self.articles.close()


ATTRIBUTE_PREFIX = "attr_"
"""HF/parquet columns of the pairs' attributes are ``attr_<key>``, typed (float64, bool or string)."""


def row(batch: ArticleBatch, r: PairRecord, complete: set[tuple[int, int]], attributes: dict[str, str]) -> dict:
    """One pair's HF row, by its definition: :func:`pair_dict` and :func:`pair_fields`, the typed attributes,
    the group's id and kind, the votes. :func:`columns` builds the same values a column at a time."""
    out = {**pair_dict(r), **pair_fields(batch, r, complete)}
    features = r.features or {}
    for key, kind in attributes.items():
        out[ATTRIBUTE_PREFIX + key] = _typed(features.get(key), kind, json.dumps)
    out["group_id"], out["group_kind"] = (r.group["id"], r.group["kind"]) if r.group else (None, None)
    out["votes"] = [{"annotator": v["annotator"], "value": v["value"], "seconds": v.get("seconds"),
                     "comment": v.get("comment", "")} for v in r.votes]
    return out


def columns(batch: ArticleBatch, records: list[PairRecord], complete: set[tuple[int, int]],
            attributes: dict[str, str]) -> dict[str, list]:
    """The HF columns (:func:`hf_schema`'s names) of an article's records: each the list of its :func:`row`
    values, built a column at a time (issue 37: a dict per pair, then a list append per column and pair, cost
    a third of a million-pair ``hf`` export)."""
    flat = batch.flat
    sides = [(flat(r.complex_document), flat(r.simple_document)) for r in records]
    out: dict[str, list] = {
        "id": [f"p{r.pair_id}" if r.pair_id is not None else "d" + "-".join(map(str, r.derived_from)) for r in records],
        "pair": [r.pair_id for r in records],
        "split": [r.split for r in records],
        "article": [r.article for r in records],
        "complex_level": [r.complex_level for r in records],
        "simple_level": [r.simple_level for r in records],
        "complex_ids": [list(r.complex_ids) for r in records],
        "simple_ids": [list(r.simple_ids) for r in records],
        "complex": [" ".join(r.complex_sentences) for r in records],
        "simple": [" ".join(r.simple_sentences) for r in records],
        "label": [r.label for r in records],
        "class": [r.counts_as for r in records],
        "provenance": [r.provenance for r in records],
        "vote_count": [len(r.votes) for r in records],
        "votes": [[{"annotator": v["annotator"], "value": v["value"], "seconds": v.get("seconds"),
                    "comment": v.get("comment", "")} for v in r.votes] for r in records],
        "reviewer": [r.reviewer for r in records],
        "note": [r.note for r in records],
        "score": [r.score for r in records],
        "predicted_label": [r.predicted_label for r in records],
        "origin": [r.origin for r in records],
        "run": [r.run for r in records],
        "derived": [r.derived for r in records],
        "derived_from": [r.derived_from for r in records],
        "group_id": [r.group["id"] if r.group else None for r in records],
        "group_kind": [r.group["kind"] if r.group else None for r in records],
        "complete": [(r.complex_document, r.simple_document) in complete for r in records],
        "complex_sentences": [[c[0][i] for i in r.complex_ids if i < len(c[0])] for r, (c, _) in zip(records, sides)],
        "simple_sentences": [[s[0][i] for i in r.simple_ids if i < len(s[0])] for r, (_, s) in zip(records, sides)],
        "complex_paragraphs": [[c[1][i] if i < len(c[0]) else 0 for i in r.complex_ids]
                               for r, (c, _) in zip(records, sides)],
        "simple_paragraphs": [[s[1][i] if i < len(s[0]) else 0 for i in r.simple_ids] for r, (_, s) in zip(records, sides)],
        "complex_sentence_count": [len(c[0]) or None for c, _ in sides],
        "simple_sentence_count": [len(s[0]) or None for _, s in sides],
    }
    dumps = json.dumps
    for key, kind in attributes.items():
        out[ATTRIBUTE_PREFIX + key] = [_typed((r.features or {}).get(key), kind, dumps) for r in records]
    return out


def _typed(value, kind: str, dumps):
    if value is None:
        return None
    if kind == "float64":
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind == "bool":
        return value if isinstance(value, bool) else None
    return value if isinstance(value, str) else dumps(value, ensure_ascii=False, sort_keys=True)


def hf_schema(attributes: dict[str, str] | None = None):
    """The HF/parquet columns: the pair, its label and votes (each with seconds and comment), the
    adjudication note, the derived group (``group_id``, ``group_kind``: 1:1/split/fusion/n:m) and one
    typed ``attr_<key>`` column per attribute."""
    import pyarrow as pa

    vote = pa.struct([("annotator", pa.string()), ("value", pa.string()), ("seconds", pa.float64()),
                      ("comment", pa.string())])
    arrow = {"float64": pa.float64(), "bool": pa.bool_(), "string": pa.string()}
    return pa.schema([
        ("id", pa.string()), ("pair", pa.int64()), ("split", pa.string()), ("article", pa.string()),
        ("complex_level", pa.string()), ("simple_level", pa.string()),
        ("complex_ids", pa.list_(pa.int32())), ("simple_ids", pa.list_(pa.int32())),
        ("complex", pa.string()), ("simple", pa.string()), ("label", pa.string()), ("class", pa.string()),
        ("provenance", pa.string()), ("vote_count", pa.int32()), ("votes", pa.list_(vote)),
        ("reviewer", pa.string()), ("note", pa.string()), ("score", pa.float64()), ("predicted_label", pa.string()),
        ("origin", pa.string()), ("run", pa.int64()), ("derived", pa.bool_()),
        ("derived_from", pa.list_(pa.int64())), ("group_id", pa.string()), ("group_kind", pa.string()),
        ("complete", pa.bool_()), ("complex_sentences", pa.list_(pa.string())), ("simple_sentences", pa.list_(pa.string())),
        ("complex_paragraphs", pa.list_(pa.int32())), ("simple_paragraphs", pa.list_(pa.int32())),
        ("complex_sentence_count", pa.int32()), ("simple_sentence_count", pa.int32()),
        *((ATTRIBUTE_PREFIX + key, arrow[kind]) for key, kind in (attributes or {}).items()),
    ])
