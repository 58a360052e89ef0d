"""``wiki-manual`` — the released Wiki-Manual / Newsela-Manual TSV (Jiang et al. 2020), no header::

    label <TAB> simple-id <TAB> complex-id <TAB> simple <TAB> complex [<TAB> GLEU]

Labels ``aligned``, ``partialAligned``, ``notAligned`` (a class, ``partial``/``not``, or one of the
project's scheme values works too). Sentence ids are ``articleIndex-level-paragraphIndex-sentIndex``
(the released files: level 0 = simple, 1 = complex; alignapp's ``tsv`` export: the document's level
name); the article is everything before the last three ``-``.

Each article's documents are rebuilt from the sentences the file names: a document per level,
paragraphs and sentence order from the ids (sorted by paragraph, then sentence index), ranked so
that a complex side comes before its simple side. A document pair whose every m × n sentence pair is
listed is **exhaustive** gold (as the released files and the ``tsv`` export of an exhaustively
annotated pair are): its aligned / partial rows become imported gold, the ``notAligned`` rows are
implied. A document pair listed only in part is **sparse** gold over partial documents (only the
sentences named), every row stored, ``notAligned`` ones as the scheme's not-aligned value; the
import's warnings say so. With the import's gold meaning ``predictions`` the aligned / partial rows
become an alignment run's predictions. Labels map to the scheme's first value of their class; a
label the scheme can't take is refused, with its line.

What the file says beyond the links is kept, so that the ``tsv`` export of the imported project
writes the same rows: each document's sentence ids (``Document.meta["wiki_manual_ids"]``: the
``[paragraph, sentence]`` of each sentence, as the file numbers them), each row's GLEU cell
(``Article.meta["wiki_manual_gleu"]``: ``{"<complex level>|<simple level>": {"<ci>,<si>": "0.1234"}}``,
indices into the documents' sentences) and the split a file named ``train.tsv``, ``dev.tsv`` or
``test.tsv`` puts its articles in (the article's split).

Beside alignapp's own TSV export a sidecar may lie, ``gold_sidecar.json`` (:data:`SIDECAR`): the rows the
six columns cannot say (a link of unknown kind, ``aligned-or-partial``; a tie, ``undecided``) with their
value as the label, and the document pairs complete under the exported gold policy. Imported with the
TSV files (the folder, or its zip), it is what says which pairs are complete: a listed pair whose
sentences (the sidecar's counts) and m × n cells the files carry whole is exhaustive gold, its sidecar
rows stored with their values; a listed pair they do not carry whole is sparse, warned; an unlisted pair
is sparse even when listed m × n. Without the sidecar the TSV reads as described above.
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from annotation.label_schemes import UNKNOWN_KIND
from annotation.services.corpus.importing.base import (
    UNDECIDED,
    InputFile,
    ParseContext,
    ParsedArticle,
    ParsedPair,
    level_documents,
    split_from_name,
)
from annotation.services.corpus.importing.formats import register
from annotation.services.corpus.importing.limits import over
from annotation.services.corpus.importing.wiki_manual_sidecar import SIDECAR, add_rows, is_export_folder, sidecar_of

EXTENSIONS = ("tsv",)
COLUMNS = ("label", "simple-id", "complex-id", "simple", "complex")
WIKI_LABELS = {"aligned": "aligned", "partialaligned": "partial", "notaligned": "not",
               "partial": "partial", "not": "not", UNKNOWN_KIND: UNKNOWN_KIND}
IDS_KEY, GLEU_KEY = "wiki_manual_ids", "wiki_manual_gleu"  # Document.meta, Article.meta (the tsv export reads them)
ORDER_KEY = "wiki_manual_order"  # Article.meta: each document pair's row order in the file (the tsv export keeps it)
SENTENCE_ID = re.compile(r"^(?P<article>.+)-(?P<level>[^-\s]+)-(?P<paragraph>\d+)-(?P<sentence>\d+)$")


@dataclass(slots=True)
class _Article:
    file: str
    line: int
    # level → (paragraph, sentence) → (text, file, line)
    sentences: dict[str, dict[tuple[int, int], tuple[str, str, int]]] = field(default_factory=lambda: defaultdict(dict))
    # (complex level, simple level) → [(complex key, simple key, class, scheme value)]
    rows: dict[tuple[str, str], list[tuple[tuple[int, int], tuple[int, int], str, str | None]]] = field(
        default_factory=lambda: defaultdict(list))
    # (complex level, simple level) → (complex key, simple key) → the row's GLEU cell as written
    gleu: dict[tuple[str, str], dict[tuple[tuple[int, int], tuple[int, int]], str]] = field(
        default_factory=lambda: defaultdict(dict))
    split: str | None = None  # the split its first file names (train.tsv …)
    sidecar: set[tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=set)  # cells from the sidecar


class Reader:
    """Collects Wiki-Manual rows (a TSV's, or a Hugging Face dataset's with sentence ids: ``hf``) into
    articles. An article's rows may be anywhere in the files, so the articles are built once every row
    is read; meanwhile the reader counts what it holds — articles (``IMPORT_MAX_ARTICLES``), distinct
    sentences and their characters (``IMPORT_MAX_SENTENCES``, ``IMPORT_MAX_BYTES``) — and refuses the
    row that passes a limit (``over``: read no further), so its memory stays bounded by the limits."""

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self.articles: dict[str, _Article] = {}
        self.sentences = self.chars = 0
        self.over = False  # a limit was passed: the caller stops reading rows
        self.pairs: dict[tuple[str, str], tuple[str, int]] = {}  # (simple id, complex id) → where first listed
        self.splits: dict[str, str | None] = {}  # file → the split its name says
        # the sidecar's complete document pairs: (article, complex level, simple level) → sentence counts;
        # None: no sidecar (a document pair listed m × n is complete)
        self.listed: dict[tuple[str, str, str], tuple[int, int]] | None = None
        self.unproven: list[str] = []  # listed complete, not carried whole: read as sparse (warned)
        first: dict[str, str] = {}
        for value, klass in ctx.scheme_values.items():
            if klass:
                first.setdefault(klass, value)
        self.first = first

    def problem(self, file: str, line: int, field_name: str | None, message: str) -> None:
        self.ctx.problems.add(file, message, line=line, field=field_name)

    def label(self, file: str, line: int, text: str, field_name: str = "label",
              sidecar: bool = False) -> tuple[str, str | None] | None:
        """``(class, scheme value)`` of a label, None after reporting it (a sidecar row may be a tie too)."""
        values = self.ctx.scheme_values
        if sidecar and text.strip() == UNDECIDED and values:
            return UNDECIDED, UNDECIDED
        klass = WIKI_LABELS.get(text.strip().casefold()) if text.strip() not in values else values[text.strip()]
        scheme = f" {self.ctx.scheme!r}" if self.ctx.scheme else ""
        if not values:
            self.problem(file, line, field_name, f"the project's label scheme{scheme} has no alignment values to store "
                                              f"{text!r} as; import into a project with a categorical scheme")
            return None
        if klass is None:
            self.problem(file, line, field_name, f"unknown label {text!r}; choose one of: aligned, partialAligned, "
                                              f"notAligned (or a value of the project's label scheme{scheme}: "
                                              f"{', '.join(v for v in values if v != UNKNOWN_KIND)})")
            return None
        if text.strip() in values:
            return klass, text.strip()
        value = self.first.get(klass) if klass != UNKNOWN_KIND else self.ctx.gold_values.get(UNKNOWN_KIND)
        if value is None and klass != "not":
            self.problem(file, line, field_name, f"label {text!r} ({klass}) has no value in the project's label scheme"
                                              f"{scheme} ({', '.join(v for v in values if v != UNKNOWN_KIND)})")
            return None
        return klass, value

    def sentence_id(self, file: str, line: int, field_name: str, text: str) -> tuple[str, str, int, int] | None:
        m = SENTENCE_ID.match(text.strip())
        if not m:
            self.problem(file, line, field_name, f"bad sentence id {text!r}; expected "
                                                 "articleIndex-level-paragraphIndex-sentIndex, e.g. 12-1-0-3")
            return None
        return m["article"], m["level"], int(m["paragraph"]), int(m["sentence"])

    def sentence(self, article: _Article, level: str, key: tuple[int, int], text: str, file: str, line: int,
                 field_name: str, sid: str) -> bool:
        if not text.strip():
            self.problem(file, line, field_name, "is empty; every row needs both sentences")
            return False
        known = article.sentences[level].get(key)
        if known is None:
            article.sentences[level][key] = (text.strip(), file, line)
            self.sentences += 1
            self.chars += len(article.sentences[level][key][0])
            if not self.ctx.room(file, line, self.sentences, self.chars, field_name=field_name,
                                 what=f"sentence {sid}"):
                self.over = True
                return False
        elif known[0] != text.strip():
            self.problem(file, line, field_name, f"sentence {sid} has another text than at {known[1]}:{known[2]}")
            return False
        return True

    def split_of(self, file: str) -> str | None:
        """The split the file's name says (``train.tsv``, ``wiki-manual/dev.tsv``, ``newsela-test.tsv``), as
        ``datasets`` reads split names; a name of two splits is refused once."""
        if file not in self.splits:
            self.splits[file] = split_from_name(file, self.ctx.problems)
        return self.splits[file]

    def row(self, file: str, line: int, raw: str) -> None:
        cells = raw.split("\t")
        if len(cells) < len(COLUMNS):
            missing = COLUMNS[len(cells)]
            self.problem(file, line, missing, f"missing column (a row has {len(cells)} of the columns "
                                              "label, simple-id, complex-id, simple, complex[, GLEU])")
            return
        if len(cells) > len(COLUMNS) + 1:
            self.problem(file, line, None, f"{len(cells)} columns; a row has at most {len(COLUMNS) + 1} "
                                           "(label, simple-id, complex-id, simple, complex[, GLEU])")
            return
        self.add(file, line, [c.strip() for c in cells[:len(COLUMNS)]],
                 cells[len(COLUMNS)] if len(cells) > len(COLUMNS) else None, self.split_of(file))

    def add(self, file: str, line: int, cells: list[str], gleu: str | None, split: str | None,
            fields: tuple[str, ...] = COLUMNS, sidecar: bool = False) -> None:
        """One row: ``cells`` are label, simple id, complex id, simple, complex (``fields`` names them in
        problems: the TSV's columns or a dataset's); ``gleu`` the GLEU cell, if any; ``split`` the split
        of its file (the article's, from the first row naming it); ``sidecar``: a row of :data:`SIDECAR`."""
        label_text, simple_id, complex_id, simple, complex_ = cells
        label = self.label(file, line, label_text, fields[0], sidecar)
        s_parts = self.sentence_id(file, line, fields[1], simple_id)
        c_parts = self.sentence_id(file, line, fields[2], complex_id)
        if label is None or s_parts is None or c_parts is None:
            return
        (s_article, s_level, *s_key), (c_article, c_level, *c_key) = s_parts, c_parts
        if s_article != c_article:
            self.problem(file, line, fields[2], f"article {c_article!r} differs from the simple sentence's "
                                                f"article {s_article!r}")
            return
        if s_level == c_level:
            self.problem(file, line, fields[2], f"level {c_level!r} is the simple sentence's level too; the two "
                                                "sentences must come from different documents")
            return
        where = self.pairs.get((simple_id, complex_id))
        if where is not None:
            self.problem(file, line, "pair", f"duplicate pair {simple_id} / {complex_id} (first at {where[0]}:{where[1]})")
            return
        self.pairs[(simple_id, complex_id)] = (file, line)
        article = self.articles.get(s_article)
        if article is None:
            if len(self.articles) >= self.ctx.limits.articles:
                self.over = True
                limit = self.ctx.limits.articles
                self.ctx.problems.add(file, over(f"the import holds more than {limit:,} articles by article "
                                                 f"{s_article!r}", "IMPORT_MAX_ARTICLES", limit),
                                      line=line, field=fields[1], limit="IMPORT_MAX_ARTICLES")
                return
            article = self.articles[s_article] = _Article(file, line, split=split)
        ok = self.sentence(article, s_level, tuple(s_key), simple, file, line, fields[3], simple_id)
        ok = self.sentence(article, c_level, tuple(c_key), complex_, file, line, fields[4], complex_id) and ok
        if ok:
            article.rows[(c_level, s_level)].append((tuple(c_key), tuple(s_key), *label))
            if sidecar:
                article.sidecar.add((tuple(c_key), tuple(s_key)))
            if gleu is not None and _is_number(gleu):
                article.gleu[(c_level, s_level)][(tuple(c_key), tuple(s_key))] = gleu.strip()

    def build(self, title: str, a: _Article) -> ParsedArticle | None:
        ranks = rank_levels(list(a.sentences), list(a.rows))
        if ranks is None:
            self.problem(a.file, a.line, "complex-id", f"article {title!r} lists its levels as complex and as simple "
                                                       "of each other; a level order is needed")
            return None
        documents, index = level_documents(a.sentences, ranks, lambda key, value: (key[0], value[0]), ids_key=IDS_KEY)
        predictions = self.ctx.gold_meaning == "predictions"
        pairs: list[ParsedPair] = []
        complete: list[tuple[str, str]] = []
        for (c_level, s_level), rows in a.rows.items():
            full = self.complete(title, a, c_level, s_level, len(rows))
            if full:
                complete.append((c_level, s_level))
            for c_key, s_key, klass, value in rows:
                if klass == "not" and (full or predictions):
                    continue  # implied by exhaustive gold; no prediction
                if klass == "not" and value is None:
                    scheme = f" {self.ctx.scheme!r}" if self.ctx.scheme else ""
                    self.problem(a.file, a.line, "label", f"article {title!r} lists {c_level}/{s_level} in part: its "
                                                          f"notAligned rows need a not-aligned value in the label scheme{scheme}")
                    return None
                pairs.append(ParsedPair(c_level, s_level, (index[c_level][c_key],), (index[s_level][s_key],),
                                        None if predictions else value, label=klass))
        gleu = {f"{c}|{s}": {f"{index[c][ck]},{index[s][sk]}": cell for (ck, sk), cell in cells.items()}
                for (c, s), cells in a.gleu.items()}
        order = {f"{c}|{s}": row_order([(index[c][ck], index[s][sk]) for ck, sk, *_ in rows
                                        if (ck, sk) not in a.sidecar])  # the TSV's rows: their order
                 for (c, s), rows in a.rows.items()}
        meta = {**({GLEU_KEY: gleu} if gleu else {}), ORDER_KEY: order}
        return ParsedArticle(title=title, file=a.file, line=a.line, documents=documents, pairs=pairs,
                             gold_documents=complete, gold_meaning="exhaustive" if complete else "sparse",
                             meta=meta, split=a.split)

    def complete(self, title: str, a: _Article, c_level: str, s_level: str, rows: int) -> bool:
        """Whether a document pair is exhaustive gold: without a sidecar, listed m × n; with one, listed
        there and carried whole (its documents' sentence counts, every m × n cell a row)."""
        m, n = len(a.sentences[c_level]), len(a.sentences[s_level])
        if self.listed is None:
            return rows == m * n
        sizes = self.listed.get((title, c_level, s_level))
        if sizes is None:
            return False
        if sizes == (m, n) and rows == m * n:
            return True
        self.unproven.append(f"{title} {c_level}/{s_level} ({m} of {sizes[0]} and {n} of {sizes[1]} sentences, "
                             f"{rows} of {sizes[0] * sizes[1]} sentence pairs)")
        return False

def row_order(cells: list[tuple[int, int]]) -> str | list[list[int]]:
    """How a document pair's rows are ordered in the file, as ``(complex, simple)`` sentence indices:
    ``"simple"`` (grouped by simple sentence, the released files' order), ``"complex"`` (grouped by
    complex sentence), else the cells themselves in file order (the ``tsv`` export writes them so)."""
    if cells == sorted(cells, key=lambda c: (c[1], c[0])):
        return "simple"
    if cells == sorted(cells):
        return "complex"
    return [list(c) for c in cells]


def order_key(order) -> Callable[[tuple[int, int]], tuple] | None:
    """A sort key for ``(complex, simple)`` cells that gives :func:`row_order`'s ``order`` back (cells it
    does not list after the others, complex-major); None for no known order."""
    if order == "simple":
        return lambda c: (c[1], c[0])
    if order == "complex":
        return lambda c: c
    if isinstance(order, list):
        position = {(c[0], c[1]): k for k, c in enumerate(order) if isinstance(c, list) and len(c) == 2}
        return lambda c: (position.get(c, len(position)), c)
    return None


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def rank_levels(levels: list[str], edges: list[tuple[str, str]]) -> dict[str, int] | None:
    """Level → rank, complex before simple (a topological order; ties by level name); None on a cycle."""
    after: dict[str, set[str]] = {lv: set() for lv in levels}
    before: dict[str, int] = {lv: 0 for lv in levels}
    for c, s in set(edges):
        after[c].add(s)
        before[s] += 1
    ready = sorted(lv for lv in levels if before[lv] == 0)
    out: dict[str, int] = {}
    while ready:
        lv = ready.pop(0)
        out[lv] = len(out)
        for s in sorted(after[lv]):
            before[s] -= 1
            if before[s] == 0:
                ready.append(s)
        ready.sort()
    return out if len(out) == len(levels) else None


@register("wiki-manual", extensions=EXTENSIONS, order=50, record_files=True, probe=is_export_folder,
          example=(("tiny.tsv", "aligned\tTiny-0-0-0\tTiny-1-0-0\tA short one.\tA long and complex sentence.\t0.3\n"),),
          help="Wiki-Manual / Newsela-Manual TSV: label, simple-id, complex-id, simple, complex[, GLEU]; "
               "every m x n pair listed = exhaustive gold")
def parse(files: list[InputFile], ctx: ParseContext) -> Iterator[ParsedArticle]:
    reader = Reader(ctx)
    rows: dict[str, int] = {}
    sidecars = [f for f in files if f.basename == SIDECAR]
    extra = sidecar_of(reader, sidecars, ctx)
    for f in files:
        if f in sidecars:
            continue
        if f.extension not in EXTENSIONS:
            ctx.problems.add(f.name, f"unknown extension .{f.extension or '(none)'} for the wiki-manual format; expected .tsv")
            continue
        rows[f.name] = 0
        for n, raw in ctx.lines(f):
            if not raw.strip() or (n == 1 and raw.split("\t", 1)[0].strip().casefold() == "label"):
                continue  # blank lines; a header row
            rows[f.name] += 1
            reader.row(f.name, n, raw)
            if ctx.problems.full or reader.over:
                return
    if extra is not None:
        add_rows(reader, *extra)
    if rows or extra is None or not extra[1]:
        check_rows(rows, ctx)
    yield from articles(reader, ctx)


def check_rows(rows: dict[str, int], ctx: ParseContext, why: str = "only a header or blank lines") -> None:
    """Files without a row (a header, blank lines, an empty dataset) are refused as an empty file is
    when no file of the import has one; beside files with rows they are left out, warned."""
    without = [name for name, n in rows.items() if n == 0]
    if not without or ctx.problems:
        return
    if len(without) == len(rows):
        for name in without:
            ctx.problems.add(name, f"holds no rows ({why})")
    else:
        ctx.warnings.append(f"left out {len(without)} file(s) without rows: {', '.join(without[:5])}")


def articles(reader: Reader, ctx: ParseContext) -> Iterator[ParsedArticle]:
    """The articles of every row read (none when a row had a problem), the partial ones warned."""
    if ctx.problems:
        return
    partial = 0
    for title, a in reader.articles.items():
        article = reader.build(title, a)
        if article is None:
            continue
        partial += len(a.rows) - len(article.gold_documents)
        yield article
    if reader.unproven:
        ctx.warnings.append(f"{len(reader.unproven)} document pair(s) listed complete in {SIDECAR} are not carried "
                            f"whole by the files, so they are sparse gold: {'; '.join(reader.unproven[:5])}")
    if partial and reader.listed is not None:
        ctx.warnings.append(f"{partial} document pair(s) are not listed complete in {SIDECAR} (or not carried whole): "
                            "their gold is sparse, their documents hold only the sentences the files name")
    elif partial:
        ctx.warnings.append(f"{partial} document pair(s) list only some of their sentence pairs: their documents hold "
                            "only the sentences the file names (partial documents) and their gold is sparse; document "
                            "pairs listed m x n are exhaustive gold")
