"""The sidecar of alignapp's ``tsv`` export, ``gold_sidecar.json`` beside the TSV files (the ``wiki-manual``
import reads it with them): what the six columns cannot say. ``complete`` lists the document pairs
complete under the exported gold policy (article, levels, each document's sentence count); ``rows`` the
sentence pairs whose value has no TSV label (``aligned-or-partial``: a link of unknown kind; ``undecided``:
a tie), with the TSV's columns, the value as the label, and the article's split. With it, a listed pair
the files carry whole is exhaustive gold and its rows keep their values; any other pair is sparse.

Example (a 2 × 2 complete pair with a tie; its three other cells are TSV rows)::

    {"about": "...", "label_policy": "majority-or-single",
     "complete": [{"article": "7", "complex_level": "1", "simple_level": "0",
                   "complex_sentences": 2, "simple_sentences": 2}],
     "rows": [
      {"split": "train", "label": "undecided", "simple_id": "7-0-1-0", "complex_id": "7-1-1-0",
       "simple": "They find food.", "complex": "They found the food.", "gleu": "0.5"}
     ]}
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from annotation.services.corpus.importing.base import InputFile, ParseContext

if TYPE_CHECKING:
    from annotation.services.corpus.importing.formats.wiki_manual import Reader

SIDECAR = "gold_sidecar.json"
SIDECAR_KEYS = ("label", "simple_id", "complex_id", "simple", "complex")


def is_export_folder(names: list[str]) -> bool:
    """``auto``: TSV files with alignapp's sidecar beside them (its ``.json`` would read as ``jsonl``)."""
    bases = [n.rsplit("/", 1)[-1] for n in names]
    return SIDECAR in bases and all(b == SIDECAR or b.lower().endswith(".tsv") for b in bases)


def sidecar_of(reader: Reader, sidecars: list[InputFile], ctx: ParseContext) -> tuple[InputFile, list] | None:
    """The sidecar and its rows (read first: it says which document pairs are complete); one at most."""
    if len(sidecars) > 1:
        ctx.problems.add(sidecars[1].name, f"a second {SIDECAR} (first: {sidecars[0].name}); import one export's "
                                           "wiki-manual folder at a time")
        return None
    if not sidecars:
        return None
    if ctx.gold_meaning == "predictions":
        ctx.warnings.append(f"{sidecars[0].name} left out: its gold (complete document pairs, rows of unknown kind "
                            "and ties) is no prediction")
        return None
    return sidecars[0], read(reader, sidecars[0])


def read(reader: Reader, f: InputFile) -> list[tuple[int, int | None, dict]]:
    """Read :data:`SIDECAR`: its complete document pairs into ``reader.listed``; its rows, to ``reader.add``
    after the TSV files' (``(k, line, row)``: the line where the export wrote it, one a line).
    Problems name the file, the line and the field (``rows[3].label``)."""
    def bad(where: str | None, message: str) -> list:
        reader.problem(f.name, None, where, message)
        return []

    try:
        text = reader.ctx.text(f)
        data = json.loads(text)
    except ValueError as exc:
        return bad(None, f"is not JSON ({exc})")
    if not isinstance(data, dict) or not isinstance(data.get("complete"), list) \
            or not isinstance(data.get("rows"), list):
        return bad(None, "must be an object with the lists \"complete\" and \"rows\" (alignapp's tsv export "
                         "writes it beside the TSV files)")
    listed: dict[tuple[str, str, str], tuple[int, int]] = {}
    for k, entry in enumerate(data["complete"]):
        keys = ("article", "complex_level", "simple_level", "complex_sentences", "simple_sentences")
        if not isinstance(entry, dict) or not all(isinstance(entry.get(key), str) for key in keys[:3]) \
                or not all(isinstance(entry.get(key), int) and entry[key] > 0 for key in keys[3:]):
            return bad(f"complete[{k}]", "must be an object with article, complex_level, simple_level (texts) "
                                         "and complex_sentences, simple_sentences (counts)")
        listed[(entry["article"], entry["complex_level"], entry["simple_level"])] = (
            entry["complex_sentences"], entry["simple_sentences"])
    lines = text.splitlines()
    first = next((n for n, line in enumerate(lines, 1) if line.strip() == '"rows": ['), None)
    at = (lambda k: first + 1 + k) if first is not None and len(lines) >= first + len(data["rows"]) + 2 else (
        lambda k: None)
    rows = []
    for k, row in enumerate(data["rows"]):
        if not isinstance(row, dict) or not all(isinstance(row.get(key), str) for key in SIDECAR_KEYS):
            return bad(f"rows[{k}]", f"must be an object with the texts {', '.join(SIDECAR_KEYS)} "
                                     "(and gleu, split)")
        rows.append((k, at(k), row))
    reader.listed = listed
    return rows


def add_rows(reader: Reader, f: InputFile, rows: list[tuple[int, int | None, dict]]) -> None:
    """The sidecar's rows, after the TSV files' (their articles and splits come first)."""
    for k, line, row in rows:
        split = row.get("split") if row.get("split") in ("train", "dev", "test") else None
        gleu = row.get("gleu") if isinstance(row.get("gleu"), str) else None
        reader.add(f.name, line, [row[key].strip() for key in SIDECAR_KEYS], gleu, split,
                 tuple(f"rows[{k}].{key}" for key in SIDECAR_KEYS), sidecar=True)
        if reader.ctx.problems.full or reader.over:
            return
