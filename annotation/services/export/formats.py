"""Export writers. Each writes per split, incrementally, one article batch at a time.

``tsv`` — ``wiki-manual/<split>.tsv``: the released Wiki-Manual/Newsela-Manual layout, no header,
  tab-separated ``label, simple-sent-id, complex-sent-id, simple, complex, GLEU``. Labels are
  written as those files name them (``aligned``, ``partialAligned``, ``notAligned``, from the
  label's class); an n:m pair becomes one row per sentence link (c × s), each with the pair's label,
  as the released data lists multi-sentence alignments. Sentence ids are
  ``<article>-<level>-<paragraph>-<sentence index in the document>``. GLEU: ``metrics.gleu``.
``parallel`` — ``parallel/<split>.src`` / ``.dst``: one pair per line (complex → simple), pairs
  whose label counts as aligned or partial; ``<split>.joined.src`` / ``.dst``: per complex
  sentence group, every simple sentence aligned to it joined in document order (splits kept whole).
``jsonl`` — ``jsonl/<split>.jsonl``: one pair per line with everything: ids, levels, texts, label,
  class, provenance, reviewer, every counted vote, score, predicted label, all stored attributes,
  origin, run, derived flag and sources.
``articles`` — ``articles/<split>.jsonl``: the engine/importer format (SPEC §4), one line per
  article document pair: both documents' paragraphs, ``gold`` 1:1 links with ``gold_labels``
  (aligned/partial, for readers of the SPEC §4 format), and ``pairs`` with the full n:m pairs:
  label, class, provenance, votes, score, attributes, derived flag. Re-importing it with the JSONL
  importer reproduces every pair (n:m, any label) with its score and attributes (see
  ``__init__``'s round-trip note).
``hf`` — ``hf/``: a ``datasets.load_from_disk`` directory (Arrow IPC stream per split, written in
  record batches) and ``parquet/<split>.parquet`` (``datasets.load_dataset("parquet", data_files=…)``).
  Every vote carries its annotator (pseudonymous), value, seconds and comment; ``note`` is the
  adjudication note; each attribute is its own typed column ``attr_<key>`` (float64, bool or string).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from annotation.services.export.metrics import gleu_of, profile
from annotation.services.export.records import ArticleBatch, PairRecord

WIKI_LABELS = {"aligned": "aligned", "partial": "partialAligned", "not": "notAligned"}
LINKING = ("aligned", "partial")


_BREAK = re.compile("[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def _clean(text: str) -> str:
    """One line without tabs (what a line- or tab-separated file can hold)."""
    return " ".join(text.split()) if _BREAK.search(text) else text


class Writer:
    """Base: lazily opened text files per split; ``close()`` returns the written paths."""

    folder = ""

    def __init__(self, root: Path, splits: list[str]) -> None:
        self.root = root / self.folder
        self.splits = splits
        self.files: dict[str, object] = {}

    def _file(self, name: str):
        handle = self.files.get(name)
        if handle is None:
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = self.files[name] = open(path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 - closed in close()
        return handle

    def open(self) -> None:
        for split in self.splits:
            for name in self.names(split):
                self._file(name)

    def names(self, split: str) -> list[str]:
        return []

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        raise NotImplementedError

    def close(self) -> list[Path]:
        paths = []
        for name, handle in self.files.items():
            handle.close()
            paths.append(self.root / name)
        return paths


class TsvWriter(Writer):
    folder = "wiki-manual"

    def names(self, split: str) -> list[str]:
        return [f"{split}.tsv"]

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        out = self._file(f"{batch.split}.tsv")
        paragraph_of: dict[int, list[int]] = {}
        for doc in {d for r in records for d in (r.complex_document, r.simple_document)}:
            paragraph_of[doc] = _paragraph_index(batch.documents[doc])
        profiles: dict[str, tuple] = {}  # sentences recur across an article's pairs: n-grams counted once

        def profiled(text: str) -> tuple:
            found = profiles.get(text)
            if found is None:
                found = profiles[text] = profile(text)
            return found

        lines = []
        for r in records:
            c_par, s_par = paragraph_of[r.complex_document], paragraph_of[r.simple_document]
            label = WIKI_LABELS.get(r.counts_as, "notAligned")
            for ci, c_text in zip(r.complex_ids, r.complex_sentences):
                c_id = f"{batch.title}-{r.complex_level}-{c_par[ci] if ci < len(c_par) else 0}-{ci}"
                c_clean = _clean(c_text)
                for si, s_text in zip(r.simple_ids, r.simple_sentences):
                    s_id = f"{batch.title}-{r.simple_level}-{s_par[si] if si < len(s_par) else 0}-{si}"
                    s_clean = _clean(s_text)
                    score = gleu_of(profiled(c_clean), profiled(s_clean))
                    lines.append(f"{label}\t{_clean(s_id)}\t{_clean(c_id)}\t{s_clean}\t{c_clean}\t{score:.4f}\n")
        out.writelines(lines)


def _paragraph_index(document: dict) -> list[int]:
    """Sentence index → paragraph index of one document."""
    return [p for p, sentences in enumerate(document["paragraphs"]) for _ in sentences]


class ParallelWriter(Writer):
    folder = "parallel"

    def names(self, split: str) -> list[str]:
        return [f"{split}.src", f"{split}.dst", f"{split}.joined.src", f"{split}.joined.dst"]

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        linking = [r for r in records if r.counts_as in LINKING]
        if not linking:
            return
        src, dst = self._file(f"{batch.split}.src"), self._file(f"{batch.split}.dst")
        src.writelines(f"{_clean(r.complex)}\n" for r in linking)
        dst.writelines(f"{_clean(r.simple)}\n" for r in linking)
        # joined: every simple sentence aligned to the same complex sentence group, in document order
        groups: dict[tuple, dict[int, str]] = {}
        complex_text: dict[tuple, str] = {}
        for r in linking:
            key = (r.complex_document, r.simple_document, r.complex_ids)
            groups.setdefault(key, {}).update(zip(r.simple_ids, r.simple_sentences))
            complex_text[key] = r.complex
        joined_src, joined_dst = self._file(f"{batch.split}.joined.src"), self._file(f"{batch.split}.joined.dst")
        for key in sorted(groups, key=lambda k: (k[0], k[1], k[2])):
            simple = groups[key]
            joined_src.write(_clean(complex_text[key]) + "\n")
            joined_dst.write(_clean(" ".join(simple[i] for i in sorted(simple))) + "\n")


def pair_dict(r: PairRecord) -> dict:
    """Everything known about one exported pair (the JSONL line and the HF row's source)."""
    return {
        "id": f"p{r.pair_id}" if r.pair_id is not None else "d" + "-".join(map(str, r.derived_from)),
        "pair": r.pair_id,
        "split": r.split,
        "article": r.article,
        "complex_level": r.complex_level,
        "simple_level": r.simple_level,
        "complex_ids": list(r.complex_ids),
        "simple_ids": list(r.simple_ids),
        "complex": r.complex,
        "simple": r.simple,
        "label": r.label,
        "class": r.counts_as,
        "provenance": r.provenance,
        "vote_count": r.vote_count,
        "votes": r.votes,
        "reviewer": r.reviewer,
        "note": r.note,
        "score": r.score,
        "predicted_label": r.predicted_label,
        "attributes": r.features,
        "origin": r.origin,
        "run": r.run,
        "derived": r.derived,
        "derived_from": r.derived_from,
    }


class JsonlWriter(Writer):
    folder = "jsonl"

    def names(self, split: str) -> list[str]:
        return [f"{split}.jsonl"]

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        dumps = json.dumps
        self._file(f"{batch.split}.jsonl").writelines(dumps(pair_dict(r), ensure_ascii=False) + "\n" for r in records)


class ArticlesWriter(Writer):
    """Engine/importer JSONL, one line per (article, complex document, simple document)."""

    folder = "articles"

    def names(self, split: str) -> list[str]:
        return [f"{split}.jsonl"]

    def write(self, batch: ArticleBatch, records: list[PairRecord]) -> None:
        by_docs: dict[tuple[int, int], list[PairRecord]] = {}
        for r in records:
            by_docs.setdefault((r.complex_document, r.simple_document), []).append(r)
        out = self._file(f"{batch.split}.jsonl")
        single = len(by_docs) == 1
        for (c_doc, s_doc), group in sorted(by_docs.items(), key=lambda kv: (batch.documents[kv[0][0]]["rank"],
                                                                             batch.documents[kv[0][1]]["rank"])):
            complex_doc, simple_doc = batch.documents[c_doc], batch.documents[s_doc]
            links: dict[tuple[int, int], str] = {}
            for r in group:
                if r.counts_as not in LINKING:
                    continue
                for ci in r.complex_ids:
                    for si in r.simple_ids:
                        # a link in an aligned pair beats the same link in a partial one
                        if links.get((ci, si)) != "aligned":
                            links[(ci, si)] = r.counts_as
            ordered = sorted(links)
            line = {
                "id": batch.title if single else f"{batch.title} [{complex_doc['level']}→{simple_doc['level']}]",
                "article": batch.title,
                "split": batch.split,
                "complex": {"level": complex_doc["level"], "paragraphs": complex_doc["paragraphs"]},
                "simple": {"level": simple_doc["level"], "paragraphs": simple_doc["paragraphs"]},
                "gold": [list(link) for link in ordered],
                "gold_labels": [links[link] for link in ordered],
                "pairs": [{"complex": list(r.complex_ids), "simple": list(r.simple_ids), "label": r.label,
                           "class": r.counts_as, "provenance": r.provenance, "votes": r.votes, "score": r.score,
                           "attributes": r.features, "derived": r.derived} for r in group],
            }
            out.write(json.dumps(line, ensure_ascii=False) + "\n")


class HfWriter(Writer):
    """Arrow IPC streams for ``datasets.load_from_disk`` plus parquet, in record batches."""

    folder = "hf"
    BATCH_ROWS = 20_000

    def __init__(self, root: Path, splits: list[str], attributes: dict[str, str] | None = None) -> None:
        super().__init__(root, splits)
        self.attributes = dict(attributes or {})  # attribute key → Arrow type: one typed column each
        self.parquet_root = root / "parquet"
        self.buffers: dict[str, dict[str, list]] = {}
        self.streams: dict[str, object] = {}
        self.parquets: dict[str, object] = {}
        self.rows: dict[str, int] = {}
        self._schema = None

    @property
    def schema(self):
        if self._schema is None:
            self._schema = hf_schema(self.attributes)
        return self._schema

    def open(self) -> None:
        for split in self.splits:
            self._writers(split)

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
        if not records:
            return
        self._writers(batch.split)
        buf = self.buffers[batch.split]
        dumps = json.dumps
        for r in records:
            row = pair_dict(r)
            features = r.features or {}
            for key, kind in self.attributes.items():
                row[ATTRIBUTE_PREFIX + key] = _typed(features.get(key), kind, dumps)
            row["votes"] = [{"annotator": v["annotator"], "value": v["value"], "seconds": v.get("seconds"),
                             "comment": v.get("comment", "")} for v in r.votes]
            for name, column in buf.items():
                column.append(row[name])
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

    def close(self) -> list[Path]:
        paths = []
        for split in list(self.streams):
            self._flush(split)
            self.streams[split].close()
            self.parquets[split].close()
            paths += [self.root / split / "data-00000-of-00001.arrow", self.parquet_root / f"{split}.parquet"]
            paths += _write_split_metadata(self.root / split, split, self.schema)
        if self.streams:
            (self.root / "dataset_dict.json").write_text(json.dumps({"splits": list(self.streams)}))
            paths.append(self.root / "dataset_dict.json")
        return paths


ATTRIBUTE_PREFIX = "attr_"
"""HF/parquet columns of the pairs' attributes are ``attr_<key>``, typed (float64, bool or string)."""


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
    adjudication note, and one typed ``attr_<key>`` column per attribute."""
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
        ("derived_from", pa.list_(pa.int64())),
        *((ATTRIBUTE_PREFIX + key, arrow[kind]) for key, kind in (attributes or {}).items()),
    ])


def _write_split_metadata(folder: Path, split: str, schema) -> list[Path]:
    """``dataset_info.json`` and ``state.json`` as ``Dataset.save_to_disk`` writes them."""
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


WRITERS: dict[str, type[Writer]] = {
    "tsv": TsvWriter, "parallel": ParallelWriter, "jsonl": JsonlWriter, "articles": ArticlesWriter, "hf": HfWriter,
}
