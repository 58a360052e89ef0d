"""The export's pair-per-line ``jsonl`` format (``jsonl/<split>.jsonl``), read by the ``jsonl`` and ``hf`` imports.

A line is one pair::

    {"article": "Bees", "split": "test", "complex_level": "adv", "simple_level": "ele",
     "complex_ids": [0, 1], "simple_ids": [0], "complex": "S0. S1.", "simple": "T0.",
     "complex_sentences": ["S0.", "S1."], "simple_sentences": ["T0."],
     "complex_paragraphs": [0, 0], "simple_paragraphs": [0], "complete": true,
     "label": "aligned", "provenance": "majority", "score": 0.9, "attributes": {}, "derived": false, ...}

An article's lines (consecutive, as the export writes them) become one article titled ``article``:
a document per level holding the sentences its pairs name, in sentence order, grouped by their
``<side>_paragraphs`` (the line format holds no other sentences: the documents are partial unless
every sentence is in some pair), and each line one imported pair with its label, score, attributes
and source provenance, exactly as an ``articles`` ``pairs`` item (:meth:`jsonl._Record.pairs`). A
side of one sentence may give its text as ``complex`` / ``simple`` alone; a longer side needs
``<side>_sentences``. ``complete`` says what the document pair's gold means (true: exhaustive, false:
sparse; absent: the import's gold meaning), but a document pair is imported complete only when its
lines carry every sentence of both documents (``<side>_sentence_count``, the exported document's
size, equals the sentences named); otherwise it is sparse, warned — a re-import never claims complete
a document whose sentences it did not get. ``split`` (train / dev / test) becomes the article's split.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from annotation.services.corpus.importing.base import ParseContext, ParsedArticle, ParsedPair, level_documents
from annotation.services.corpus.importing.formats.wiki_manual import rank_levels

SIDES = ("complex", "simple")
REQUIRED = ("article", "complex_level", "simple_level", "complex_ids", "simple_ids")
SPLITS = ("train", "dev", "test")
ANY_INDEX = 1 << 31  # the original documents' sizes are unknown: any index is in range
TITLE_MAX = 500  # Article.title, as the record format's ``id``
LEVEL_MAX = 50  # Document.level


def is_pair_line(obj: Any) -> bool:
    """A line of the export's pair-per-line format (rather than a SPEC §4 article record)."""
    return isinstance(obj, dict) and "complex_ids" in obj and "article" in obj


@dataclass
class _Article:
    title: str
    file: str
    line: int
    split: str | None
    # level → index → (paragraph, text, line that first named it, side)
    sentences: dict[str, dict[int, tuple[int, str, int, str]]] = field(default_factory=dict)
    pairs: list[ParsedPair] = field(default_factory=list)  # indices into the original documents
    complete: dict[tuple[str, str], bool | None] = field(default_factory=dict)
    # (levels, complex ids, simple ids) → (line, gold, label); levels → the line that first named them,
    # the line of their first ``complete``
    seen: dict[tuple, tuple[int, str | None, Any]] = field(default_factory=dict)
    edges: dict[tuple[str, str], int] = field(default_factory=dict)
    stated: dict[tuple[str, str], int] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)  # level → the exported document's sentence count
    truncated: bool = False  # a document pair marked complete came without all its sentences: imported sparse


class PairLines:
    """Collects consecutive pair lines into articles (one article in memory at a time)."""

    def __init__(self, ctx: ParseContext) -> None:
        self.ctx = ctx
        self.current: _Article | None = None
        self.done: dict[str, tuple[str, int]] = {}  # article → where its lines began
        self.truncated = 0  # articles with a document pair marked complete whose sentences were not all carried

    def add(self, record, obj: dict) -> Iterator[ParsedArticle]:
        """Take one line (``record``: its :class:`jsonl._Record`); yields the article its lines ended."""
        missing = [key for key in REQUIRED if key not in obj]
        for key in missing:
            record.problem(key, "is missing (a pair line needs article, levels and both sides' sentence ids)")
        if missing:
            return
        title = _title(record, obj["article"])
        if title is None:
            return
        if self.current is not None and self.current.title != title:
            yield from self.flush()
        if self.current is None:
            if title in self.done:
                where = self.done[title]
                record.problem("article", f"article {title!r} continues here after other articles' lines (its lines "
                                          f"began at {where[0]}:{where[1]}); keep an article's lines together")
                return
            self.done[title] = (record.file, record.line)
            split = obj.get("split")
            self.current = _Article(title, record.file, record.line, split if split in SPLITS else None)
        self._line(record, obj, self.current)

    def _line(self, record, obj: dict, article: _Article) -> None:
        bad = [key for key in ("complex_level", "simple_level") if not isinstance(obj[key], (str, int))
               or isinstance(obj[key], bool) or not str(obj[key]).strip()]
        for key in bad:
            record.problem(key, f"must be a level name (a non-empty string or an integer), got {_shown(obj[key])}")
        long = [key for key in ("complex_level", "simple_level") if key not in bad and len(str(obj[key])) > LEVEL_MAX]
        for key in long:
            record.problem(key, f"must be at most {LEVEL_MAX} characters, got {len(str(obj[key])):,}")
        if bad or long:
            return
        levels = (str(obj["complex_level"]).strip(), str(obj["simple_level"]).strip())
        if levels[0] == levels[1]:
            record.problem("simple_level", f"is the complex level too ({levels[1]!r}); the two levels must differ")
            return
        reverse = article.edges.get(levels[::-1])
        if reverse is not None:
            record.problem("complex_level", f"level {levels[0]!r} is the complex side here but the simple side of "
                                            f"{levels[1]!r} at line {reverse} of the same article; an article's "
                                            "levels must keep one order")
            return
        complete = record.complete(obj.get("complete"))
        for side, level in zip(SIDES, levels):
            if not self._sentences(record, obj, side, level, article):
                return
            size = obj.get(f"{side}_sentence_count")
            if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 1):
                record.problem(f"{side}_sentence_count", f"must be the document's number of sentences, got {size!r}")
                return
            if size is not None:
                article.sizes[level] = size
        item = {key: obj.get(key) for key in ("label", "provenance", "score", "attributes", "derived")}
        parsed = record.pairs([{**item, "complex": obj["complex_ids"], "simple": obj["simple_ids"]}], *levels,
                              ANY_INDEX, ANY_INDEX)
        if not record.ok:
            return
        article.edges.setdefault(levels, record.line)
        article.complete.setdefault(levels, None)
        for pair in parsed:
            key = (*levels, pair.complex, pair.simple)
            if key in article.seen:
                line, gold, label = article.seen[key]
                if gold != pair.gold:
                    record.problem("label", f"lists the same {levels[0]!r} and {levels[1]!r} sentences as line {line} "
                                            f"with another label ({obj.get('label')!r}, not {label!r}); keep one")
                continue  # the same pair again (e.g. proposed by two runs): one pair
            article.seen[key] = (record.line, pair.gold, obj.get("label"))
            article.pairs.append(pair)
        if complete is None:
            return
        if levels in article.stated and article.complete[levels] != complete:
            record.problem("complete", f"is {str(complete).lower()}, but line {article.stated[levels]} said "
                                       f"{str(article.complete[levels]).lower()} for the same levels "
                                       f"{levels[0]!r} → {levels[1]!r}; a document pair is complete or not")
            return
        article.stated.setdefault(levels, record.line)
        article.complete[levels] = complete

    def _sentences(self, record, obj: dict, side: str, level: str, article: _Article) -> bool:
        ids = obj[f"{side}_ids"]
        if not (isinstance(ids, list) and ids and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0
                                                        for i in ids)):
            record.problem(f"{side}_ids", "must be a non-empty list of sentence indices")
            return False
        texts = obj.get(f"{side}_sentences")
        if texts is None and len(ids) == 1:
            texts = [obj.get(side)]
        if not (isinstance(texts, list) and len(texts) == len(ids)
                and all(isinstance(t, str) and t.strip() for t in texts)):
            record.problem(f"{side}_sentences", f"must list the text of each of the {len(ids)} {side} sentences")
            return False
        paragraphs = obj.get(f"{side}_paragraphs")
        if paragraphs is None:
            paragraphs = [0] * len(ids)
        if not (isinstance(paragraphs, list) and len(paragraphs) == len(ids)
                and all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in paragraphs)):
            record.problem(f"{side}_paragraphs", f"must give the paragraph of each of the {len(ids)} {side} sentences")
            return False
        known = article.sentences.setdefault(level, {})
        for i, text, paragraph in zip(ids, texts, paragraphs):
            seen = known.setdefault(i, (paragraph, text, record.line, side))
            if seen[:2] != (paragraph, text):
                record.problem(f"{side}_sentences", f"sentence {i} of level {level!r} differs from line {seen[2]}'s")
                return False
        return True

    def flush(self) -> Iterator[ParsedArticle]:
        """The article collected so far (none when its lines had problems)."""
        article, self.current = self.current, None
        if article is None or self.ctx.problems or not article.pairs or not self._ordered(article):
            return
        parsed = build(article)
        if article.truncated:  # one warning for the import, its count kept current
            old = _truncated_warning(self.truncated)
            self.truncated += 1
            warnings = self.ctx.warnings
            if old in warnings:
                warnings[warnings.index(old)] = _truncated_warning(self.truncated)
            else:
                warnings.append(_truncated_warning(self.truncated))
        yield parsed

    def _ordered(self, a: _Article) -> bool:
        """Whether each level's sentences, in id order, run through their paragraphs in order (ids 0, 1,
        2 in paragraphs 0, 1, 0 cannot be one document: its sentences would be stored out of their
        order and the pairs point at the wrong ones), and the levels have one complex-to-simple order."""
        for level, known in a.sentences.items():
            last = None
            for i in sorted(known):
                paragraph, _, line, side = known[i]
                if last is not None and paragraph < last[0]:
                    self.ctx.problems.add(a.file, f"sentence {i} of level {level!r} is in paragraph {paragraph}, after "
                                                  f"sentence {last[1]} in paragraph {last[0]}: sentence ids and "
                                                  "paragraphs must run in the same order", line=line,
                                          field=f"{side}_paragraphs")
                    return False
                last = (paragraph, i)
        if rank_levels(list(a.sentences), list(a.edges)) is None:
            self.ctx.problems.add(a.file, f"article {a.title!r}: its levels' complex → simple order runs in a circle",
                                  line=a.line, field="complex_level")
            return False
        return True


def _truncated_warning(n: int) -> str:
    return (f"{n} article(s) have a document pair marked complete whose lines do not carry every sentence of its "
            "documents (a pair per line names only its own sentences): imported as sparse gold over partial "
            "documents; import the export's articles/ or hf/ folder to keep them complete")


def _shown(value: Any) -> str:
    """A wrong value as a refusal names it: its JSON type, never its (possibly huge) text."""
    return {dict: "an object", list: "a list", bool: "a boolean", type(None): "null", float: "a number"}.get(
        type(value), "an empty text" if isinstance(value, str) else repr(value)[:60])


def _title(record, value: Any) -> str | None:
    """An article title: a non-empty text (or an integer id) of at most ``TITLE_MAX`` characters."""
    if not isinstance(value, (str, int)) or isinstance(value, bool) or not str(value).strip():
        record.problem("article", f"must be a non-empty text (the article's title), got {_shown(value)}")
        return None
    if len(str(value).strip()) > TITLE_MAX:
        record.problem("article", f"must be at most {TITLE_MAX} characters (it becomes the article title)")
        return None
    return str(value).strip()


def build(a: _Article) -> ParsedArticle:
    """Documents of the named sentences (renumbered in order) and the pairs over them."""
    ranks = rank_levels(list(a.sentences), list(a.complete)) or {lv: k for k, lv in enumerate(sorted(a.sentences))}
    documents, index = level_documents(a.sentences, ranks, lambda _, value: (value[0], value[1]))
    pairs: dict[tuple, ParsedPair] = {}
    for p in a.pairs:
        mapped = replace(p, complex=tuple(sorted(index[p.complex_level][i] for i in p.complex)),
                         simple=tuple(sorted(index[p.simple_level][i] for i in p.simple)))
        pairs.setdefault((p.complex_level, p.simple_level, mapped.complex, mapped.simple), mapped)
    for levels, flag in a.complete.items():
        whole = all(a.sizes.get(lv) == len(a.sentences[lv]) for lv in levels)
        if flag and not whole:  # never claim complete a document whose sentences the lines did not carry
            a.complete[levels] = False
            a.truncated = True
    complete = [levels for levels, flag in a.complete.items() if flag]
    stated = any(flag is not None for flag in a.complete.values())
    return ParsedArticle(title=a.title, file=a.file, line=a.line, documents=documents, pairs=list(pairs.values()),
                         gold_documents=complete or list(a.complete),
                         gold_meaning=("exhaustive" if complete else "sparse") if stated else None, split=a.split)
