"""Inputs for ``import_bench.py --layouts``: for each layout an input at the (benchmark's) limits, which
imports, and the outside probe's hostile inputs (issue 30: 3, 4, 5), which must be refused early with
the process's memory flat.

Every case is ``(name, format, builder, env)``: ``builder(folder)`` writes the input and returns its
path; ``env`` sets the import limits for the child process that imports it (the limits are lowered
from the defaults so a run takes minutes on a laptop; ``--scale`` multiplies them).
"""
from __future__ import annotations

import json
import random
import zipfile
from collections.abc import Callable
from pathlib import Path

WORDS = ("the city council voted on tuesday to approve a new budget which includes funding for schools roads "
         "parks and libraries scientists say bees communicate where flowers are by dancing in the hive").split()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize() + "."


def _text(rng: random.Random, sentences: int, per_paragraph: int = 5) -> str:
    out = []
    for start in range(0, sentences, per_paragraph):
        out.append(" ".join(_sentence(rng) for _ in range(min(per_paragraph, sentences - start))))
    return "\n\n".join(out) + "\n"


def newsela(folder: Path, articles: int, sentences: int) -> Path:
    """``articles`` Newsela articles of two versions, each version its own file of ``sentences`` sentences."""
    rng = random.Random(1)
    path = folder / f"newsela-{articles}.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        rows = ["slug,language,title,grade_level,version,filename"]
        for k in range(articles):
            for v in (0, 1):
                rows.append(f"a{k},en,Article {k},{12 - v * 7}.0,{v},a{k}.en.{v}.txt")
                zf.writestr(f"articles/a{k}.en.{v}.txt", _text(rng, sentences if v == 0 else sentences // 2 or 1))
        zf.writestr("articles_metadata.csv", "\n".join(rows) + "\n")
    return path


def newsela_one_text(folder: Path, rows: int = 400, text_bytes: int = 192_000, words: int = 0) -> Path:
    """The probe's item 5: ``rows`` metadata rows (two versions of rows/2 slugs) naming one ~192 KB text
    (``words``: sentences of that many words, so a big text stays within the sentences a document may have)."""
    rng = random.Random(5)
    text = ""
    while len(text) < text_bytes:
        text += (" ".join(" ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "." for _ in range(50))
                 + "\n\n") if words else _text(rng, 50)
    path = folder / f"newsela-one-text-{rows}.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("articles_metadata.csv", "slug,language,title,grade_level,version,filename\n" + "".join(
            f"s{k},en,Bees,{12 - v * 7}.0,{v},bees.en.0.txt\n" for k in range(rows // 2) for v in (0, 1)))
        zf.writestr("articles/bees.en.0.txt", text)
    return path


def wiki_manual(folder: Path, articles: int, rows_per_article: int = 1) -> Path:
    """``articles`` Wiki-Manual articles of ``rows_per_article`` rows (one row each: the probe's item 4)."""
    rng = random.Random(4)
    path = folder / f"wiki-{articles}x{rows_per_article}.tsv"
    with path.open("w", encoding="utf-8") as fh:
        for k in range(articles):
            for r in range(rows_per_article):
                fh.write(f"aligned\t{k}-0-0-{r}\t{k}-1-0-{r}\t{_sentence(rng)}\t{_sentence(rng)}\t0.5\n")
    return path


def _pairs_table(rows: int, complex_text: Callable[[int], str]):
    import pyarrow as pa

    rng = random.Random(3)
    return pa.table({"complex": [complex_text(k) for k in range(rows)], "simple": [_sentence(rng) for _ in range(rows)],
                     "label": ["aligned"] * rows})


def parquet_pairs(folder: Path, rows: int) -> Path:
    """A pair dataset of ``rows`` rows (complex, simple, label), snappy as ``datasets`` writes it."""
    import pyarrow.parquet as pq

    rng = random.Random(2)
    path = folder / f"pairs-{rows}.parquet"
    pq.write_table(_pairs_table(rows, lambda k: _sentence(rng)), path)
    return path


def _bomb_batches(rows: int, chars: int, dictionary: bool):
    """``rows`` one-row record batches whose complex text is one ``chars``-character string (the same
    object each time: building the input takes one copy of it, not ``rows``)."""
    import pyarrow as pa

    text = pa.array(["Bees " + "b" * chars + "."])
    complex_ = pa.DictionaryArray.from_arrays(pa.array([0], pa.int32()), text) if dictionary else text
    batch = pa.record_batch([complex_, pa.array(["Bees fly."]), pa.array(["aligned"])], ["complex", "simple", "label"])
    return batch.schema, [batch] * rows


def parquet_bomb(folder: Path, rows: int = 200, chars: int = 2_500_000, dictionary: bool = True) -> Path:
    """The probe's item 3: ``rows`` rows of one ``chars``-character string, zstd (a few KB): dictionary-encoded
    (one row group: the value stored once) or plain (a row group a row)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / f"bomb-{rows}x{chars}{'' if dictionary else '-plain'}.parquet"
    schema, batches = _bomb_batches(rows, chars, dictionary)
    with pq.ParquetWriter(path, schema, compression="zstd", use_dictionary=dictionary) as writer:
        if dictionary:
            writer.write_table(pa.Table.from_batches(batches))
        else:
            for batch in batches:
                writer.write_batch(batch)
    return path


def arrow_pairs(folder: Path, rows: int) -> Path:
    """A ``save_to_disk``-style Arrow stream of ``rows`` pair rows in batches of 1,000."""
    import pyarrow as pa

    rng = random.Random(6)
    table = _pairs_table(rows, lambda k: _sentence(rng))
    split = folder / f"arrow-{rows}" / "train"
    split.mkdir(parents=True, exist_ok=True)
    with pa.ipc.new_stream(split / "data-00000-of-00001.arrow", table.schema) as writer:
        for batch in table.to_batches(max_chunksize=1000):
            writer.write_batch(batch)
    return split.parent


def arrow_bomb(folder: Path, rows: int = 200, chars: int = 2_500_000) -> Path:
    """``rows`` zstd record batches of one row of a ``chars``-character string (a few KB)."""
    import pyarrow as pa

    split = folder / f"arrow-bomb-{rows}x{chars}" / "train"
    split.mkdir(parents=True, exist_ok=True)
    schema, batches = _bomb_batches(rows, chars, False)
    with pa.ipc.new_stream(split / "data-00000-of-00001.arrow", schema,
                           options=pa.ipc.IpcWriteOptions(compression="zstd")) as writer:
        for batch in batches:
            writer.write_batch(batch)
    return split.parent


def articles_bomb(folder: Path, sentences: int = 2_000_000) -> Path:
    """Issue 36 item 8: one hf/articles row of ``sentences`` short sentences a side (the same id and text
    repeated: a zstd parquet of a few KB)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def side(p: str, level: str) -> dict:
        return {f"{p}_level": level, f"{p}_article_content": {f"{p}_sentence_id": [f"{level}-0-0"] * sentences,
                                                              f"{p}_sentence": ["Bees."] * sentences}}
    row = {"article": "Bees", "complex": side("complex", "adv"), "simple": side("simple", "ele"),
           "sentence_alignment": {"complex_sentence_id": [["adv-0-0"]], "simple_sentence_id": [["ele-0-0"]],
                                  "label": ["aligned"]}}
    path = folder / f"articles-bomb-{sentences}.parquet"
    pq.write_table(pa.Table.from_pylist([row]), path, compression="zstd")
    return path


def export_rows_bomb(folder: Path, rows: int = 1_500_000) -> Path:
    """Issue 36 item 9: ``rows`` rows of the older hf export layout (pair rows, one article), zstd."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"article": pa.array(["Bees"] * rows), "complex_level": pa.array(["adv"] * rows),
                      "simple_level": pa.array(["ele"] * rows), "complex_ids": pa.array([[0]] * rows),
                      "simple_ids": pa.array([[0]] * rows), "complex": pa.array(["Bees fly far."] * rows),
                      "simple": pa.array(["Bees fly."] * rows), "label": pa.array(["aligned"] * rows)})
    path = folder / f"export-rows-{rows}.parquet"
    pq.write_table(table, path, compression="zstd")
    return path


def jsonl(folder: Path, lines: int, sentences: int = 4) -> Path:
    rng = random.Random(7)
    path = folder / f"corpus-{lines}.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i in range(lines):
            fh.write(json.dumps({"id": f"a{i}", "complex": {"paragraphs": [[_sentence(rng) for _ in range(sentences)]]},
                                 "simple": {"paragraphs": [[_sentence(rng), _sentence(rng)]]}, "gold": [[0, 0]]}) + "\n")
    return path


def cases(scale: float = 1.0) -> list[tuple[str, str, Callable[[Path], Path], dict[str, str]]]:
    """The benchmark's cases; the limits (env) and inputs at them grow with ``scale``."""
    n = max(1, int(scale * 1000))
    limits = {"IMPORT_MAX_SENTENCES": str(50 * n), "IMPORT_MAX_ARTICLES": str(10 * n),
              "IMPORT_MAX_BYTES": str(20_000 * n)}
    real = {"IMPORT_MAX_BYTES": str(200 * 1024 * 1024)}  # the default, as the probe met it
    return [
        ("newsela at the limits", "newsela", lambda d: newsela(d, 2 * n, 12), limits),
        ("newsela: 400 rows naming one 192 KB text (item 5)", "newsela", lambda d: newsela_one_text(d), limits),
        ("wiki-manual at the limits", "wiki-manual", lambda d: wiki_manual(d, 10 * n), limits),
        ("wiki-manual: 37 x the article limit of one-row articles (item 4)", "wiki-manual",
         lambda d: wiki_manual(d, 370 * n), {**limits, **real, "MAX_UPLOAD_BYTES": str(200 * 1024 * 1024)}),
        ("hf parquet at the limits", "hf", lambda d: parquet_pairs(d, 25 * n), limits),
        ("hf parquet: 200 rows x 2.5 MB zstd, dictionary (item 3)", "hf", lambda d: parquet_bomb(d), real),
        ("hf parquet: 200 rows x 2.5 MB zstd, plain", "hf", lambda d: parquet_bomb(d, dictionary=False), real),
        ("hf arrow at the limits", "hf", lambda d: arrow_pairs(d, 25 * n), limits),
        ("hf arrow: 200 rows x 2.5 MB zstd", "hf", lambda d: arrow_bomb(d), real),
        ("jsonl at the limits", "jsonl", lambda d: jsonl(d, 8 * n), limits),
        # issue 36 items 8-10, at the default limits as the probe met them
        ("hf/articles: one row of 2 M sentences a side, zstd (issue 36 item 8)", "hf", lambda d: articles_bomb(d), {}),
        ("hf export pair rows: 1.5 M rows, zstd (issue 36 item 9)", "hf", lambda d: export_rows_bomb(d), {}),
        ("newsela: 400 rows naming one 1 MB text of 4,000 sentences (issue 36 item 10)", "newsela",
         lambda d: newsela_one_text(d, 400, 1_000_000, words=40), {}),
    ]


def describe(path: Path) -> int:
    """The input's size on disk, in bytes."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size
