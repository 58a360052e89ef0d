"""What an export contains: its options declared once (:data:`export_options`, the ``Option`` schema: type,
default, help) and parsed once at the edge (API body, command-line flags, the job's params) into a frozen
:class:`ExportOptions`. Each option's help is its documentation (the API schema and ``manage.py export --help``
read it); ``label_policy``'s rule is in review/gold_reading.py (LABEL_POLICY_HELP).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from annotation.errors import DomainError
from annotation.requests import BadOptions, Option, parse_request
from annotation.services.export import formats as export_formats
from annotation.services.export.splits import NAMES, SplitError, validate_policy

KINDS = ("gold", "auto")
LABEL_POLICIES = ("majority-or-single", "majority", "stored")
# The default keeps the annotators' work (issue 18): a researcher exporting "the gold" expects every
# human judgement in it; ties are left out (they wait in adjudication) and stored gold always wins.
DEFAULT_LABEL_POLICY = "majority-or-single"
LABEL_POLICY_HELP = {
    "majority-or-single": "Everything people decided: adjudicated gold, else the annotators' votes (a completed "
                          "article adds a \"not aligned\" vote from its completer on every pair they left "
                          "unlinked) — their majority, or the one vote of a pair only one annotator judged — else "
                          "imported gold. A tie is undecided, imported gold or not. An article one annotator "
                          "completed is complete.",
    "majority": "Adjudicated gold, else the majority of two or more votes (completions' \"not aligned\" "
                "included), else imported gold; a tie is undecided. A pair with one vote has no value (left "
                "out, counted): an article only one annotator completed is not complete, and none of its "
                "links is written as not aligned.",
    "stored": "Only gold stored in the project: imported with the corpus, decided in adjudication, or written "
              "by automatic gold; the annotators' votes and completions are left out (counted). Only articles "
              "imported as exhaustive are complete.",
}
PROVENANCES = ("adjudicated", "majority", "single", "imported", "model", "derived")
OPERATORS = ("gt", "gte", "lt", "lte", "eq")
DEDUP_SIDES = ("both", "complex", "simple")
CRF_BLEU_BAND = (0.1, 0.9)


class ExportError(DomainError, ValueError):
    """Bad export options, or an export that cannot run (the message says what to change)."""


def _names(what: str, valid: tuple[str, ...], *, empty: str | None = None):
    """A clean for a list of names (or comma-separated text) among ``valid``."""
    def clean(value: Any) -> list[str]:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{what} must be a list of strings")
        bad = [v for v in value if v not in valid]
        if bad:
            raise ValueError(f"unknown {what} {', '.join(map(repr, bad))}; choose from: {', '.join(valid)}")
        if empty and not value:
            raise ValueError(empty)
        return value
    return clean


def _formats(value: Any) -> list[str]:
    return _names("formats", export_formats.names(), empty="choose at least one format")(value)


def _labels(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ValueError("labels must be a non-empty list of label values or classes (aligned, partial, not)")
    return value


def _split_policy(value: dict) -> dict:
    try:
        return validate_policy(value).as_dict()
    except SplitError as exc:
        raise ValueError(str(exc)) from exc


def _bleu_band(band: Any) -> list[float] | None:
    """``true`` = the CRF paper's band, ``false`` = off, else ``[low, high]`` within 0..1."""
    if band is True or band is False:
        return list(CRF_BLEU_BAND) if band else None
    if not (isinstance(band, list) and len(band) == 2 and all(NUMBER.problem(b) is None for b in band)
            and 0 <= band[0] <= band[1] <= 1):
        raise ValueError("bleu_band must be [low, high] with 0 ≤ low ≤ high ≤ 1 (BLEU / 100), "
                         "or true for [0.1, 0.9]")
    return [float(band[0]), float(band[1])]


def _level_pairs(value: list) -> list[list[str]]:
    if not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
        raise ValueError("must be a list of [complex_level, simple_level] pairs")
    return [[str(c), str(s)] for c, s in value]


def _ids(value: Any) -> list[int]:
    value = [value] if not isinstance(value, list) else value
    if any(ID.problem(v) for v in value):
        raise ValueError("must be a list of ids")
    return value


def _model_version(value: Any) -> int:
    return _ids(value)[0] if value != [] else None


def _thresholds(value: list) -> list[dict]:
    from annotation.services.alignment.pair_filters import KEY

    out = []
    for k, item in enumerate(value):
        if not isinstance(item, dict) or set(item) != {"key", "op", "value"}:
            raise ValueError(f"thresholds[{k}] must be an object with exactly key, op and value")
        if not isinstance(item["key"], str) or not KEY.match(item["key"]):
            raise ValueError(f"thresholds[{k}].key must be an attribute name (letters, digits, underscores), "
                             f"e.g. sum4simp_T, gain_prob, pivot_fres_gain")
        if item["op"] not in OPERATORS:
            raise ValueError(f"thresholds[{k}].op must be one of {', '.join(OPERATORS)}, got {item['op']!r}")
        if NUMBER.problem(item["value"]):
            raise ValueError(f"thresholds[{k}].value must be a number, got {item['value']!r}")
        out.append({"key": item["key"], "op": item["op"], "value": float(item["value"])})
    return out


def _dedup(allow_paths: bool):
    def clean(value: list) -> list[dict]:
        out = []
        for k, item in enumerate(value):
            if not isinstance(item, dict) or len({"project", "sentences", "path"} & set(item)) != 1:
                raise ValueError(f"dedup[{k}] must be one of {{project, splits}}, {{sentences}} or {{path}}")
            if "project" in item:
                splits = _names(f"dedup[{k}].splits", NAMES)(item.get("splits", list(NAMES)))
                extra = set(item) - {"project", "splits", "name"}
                if extra:
                    raise ValueError(f"dedup[{k}] has unknown key(s) {', '.join(sorted(extra))}")
                out.append({"project": item["project"], "splits": splits, "name": str(item.get("name", ""))})
            elif "sentences" in item:
                sentences = item["sentences"]
                if not isinstance(sentences, list) or not all(isinstance(s, str) for s in sentences):
                    raise ValueError(f"dedup[{k}].sentences must be a list of strings")
                out.append({"sentences": sentences, "name": str(item.get("name", f"inline set {k}"))})
            elif not allow_paths:
                raise ValueError(f"dedup[{k}].path: files on the server can only be named on the command line; "
                                 "send the sentences instead")
            else:
                out.append({"path": str(item["path"]), "name": str(item.get("name", item["path"]))})
        return out
    return clean


NUMBER = Option("value", "float")
ID = Option("id", "int", min=1)


def export_options(*, allow_paths: bool = False) -> tuple[Option, ...]:
    """Every export option: type, default and help (the formats are the registered ones, read when asked);
    ``allow_paths``: ``dedup`` may name files on the server (the command line only)."""
    return (
        Option("kind", "str", "gold", choices=KINDS,
               help="gold (labelled pairs) | auto (a model version's or run's alignment)"),
        Option("formats", "json", list(export_formats.names()), clean=_formats,
               help="the registered formats to write (default all)"),
        Option("splits", "json", list(NAMES), clean=_names("splits", NAMES, empty="choose at least one split"),
               help="which splits to write (default train, dev, test)"),
        Option("split_policy", "object", None, nullable=True, clean=_split_policy,
               help="policy for articles without a split (default: the project's, see splits.py)"),
        Option("label_policy", "str", DEFAULT_LABEL_POLICY, choices=LABEL_POLICIES,
               help="gold only: which decisions count (majority-or-single | majority | stored; see LABEL_POLICY_HELP)"),
        Option("provenance", "json", None, nullable=True, clean=_names("provenance", PROVENANCES),
               help="keep only these provenances (adjudicated, majority, single, imported, model, derived)"),
        Option("model_version", "json", None, nullable=True, clean=_model_version,
               help="auto: id of a ModelVersion (its succeeded runs are exported)"),
        Option("runs", "json", [], clean=_ids, help="auto: ids of alignment runs (instead of or with model_version)"),
        Option("labels", "json", None, nullable=True, clean=_labels,
               help="keep only these labels or classes (default: gold all, auto aligned + partial)"),
        Option("drop_identical", "bool", True,
               help="drop pairs whose sides are identical after normalisation (workers.engine.text.is_identical)"),
        Option("bleu_band", "json", None, nullable=True, clean=_bleu_band,
               help="[low, high] in 0..1: keep pairs whose sentence BLEU lies in the band (true = the CRF paper's "
                    "[0.1, 0.9]; default off)"),
        Option("thresholds", "list", [], clean=_thresholds,
               help='[{"key": "sum4simp_T", "op": "gt", "value": 3.5}, ...] on stored attributes (or "score"); op: '
                    "gt, gte, lt, lte, eq; pairs without the attribute are dropped"),
        Option("level_pairs", "list", None, nullable=True, clean=_level_pairs,
               help="keep only these [complex_level, simple_level] pairs"),
        Option("exclude_level_pairs", "list", [], clean=_level_pairs,
               help='drop these level pairs (e.g. [["0","1"],["1","2"],["2","3"]])'),
        Option("exclude_adjacent", "bool", False, help="drop pairs of adjacent levels (document ranks one apart)"),
        Option("derived", "bool", True, help="compose adjacent-level alignments into non-adjacent ones"),
        Option("dedup", "list", [], clean=_dedup(allow_paths),
               help='evaluation sets to drop pairs against: {"project": id|name, "splits": [...]}, {"sentences": '
                    '[...]} or (command line only) {"path": "file.txt"}'),
        Option("dedup_side", "str", "both", choices=DEDUP_SIDES,
               help="both (default) | complex | simple: which side must not be in the sets"),
        Option("annotator_names", "bool", False,
               help='write usernames in votes (default: pseudonymous "a<user id>")'),
        Option("lock", "bool", True, help="lock the exported articles' splits"),
    )


class ExportOptionsError(BadOptions, ExportError):
    """Bad export options (``problems``: option → why); the API answers them under ``options``."""


@dataclass(frozen=True)
class ExportOptions:
    """The parsed options of one export (:func:`export_options` declares and documents each)."""

    kind: str = "gold"
    formats: list[str] = field(default_factory=lambda: list(export_formats.names()))
    splits: list[str] = field(default_factory=lambda: list(NAMES))
    split_policy: dict | None = None
    label_policy: str = DEFAULT_LABEL_POLICY
    provenance: list[str] | None = None
    model_version: int | None = None
    runs: list[int] = field(default_factory=list)
    labels: list[str] | None = None
    drop_identical: bool = True
    bleu_band: list[float] | None = None
    thresholds: list[dict] = field(default_factory=list)
    level_pairs: list[list[str]] | None = None
    exclude_level_pairs: list[list[str]] = field(default_factory=list)
    exclude_adjacent: bool = False
    derived: bool = True
    dedup: list[dict] = field(default_factory=list)
    dedup_side: str = "both"
    annotator_names: bool = False
    lock: bool = True

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None, *, allow_paths: bool = False) -> ExportOptions:
        """The options of ``raw`` (an absent or null key: its default).

        Raises:
            ExportOptionsError: every unknown key and bad value at once; an auto export without what to export.
        """
        given = {k: v for k, v in dict(raw or {}).items() if v is not None}
        options = parse_request(cls, "export", export_options(allow_paths=allow_paths), given,
                                error=ExportOptionsError.of)
        if options.kind == "auto" and options.model_version is None and not options.runs:
            raise ExportOptionsError("an auto export needs a model_version or runs",
                                     {"kind": "an auto export needs a model_version or runs"})
        return options

    @classmethod
    def stored(cls, kept: Mapping[str, Any]) -> ExportOptions:
        """The options an export's job kept (:meth:`as_dict` of options :meth:`parse` checked when the export was
        asked for), read back as they are: parsed once, at the edge, not again in the worker. A row whose keys
        this version does not know (an older release's) is parsed as a request would be."""
        if set(kept) - {f.name for f in fields(cls)}:
            return cls.parse(kept)
        return cls(**kept)

    def as_dict(self) -> dict:
        return asdict(self)
