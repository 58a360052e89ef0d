"""What an export contains: validated options (API body, command-line flags and job params share them).

Every key, its default and meaning::

    kind            "gold" (labelled pairs) | "auto" (a model version's or run's alignment)
    formats         the registered formats (``formats/``: tsv, parallel, jsonl, articles, hf; default all)
    splits          which splits to write (default train, dev, test)
    split_policy    policy for articles without a split (default: the project's, see splits.py)
    label_policy    gold only: "majority-or-single" (default: adjudicated gold, else the majority of
                    ≥ 2 counted votes or the only vote, completions' implied nots included, else
                    imported gold; ties undecided) | "majority" (as it, without single votes) |
                    "stored" (Adjudication rows only: imported, adjudicated and automatic gold);
                    the rule: review/gold_reading.py (LABEL_POLICY_HELP)
    provenance      keep only these provenances (adjudicated, majority, single, imported, model, derived)
    model_version   auto: id of a ModelVersion (its succeeded runs are exported)
    runs            auto: ids of alignment runs (instead of or with model_version)
    labels          keep only these labels or classes (default: gold all, auto aligned + partial)
    drop_identical  drop pairs whose sides are identical after normalisation (Unicode, case, punctuation,
                    spacing: ``workers.engine.text.is_identical``; default true)
    bleu_band       [low, high] in 0..1: keep pairs whose sentence BLEU lies in the band
                    (``true`` = the CRF paper's [0.1, 0.9]; default off)
    thresholds      [{"key": "sum4simp_T", "op": "gt", "value": 3.5}, ...] on stored attributes
                    (or "score"); op ∈ gt, gte, lt, lte, eq; pairs without the attribute are dropped
    level_pairs     keep only these [complex_level, simple_level] pairs
    exclude_level_pairs   drop these level pairs (e.g. [["0","1"],["1","2"],["2","3"]])
    exclude_adjacent      drop pairs of adjacent levels (document ranks one apart)
    derived         compose adjacent-level alignments into non-adjacent ones (default true)
    dedup           evaluation sets to drop pairs against: {"project": id|name, "splits": [...]},
                    {"sentences": [...]} or (command line only) {"path": "file.txt"}
    dedup_side      "both" (default) | "complex" | "simple": which side must not be in the sets
    annotator_names write usernames in votes (default false: pseudonymous "a<user id>")
    lock            lock the exported articles' splits (default true)
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from annotation.errors import DomainError
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


@dataclass
class ExportOptions:
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

    def as_dict(self) -> dict:
        return asdict(self)


def _choices(name: str, value, valid: tuple[str, ...]) -> list[str]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ExportError(f"{name} must be a list of strings")
    bad = [v for v in value if v not in valid]
    if bad:
        raise ExportError(f"unknown {name} {', '.join(map(repr, bad))}; choose from: {', '.join(valid)}")
    return value


def _one_of(name: str, value, valid: tuple[str, ...]) -> str:
    if value not in valid:
        raise ExportError(f"{name} must be one of {', '.join(valid)}, got {value!r}")
    return value


def _labels(value) -> list[str]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ExportError("labels must be a non-empty list of label values or classes (aligned, partial, not)")
    return value


def _bleu_band(band) -> list[float]:
    """``true`` = the CRF paper's band, else ``[low, high]`` within 0..1."""
    if band is True:
        return list(CRF_BLEU_BAND)
    if not (isinstance(band, list) and len(band) == 2 and all(isinstance(b, (int, float)) and not isinstance(b, bool)
                                                            for b in band) and 0 <= band[0] <= band[1] <= 1):
        raise ExportError("bleu_band must be [low, high] with 0 ≤ low ≤ high ≤ 1 (BLEU / 100), or true for [0.1, 0.9]")
    return [float(band[0]), float(band[1])]


def _bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise ExportError(f"{name} must be true or false, got {value!r}")
    return value


def _level_pairs(name: str, value) -> list[list[str]]:
    if not isinstance(value, list) or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
        raise ExportError(f"{name} must be a list of [complex_level, simple_level] pairs")
    return [[str(c), str(s)] for c, s in value]


def _ids(name: str, value) -> list[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ExportError(f"{name} must be a list of ids")
    return value


def _thresholds(value) -> list[dict]:
    if not isinstance(value, list):
        raise ExportError("thresholds must be a list of {key, op, value}")
    from annotation.services.alignment.pair_filters import KEY

    out = []
    for k, item in enumerate(value):
        if not isinstance(item, dict) or set(item) != {"key", "op", "value"}:
            raise ExportError(f"thresholds[{k}] must be an object with exactly key, op and value")
        if not isinstance(item["key"], str) or not KEY.match(item["key"]):
            raise ExportError(f"thresholds[{k}].key must be an attribute name (letters, digits, underscores), "
                              f"e.g. sum4simp_T, gain_prob, pivot_fres_gain")
        if item["op"] not in OPERATORS:
            raise ExportError(f"thresholds[{k}].op must be one of {', '.join(OPERATORS)}, got {item['op']!r}")
        number = item["value"]
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            raise ExportError(f"thresholds[{k}].value must be a number, got {number!r}")
        out.append({"key": item["key"], "op": item["op"], "value": float(number)})
    return out


def _dedup(value, *, allow_paths: bool) -> list[dict]:
    if not isinstance(value, list):
        raise ExportError("dedup must be a list of evaluation sets")
    out = []
    for k, item in enumerate(value):
        if not isinstance(item, dict) or len({"project", "sentences", "path"} & set(item)) != 1:
            raise ExportError(f"dedup[{k}] must be one of {{project, splits}}, {{sentences}} or {{path}}")
        if "project" in item:
            splits = _choices(f"dedup[{k}].splits", item.get("splits", list(NAMES)), NAMES)
            extra = set(item) - {"project", "splits", "name"}
            if extra:
                raise ExportError(f"dedup[{k}] has unknown key(s) {', '.join(sorted(extra))}")
            out.append({"project": item["project"], "splits": splits, "name": str(item.get("name", ""))})
        elif "sentences" in item:
            sentences = item["sentences"]
            if not isinstance(sentences, list) or not all(isinstance(s, str) for s in sentences):
                raise ExportError(f"dedup[{k}].sentences must be a list of strings")
            out.append({"sentences": sentences, "name": str(item.get("name", f"inline set {k}"))})
        else:
            if not allow_paths:
                raise ExportError(f"dedup[{k}].path: files on the server can only be named on the command line; "
                                  "send the sentences instead")
            out.append({"path": str(item["path"]), "name": str(item.get("name", item["path"]))})
    return out


def validate(raw: dict | None, *, allow_paths: bool = False) -> ExportOptions:
    """:class:`ExportOptions` from a dict; unknown keys and bad values raise :class:`ExportError`."""
    raw = dict(raw or {})
    known = set(ExportOptions.__dataclass_fields__)
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ExportError(f"unknown export option(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}")
    opts = ExportOptions()
    kind = opts.kind = _one_of("kind", raw.get("kind", "gold"), KINDS)
    if "formats" in raw:
        opts.formats = _choices("formats", raw["formats"], export_formats.names())
        if not opts.formats:
            raise ExportError("choose at least one format")
    if "splits" in raw:
        opts.splits = _choices("splits", raw["splits"], NAMES)
        if not opts.splits:
            raise ExportError("choose at least one split")
    if raw.get("split_policy") is not None:
        try:
            opts.split_policy = validate_policy(raw["split_policy"]).as_dict()
        except SplitError as exc:
            raise ExportError(str(exc)) from exc
    if "label_policy" in raw:
        opts.label_policy = _one_of("label_policy", raw["label_policy"], LABEL_POLICIES)
    if raw.get("provenance") is not None:
        opts.provenance = _choices("provenance", raw["provenance"], PROVENANCES)
    if raw.get("model_version") is not None:
        opts.model_version = _ids("model_version", raw["model_version"])[0]
    if raw.get("runs"):
        opts.runs = _ids("runs", raw["runs"])
    if kind == "auto" and opts.model_version is None and not opts.runs:
        raise ExportError("an auto export needs a model_version or runs")
    if raw.get("labels") is not None:
        opts.labels = _labels(raw["labels"])
    for name in ("drop_identical", "exclude_adjacent", "derived", "annotator_names", "lock"):
        if name in raw:
            setattr(opts, name, _bool(name, raw[name]))
    if raw.get("bleu_band") not in (None, False):
        opts.bleu_band = _bleu_band(raw["bleu_band"])
    if raw.get("thresholds"):
        opts.thresholds = _thresholds(raw["thresholds"])
    if raw.get("level_pairs") is not None:
        opts.level_pairs = _level_pairs("level_pairs", raw["level_pairs"])
    if raw.get("exclude_level_pairs"):
        opts.exclude_level_pairs = _level_pairs("exclude_level_pairs", raw["exclude_level_pairs"])
    if raw.get("dedup"):
        opts.dedup = _dedup(raw["dedup"], allow_paths=allow_paths)
    if "dedup_side" in raw:
        opts.dedup_side = _one_of("dedup_side", raw["dedup_side"], DEDUP_SIDES)
    return opts
