"""``hf`` — a Hugging Face dataset: a ``save_to_disk`` directory (``*.arrow`` beside ``state.json``,
``dataset_info.json``, ``dataset_dict.json``) or ``*.parquet`` files (a folder, zip or tar). The
layouts, in the order they are looked for (details in ``importing.hf_layouts``):

* **article rows** — ``wiki_auto``'s ``auto`` configuration (``normal`` / ``simple`` articles with
  their sentence ids, ``sentence_alignment``) and alignapp's own ``hf/articles`` (the same with
  ``complex`` and a label per alignment): whole documents with their paragraphs, the alignments as
  pairs. When an upload holds article rows beside pair rows (an ``hf`` export folder), the article
  rows are read and the pair rows left out (warned).
* **alignapp's own ``hf`` pair rows** (columns ``article``, ``complex_level``, ``simple_level``,
  ``complex_ids``, ``simple_ids``, ``complex``, ``simple``, ``label``) read back as its articles,
  a document per level holding the sentences the pairs name (in sentence order; one paragraph: the
  export keeps no paragraphs, so the documents are partial, warned), and its pairs with their labels
  as imported gold (sparse). A multi-sentence side's sentences come from the 1:1 rows, else from the
  project's splitter. An export that has the ``complex_sentences`` column (and ``complete``, the
  paragraph columns, ``split``, ``provenance``, ``score``, ``attr_*``) is read row by row as the
  ``jsonl`` format's pair lines (``importing.pair_lines``): the same sentences, paragraphs, values (``undecided``
  included), scores, attributes, split and completeness.
* **a pair dataset** with two text columns: ``--columns complex,simple[,label]`` (API ``columns``),
  else the first of the usual names found (complex/simple, normal_sentence/simple_sentence,
  complex_sentence/simple_sentence, src/dst, source/target, normal/simple, original/simplification,
  sentence1/sentence2) and label column (label, alignment_label, labels, class, gold). A label
  column that is a ``ClassLabel`` is read through its names. **With sentence-id columns** beside
  the texts (``normal_sentence_id`` / ``simple_sentence_id``: ``wiki_auto``'s ``manual``
  configuration; ``complex_id`` / ``simple_id``) the rows are read as ``wiki-manual`` rows: ids
  ``article-level-paragraph-sentence`` give the articles, documents and paragraphs, one sentence per
  distinct id, m × n listed = exhaustive gold. **Without ids** rows are kept as given (never
  re-split), as the ``parallel`` format keeps lines: one article per split file (in blocks of
  ``IMPORT_MAX_SENTENCES_PER_DOCUMENT`` rows) with a ``complex`` and a ``simple`` document, a
  sentence per row, and a pair per row; the label column (a class, a scheme value, a Wiki-Manual
  label or 1/0) is imported gold.

When a folder holds a split both as ``.arrow`` and as ``.parquet`` (the export writes both), the
Arrow files are read and the parquet ones left out (warned). Uses ``pyarrow``, a row group or record
batch at a time, counting what the files decode to against ``IMPORT_MAX_BYTES`` (``dataset_files``).
"""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator

from annotation.label_schemes import UNKNOWN_KIND
from annotation.services.corpus.importing.base import InputFile, ParseContext, ParsedArticle, ParsedDocument, ParsedPair
from annotation.services.corpus.importing.dataset_files import batches as _batches
from annotation.services.corpus.importing.dataset_files import check_sizes
from annotation.services.corpus.importing.dataset_files import has_rows as _has_rows
from annotation.services.corpus.importing.dataset_files import rows as _rows
from annotation.services.corpus.importing.dataset_files import schema as _schema
from annotation.services.corpus.importing.formats import register
from annotation.services.corpus.importing.formats.wiki_manual import check_rows, rank_levels
from annotation.services.corpus.importing.hf_layouts import (
    ArticleRows,
    article_prefix,
    class_names,
    decode,
    id_columns,
    id_pair_articles,
)
from annotation.services.corpus.importing.pair_lines import PairLines

EXTENSIONS = ("arrow", "parquet")
METADATA = ("dataset_dict.json", "dataset_info.json", "state.json")
EXPORT_COLUMNS = ("article", "complex_level", "simple_level", "complex_ids", "simple_ids", "complex", "simple")
USUAL = (("complex", "simple"), ("normal_sentence", "simple_sentence"), ("complex_sentence", "simple_sentence"),
         ("src", "dst"), ("source", "target"), ("normal", "simple"), ("original", "simplification"),
         ("sentence1", "sentence2"))
LABEL_COLUMNS = ("label", "alignment_label", "labels", "class", "gold")
CLASSES = {"aligned": "aligned", "partial": "partial", "not": "not", "partialaligned": "partial",
           "notaligned": "not", "not-aligned": "not", "1": "aligned", "0": "not", "true": "aligned", "false": "not",
           UNKNOWN_KIND: UNKNOWN_KIND}


def is_hf(names: list[str]) -> bool:
    """``auto``: Arrow/parquet files or a ``save_to_disk`` directory's metadata."""
    return any(n.rsplit(".", 1)[-1].lower() in EXTENSIONS or n.rsplit("/", 1)[-1] in METADATA[:1] for n in names)


def _columns(f: InputFile, ctx: ParseContext) -> list[str]:
    """The column names of a file."""
    schema = _schema(f, ctx)
    return list(schema.names) if schema is not None else []


def _class_names(files: list[InputFile], ctx: ParseContext):
    """``f → {column: ClassLabel names}`` (the file's schema metadata, else its folder's ``dataset_info.json``)."""
    infos = {f.name.rsplit("/", 1)[0] if "/" in f.name else "": f for f in files if f.basename == METADATA[1]}

    def names_of(f: InputFile) -> dict[str, list[str]]:
        info, parsed = infos.get(f.name.rsplit("/", 1)[0] if "/" in f.name else ""), None
        if info is not None:
            try:
                with info.open() as fh:
                    parsed = json.load(fh)
            except (OSError, ValueError):
                parsed = None
        return class_names(_schema(f, ctx), parsed)
    return names_of


class _Labels:
    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self.first: dict[str, str] = {}
        for value, klass in ctx.scheme_values.items():
            self.first.setdefault(klass or "not", value)

    def __call__(self, value, file: str, line: int, field_name: str,
                 names: list[str] | None = None) -> tuple[str | None, str | None] | None:
        """``(class, scheme value)``; ``(None, None)`` for no label; None after reporting it. An integer
        of a ClassLabel column is read through its ``names``."""
        value, problem = decode(value, names)
        if problem:
            self.ctx.problems.add(file, problem, line=line, field=field_name)
            return None
        if value is None or str(value).strip() == "":
            return None, None
        text = str(value).strip()
        values = self.ctx.scheme_values
        klass = values.get(text) or CLASSES.get(text.casefold())
        if klass is None or not values:
            scheme = f" {self.ctx.scheme!r}" if self.ctx.scheme else ""
            self.ctx.problems.add(file, f"label {text!r} is no value of the project's label scheme{scheme} "
                                        f"({', '.join(v for v in values if v != UNKNOWN_KIND) or 'no alignment values'}) "
                                        "nor a class (aligned, partial, not)", line=line, field=field_name)
            return None
        gold = text if text in values else (self.ctx.gold_values.get(UNKNOWN_KIND) if klass == UNKNOWN_KIND
                                            else self.first.get(klass))
        if gold is None:
            self.ctx.problems.add(file, f"label {text!r} ({klass}) has no value in the project's label scheme",
                                  line=line, field=field_name)
            return None
        return klass, (None if self.ctx.gold_meaning == "predictions" else gold)


def _export(files: list[InputFile], ctx: ParseContext) -> Iterator[ParsedArticle]:
    """Articles of alignapp's own hf export."""
    labels = _Labels(ctx)
    # article → level → index → text; article → [(c level, s level, c ids, s ids, c text, s text, label)]
    sentences: dict[str, dict[str, dict[int, str]]] = defaultdict(lambda: defaultdict(dict))
    rows: dict[str, list] = defaultdict(list)
    where: dict[str, tuple[str, int]] = {}
    seen: dict[tuple, tuple[str, int, tuple]] = {}  # (article, levels, ids) → where and label: one pair each
    for f in files:
        n = 0
        for batch in _batches(f, ctx):
            for row in batch.to_pylist():
                n += 1
                article = str(row["article"])
                where.setdefault(article, (f.name, n))
                label = labels(row.get("label"), f.name, n, "label")
                if label is None:
                    continue
                if not _export_row_ok(row, f.name, n, ctx):
                    continue
                if not _export_new_pair(row, label, (f.name, n), seen, sentences[article], ctx):
                    continue  # the same pair again (one pair), or refused
                c_ids, s_ids = row["complex_ids"], row["simple_ids"]
                rows[article].append((row["complex_level"], row["simple_level"], c_ids, s_ids, row["complex"],
                                      row["simple"], label))
    if ctx.problems:
        return
    for article, pairs in rows.items():
        docs = sentences[article]
        for c_level, s_level, c_ids, s_ids, c_text, s_text, _ in pairs:  # multi-sentence sides: split what is missing
            for level, ids, text in ((c_level, c_ids, c_text), (s_level, s_ids, s_text)):
                if any(i not in docs[level] for i in ids):
                    split = [s for p in (ctx.split(str(text)) or []) for s in p]
                    if len(split) != len(ids):
                        ctx.problems.add(where[article][0], f"article {article!r}: the {len(ids)} sentences of a pair "
                                                            f"side ({text[:60]!r}) can't be told apart",
                                         line=where[article][1], field="complex_ids")
                        return
                    for i, s in zip(ids, split):
                        docs[level].setdefault(i, s)
        ranks = rank_levels(list(docs), [(c, s) for c, s, *_ in pairs]) or {lv: k for k, lv in enumerate(sorted(docs))}
        levels = sorted(docs, key=lambda lv: (ranks[lv], lv))
        index = {lv: {i: k for k, i in enumerate(sorted(docs[lv]))} for lv in levels}
        documents = [ParsedDocument(level=lv, rank=r, paragraphs=[[docs[lv][i] for i in sorted(docs[lv])]])
                     for r, lv in enumerate(levels)]
        parsed = [ParsedPair(c, s, tuple(sorted(index[c][i] for i in ci)), tuple(sorted(index[s][i] for i in si)),
                             gold, label=klass)
                  for c, s, ci, si, _, _, (klass, gold) in pairs]
        yield ParsedArticle(title=article, file=where[article][0], line=where[article][1], documents=documents,
                            pairs=parsed)
    ctx.warnings.append("an hf export holds no paragraphs and only the sentences its pairs name: each document is "
                        "one paragraph of those sentences (partial documents), its gold sparse")


def _export_new_pair(row: dict, label: tuple, where: tuple[str, int], seen: dict, known: dict,
                     ctx: ParseContext) -> bool:
    """Whether a row of the hf export is a pair not listed before (the same pair with another label is
    refused; with the same label it is one pair); its 1-sentence sides' texts recorded in ``known`` (level →
    id → text), a text differing from an earlier row's refused."""
    article, (file, n) = str(row["article"]), where
    key = (article, row["complex_level"], row["simple_level"], tuple(sorted(row["complex_ids"])),
           tuple(sorted(row["simple_ids"])))
    if key in seen:
        first = seen[key]
        if first[2] != label:
            ctx.problems.add(file, f"lists the same sentences of article {article!r} as {first[0]}:{first[1]} with "
                                   "another label; keep one", line=n, field="label")
        return False
    seen[key] = (file, n, label)
    for side in ("complex", "simple"):
        level, ids, text = row[f"{side}_level"], row[f"{side}_ids"], str(row[side])
        if len(ids) == 1 and known[level].setdefault(ids[0], text) != text:
            ctx.problems.add(file, f"sentence {ids[0]} of level {level!r} of article {article!r} differs from an "
                                   "earlier row's", line=n, field=side)
            return False
    return True


def _export_row_ok(row: dict, file: str, line: int, ctx: ParseContext) -> bool:
    """A row of the hf export has the shapes and types its columns need (checked before anything is
    used or written); each problem reported at ``file:row: column``."""
    problems = []
    for column in ("article", "complex_level", "simple_level", "complex", "simple"):
        if not isinstance(row.get(column), str) or not row[column].strip():
            problems.append((column, f"must be a non-empty text, got {_kind(row.get(column))}"))
    for column in ("complex_ids", "simple_ids"):
        ids = row.get(column)
        if not isinstance(ids, list) or not ids:
            problems.append((column, f"must be a non-empty list of sentence indices, got {_kind(ids)}"))
        elif bad := [i for i in ids if not isinstance(i, int) or isinstance(i, bool) or i < 0][:1]:
            problems.append((column, f"must list sentence indices (0, 1, ...), got {bad[0]!r}"))
    for column, most in (("article", 500), ("complex_level", 50), ("simple_level", 50)):  # Article.title, Document.level
        if isinstance(row.get(column), str) and len(row[column]) > most:
            problems.append((column, f"must be at most {most} characters, got {len(row[column]):,}"))
    if not problems and row["complex_level"].strip() == row["simple_level"].strip():
        problems.append(("simple_level", f"is the complex level too ({row['simple_level']!r}); the two levels must differ"))
    for column, message in problems:
        ctx.problems.add(file, message, line=line, field=column)
    return not problems


def _kind(value: object) -> str:
    """How a refusal names a cell's wrong value: ``null``, ``an empty text``, ``int``..."""
    if value is None:
        return "null"
    if value == [] or (isinstance(value, str) and not value.strip()):
        return "an empty list" if isinstance(value, list) else "an empty text"
    return type(value).__name__


def _export_lines(files: list[InputFile], ctx: ParseContext) -> Iterator[ParsedArticle]:
    """Articles of an hf export with per-sentence columns, each row read as a ``jsonl`` pair line."""
    from annotation.services.corpus.importing.formats.jsonl import _Record

    for f in files:
        lines = PairLines(ctx)
        n = 0
        for batch in _batches(f, ctx):
            for row in batch.to_pylist():
                n += 1
                row["attributes"] = {key[len("attr_"):]: value for key, value in row.items() if key.startswith("attr_")
                                     and isinstance(value, (int, float)) and not isinstance(value, bool)}
                yield from lines.add(_Record(f.name, n, ctx), row)
        yield from lines.flush()


def _wanted(files: list[InputFile], ctx: ParseContext, names: list[str]) -> tuple[str, ...] | None:
    """A pair dataset's complex, simple [, label] columns: ``--columns``, else the usual names."""
    if ctx.columns:
        if len(ctx.columns) not in (2, 3):
            ctx.problems.add("", "give the columns as complex,simple or complex,simple,label", field="columns")
            return None
        return ctx.columns
    pair = next((p for p in USUAL if all(c in names for c in p)), None)
    if pair is None:
        ctx.problems.add(files[0].name, f"no text columns found among {', '.join(names)}; name them "
                                        "(--columns complex,simple[,label])", field="columns")
        return None
    label = next((c for c in LABEL_COLUMNS if c in names), None)
    return (*pair, label) if label else pair


def _pairs(files: list[InputFile], ctx: ParseContext, names: list[str], names_of) -> Iterator[ParsedArticle]:
    """Articles of a pair dataset: with sentence ids, documents rebuilt from them (``hf_layouts``);
    else a complex and a simple document, a sentence and a pair per row."""
    wanted = _wanted(files, ctx, names)
    if wanted is None:
        return
    ids = id_columns((wanted[0], wanted[1]), names)
    missing = [c for c in wanted if c not in names] if ids is not None else []
    for column in missing:
        ctx.problems.add(files[0].name, f"no column {column!r} (columns: {', '.join(names)})", field=column)
    if ids is not None and not missing:
        yield from id_pair_articles(files, ctx, lambda f: _rows(f, ctx), (wanted[0], wanted[1]),
                                    wanted[2] if len(wanted) == 3 else None, ids, names_of, lambda f: _schema(f, ctx))
    if ids is not None:
        return
    labels = _Labels(ctx)
    block = ctx.limits.sentences_per_document
    for f in files:
        title = f.name.rsplit(".", 1)[0].replace("/", " ").removesuffix(" data-00000-of-00001") or f.stem
        classes = names_of(f).get(wanted[2]) if len(wanted) == 3 else None
        complex_: list[str] = []
        simple: list[str] = []
        pairs: list[ParsedPair] = []
        first, n, k = 1, 0, 0
        for batch in _batches(f, ctx):
            missing = [c for c in wanted if c not in batch.schema.names]
            for column in missing:
                ctx.problems.add(f.name, f"no column {column!r} (columns: {', '.join(batch.schema.names)})", field=column)
            if missing:
                return
            for row in batch.select(list(wanted)).to_pylist():
                n += 1
                texts = [row[wanted[0]], row[wanted[1]]]
                bad = [c for c, t in zip(wanted, texts) if not isinstance(t, str) or not t.strip()]
                for column in bad:
                    ctx.problems.add(f.name, "must be a non-empty text", line=n, field=column)
                label = labels(row[wanted[2]], f.name, n, wanted[2], classes) if len(wanted) == 3 else (None, None)
                if bad or label is None or ctx.problems:
                    continue
                pairs.append(ParsedPair("complex", "simple", (len(complex_),), (len(simple),), label[1], label=label[0]))
                complex_.append(texts[0].strip())
                simple.append(texts[1].strip())
                if len(complex_) >= block:
                    yield _pair_article(f"{title} #{k + 1}", f, first, complex_, simple, pairs)
                    k, first = k + 1, n + 1
                    complex_, simple, pairs = [], [], []
        if complex_ and not ctx.problems:
            yield _pair_article(title if k == 0 else f"{title} #{k + 1}", f, first, complex_, simple, pairs)


def _articles(files: list[InputFile], ctx: ParseContext, prefixes: dict[str, str]) -> Iterator[ParsedArticle]:
    """Articles of article rows (wiki_auto ``auto``, alignapp's ``hf/articles``; ``prefixes``: each file's
    complex side, ``normal`` or ``complex``)."""
    rows = ArticleRows(ctx)
    for f in files:
        for n, row in enumerate(_rows(f, ctx), start=1):
            yield from rows.add(f.name, n, row, prefixes[f.name])
            if ctx.problems.full:
                return
    yield from rows.flush()


def _pair_article(title: str, f: InputFile, line: int, complex_: list[str], simple: list[str],
                  pairs: list[ParsedPair]) -> ParsedArticle:
    return ParsedArticle(title=title, file=f.name, line=line, pairs=list(pairs), documents=[
        ParsedDocument(level="complex", rank=0, paragraphs=[[s] for s in complex_], meta={"file": f.name}),
        ParsedDocument(level="simple", rank=1, paragraphs=[[s] for s in simple], meta={"file": f.name})])


@register("hf", extensions=EXTENSIONS, order=70, probe=is_hf, binary=True, example=(),
          help="Hugging Face dataset (save_to_disk folder or parquet): wiki_auto manual/auto, pair rows with "
               "sentence ids (article-level-paragraph-sentence), alignapp's hf export, or a pair dataset with two "
               "text columns (--columns complex,simple[,label]); ClassLabel labels read by name")
def parse(files: list[InputFile], ctx: ParseContext) -> Iterator[ParsedArticle]:
    data = [f for f in files if f.extension in EXTENSIONS]
    if any(f.extension == "arrow" for f in data) and any(f.extension == "parquet" for f in data):
        left = [f.name for f in data if f.extension == "parquet"]
        ctx.warnings.append(f"read the .arrow files; left out {len(left)} .parquet file(s) holding the same data: "
                            + ", ".join(left[:3]))
        data = [f for f in data if f.extension == "arrow"]
    if not data:
        ctx.problems.add("", "no .arrow or .parquet files to import")
        return
    columns = {f.name: _columns(f, ctx) for f in data}
    if ctx.problems or not check_sizes(data, ctx):
        return
    rows = {f.name: int(_has_rows(f, ctx)) for f in data}
    check_rows(rows, ctx, "an empty dataset")
    if ctx.problems:
        return
    data = [f for f in data if rows[f.name]]
    layouts = {f.name: layout_of(columns[f.name]) for f in data}
    articles = [f for f in data if layouts[f.name] == "article rows"]
    if articles and not ctx.columns:
        left = [f for f in data if f not in articles]
        other = [f for f in left if layouts[f.name] not in ("alignapp pair rows", "alignapp pair rows (older export)")]
        if other:  # only an export's own pair rows may lie beside article rows (they hold the same pairs)
            _refuse_mixed(other[0], layouts[other[0].name], articles[0], ctx)
            return
        if left:
            ctx.warnings.append(f"read the article rows ({len(articles)} file(s): whole documents and every pair); left "
                                f"out {len(left)} file(s) of pair rows: " + ", ".join(f.name for f in left[:3]))
        yield from _articles(articles, ctx, {f.name: article_prefix(columns[f.name]) for f in articles})
        return
    if not ctx.columns:  # one layout for the whole folder, never the first file's for all
        first = data[0]
        other = next((f for f in data if layouts[f.name] != layouts[first.name]), None)
        if other is not None:
            _refuse_mixed(other, layouts[other.name], first, ctx, layouts[first.name])
            return
    names = columns[data[0].name]
    if layouts[data[0].name] == "alignapp pair rows" and not ctx.columns:
        yield from _export_lines(data, ctx)
    elif layouts[data[0].name] == "alignapp pair rows (older export)" and not ctx.columns:
        yield from _export(data, ctx)
    else:
        yield from _pairs(data, ctx, names, _class_names(files, ctx))


def layout_of(names: list[str]) -> str:
    """Which layout a file's columns are (each file of an import is read as its own, and they must agree)."""
    if article_prefix(names):
        return "article rows"
    if all(c in names for c in (*EXPORT_COLUMNS, "complex_sentences")):
        return "alignapp pair rows"
    if all(c in names for c in EXPORT_COLUMNS):
        return "alignapp pair rows (older export)"
    pair = next((p for p in USUAL if all(c in names for c in p)), None)
    return "pair rows with sentence ids" if pair and id_columns(pair, names) else "pair rows"


def _refuse_mixed(f: InputFile, layout: str, first: InputFile, ctx: ParseContext, first_layout: str = "article rows") -> None:
    """Files of one import in two layouts: refused at the odd file, naming both (never read as the first's)."""
    ctx.problems.add(f.name, f"its columns are {layout}, but {first.name} holds {first_layout}; an import reads one "
                             "layout: import these files separately (or name the text columns: --columns)")
