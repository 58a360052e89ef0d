import json
import re

from django.core.management.base import BaseCommand, CommandError

from annotation.management.arguments import checked, json_object
from annotation.management.progress import showing
from annotation.services import export
from annotation.services.export.options import DEFAULT_LABEL_POLICY, LABEL_POLICIES
from annotation.services.projects.creation import find_project

THRESHOLD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|==|>|<)\s*(-?[0-9.eE+-]+)$")
OPS = {">": "gt", ">=": "gte", "<": "lt", "<=": "lte", "==": "eq"}


def _list(raw: str | None) -> list[str] | None:
    return [v.strip() for v in raw.split(",") if v.strip()] if raw else None


def _level_pairs(raw: str | None) -> list[list[str]] | None:
    if not raw:
        return None
    out = []
    for item in raw.split(","):
        if "-" not in item:
            raise CommandError(f"level pair {item!r} must look like 0-1 (complex-simple)")
        out.append([part.strip() for part in item.split("-", 1)])
    return out


class Command(BaseCommand):
    help = ("Export a project's gold labels or a model's automatic alignment: wiki-manual TSV, parallel "
            ".src/.dst, JSONL, engine/importer JSONL and a Hugging Face datasets directory, per train/dev/test "
            "split, with a manifest, under MEDIA_ROOT/exports/<id>/. Articles without a split get one first.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("project", help="project name or id")
        parser.add_argument("--kind", choices=export.KINDS, default="gold")
        parser.add_argument("--format", dest="formats", help=f"comma-separated, from {','.join(export.format_names())} (default all)")
        parser.add_argument("--splits", help="comma-separated splits to write (default train,dev,test)")
        parser.add_argument("--ratio", help="split policy for unassigned articles: train,dev,test shares (e.g. 0.7,0.1,0.2)")
        parser.add_argument("--counts", help="split policy: train,dev,test article counts (e.g. 35,5,10 or 350,50,100)")
        parser.add_argument("--seed", type=int, help="seed of the split policy")
        parser.add_argument("--stratify", help="source, levels or meta:<key>")
        parser.add_argument("--label-policy", choices=LABEL_POLICIES,
                            help=f"gold: which pairs have a label (default {DEFAULT_LABEL_POLICY}: stored gold, "
                                 "else the majority of votes, else a single vote; majority: no single votes; "
                                 "stored: only imported/adjudicated gold)")
        parser.add_argument("--provenance", help="keep only these provenances (adjudicated,majority,single,imported,model,derived)")
        parser.add_argument("--model-version", type=int, help="auto: a model version id")
        parser.add_argument("--run", type=int, action="append", dest="runs", help="auto: an alignment run id (repeatable)")
        parser.add_argument("--labels", help="keep only these labels or classes (aligned,partial,not)")
        parser.add_argument("--keep-identical", action="store_true",
                            help="keep pairs whose sides are identical in the training outputs (parallel; every "
                                 "format of an auto export); gold files always keep them")
        parser.add_argument("--bleu-band", nargs="*", type=float, metavar="BOUND",
                            help="keep pairs with sentence BLEU in [low, high] (no values: the CRF paper's 0.1 0.9)")
        parser.add_argument("--threshold", action="append", default=[], metavar="KEY>=VALUE",
                            help="a stored attribute threshold, e.g. sum4simp_T>3.5, gain_prob>=0.5 (repeatable)")
        parser.add_argument("--level-pairs", help="keep only these level pairs, e.g. 0-2,0-3")
        parser.add_argument("--exclude-level-pairs", help="drop these level pairs, e.g. 0-1,1-2,2-3")
        parser.add_argument("--exclude-adjacent", action="store_true", help="drop pairs of adjacent levels")
        parser.add_argument("--no-derived", action="store_true", help="do not derive non-adjacent-level pairs")
        parser.add_argument("--dedup-project", action="append", default=[], metavar="PROJECT[:split,split]",
                            help="drop pairs with a sentence in that project's splits (default dev,test; repeatable)")
        parser.add_argument("--dedup-file", action="append", default=[], metavar="PATH",
                            help="drop pairs with a sentence listed in this file, one per line (repeatable)")
        parser.add_argument("--dedup-side", choices=("both", "complex", "simple"))
        parser.add_argument("--annotator-names", action="store_true", help="write usernames instead of a<user id>")
        parser.add_argument("--no-lock", action="store_true", help="do not lock the exported articles' splits")
        parser.add_argument("--no-zip", action="store_true", help="skip the zip archive")
        parser.add_argument("--options", help="all options as a JSON object (flags given too override it)")
        parser.add_argument("--preview", action="store_true", help="print the counts only; write nothing")

    def options_from(self, o: dict) -> dict:
        raw = json_object(o["options"], "--options") if o["options"] else {}
        raw["kind"] = o["kind"] if o["kind"] != "gold" or "kind" not in raw else raw["kind"]
        simple = {"formats": _list(o["formats"]), "splits": _list(o["splits"]), "label_policy": o["label_policy"],
                  "provenance": _list(o["provenance"]), "model_version": o["model_version"], "runs": o["runs"],
                  "labels": _list(o["labels"]), "level_pairs": _level_pairs(o["level_pairs"]),
                  "exclude_level_pairs": _level_pairs(o["exclude_level_pairs"]), "dedup_side": o["dedup_side"]}
        raw.update({k: v for k, v in simple.items() if v is not None})
        for flag, key, value in (("keep_identical", "drop_identical", False), ("exclude_adjacent", "exclude_adjacent", True),
                                 ("no_derived", "derived", False), ("annotator_names", "annotator_names", True),
                                 ("no_lock", "lock", False)):
            if o[flag]:
                raw[key] = value
        if o["bleu_band"] is not None:
            if len(o["bleu_band"]) not in (0, 2):
                raise CommandError("--bleu-band takes no values or two (low high)")
            raw["bleu_band"] = o["bleu_band"] or True
        thresholds = list(raw.get("thresholds", []))
        for item in o["threshold"]:
            match = THRESHOLD.match(item.strip())
            if not match:
                raise CommandError(f"--threshold {item!r} must look like KEY>=VALUE (operators > >= < <= ==)")
            thresholds.append({"key": match[1], "op": OPS[match[2]], "value": float(match[3])})
        if thresholds:
            raw["thresholds"] = thresholds
        dedup = list(raw.get("dedup", []))
        for item in o["dedup_project"]:
            name, _, split_list = item.partition(":")
            dedup.append({"project": name, "splits": _list(split_list) or ["dev", "test"]})
        dedup += [{"path": path} for path in o["dedup_file"]]
        if dedup:
            raw["dedup"] = dedup
        policy = dict(raw.get("split_policy") or {})
        if o["ratio"] and o["counts"]:
            raise CommandError("give --ratio or --counts, not both")
        for mode in ("ratio", "counts"):
            if o[mode]:
                parts = o[mode].split(",")
                if len(parts) != 3:
                    raise CommandError(f"--{mode} takes three numbers: train,dev,test")
                try:
                    policy.update(mode=mode, **{n: (int if mode == "counts" else float)(v)
                                                for n, v in zip(("train", "dev", "test"), parts)})
                except ValueError as exc:
                    raise CommandError(f"--{mode}: {exc}") from exc
        if o["seed"] is not None:
            policy["seed"] = o["seed"]
        if o["stratify"]:
            policy["stratify"] = o["stratify"]
        if policy:
            raw["split_policy"] = policy
        return raw

    def handle(self, *args, **o):
        try:
            project = find_project(o["project"])
            options = export.ExportOptions.parse(checked(self.options_from(o), "options"), allow_paths=True)
            if o["preview"]:
                result = export.preview(project, options)
                splits = ", ".join(f"{s} {c['pairs']}" for s, c in result["splits"].items())
                self.stdout.write(f"preview of a {options.kind} export of '{project.name}': {result['pairs']} pairs "
                                  f"({splits or 'none'}); dropped {json.dumps(result['dropped'])}; "
                                  f"left out of the training outputs {json.dumps(result['dropped_training'])}; "
                                  f"left out of the tsv {json.dumps(result['left_out'].get('tsv', {}))}")
                for policy, row in (result["policies"] or {}).items():
                    origins = ", ".join(f"{k} {n}" for k, n in row["from"].items())
                    mark = " (chosen)" if policy == options.label_policy else ""
                    self.stdout.write(f"  gold policy {policy}{mark}: {row['pairs']} pairs ({origins})")
                return
            with showing(self.stdout, "export") as display:
                done = export.run_export(project, options, archive=not o["no_zip"], progress=display)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        counts = done.manifest["counts"]["splits"]
        splits = ", ".join(f"{s} {c['pairs']}" for s, c in counts.items())
        self.stdout.write(f"export #{done.pk} ({options.kind}) of '{project.name}': {done.pair_count} pairs "
                          f"({splits or 'none'}) → {export.export_dir(done)} in {done.manifest['timings']['total_s']} s")
