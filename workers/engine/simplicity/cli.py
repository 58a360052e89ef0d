"""Pair-level CLI subcommands (SPEC §4): ``score`` and ``metric sari``.

Wire into the engine CLI with ``simplicity.cli.add_subcommands(subparsers)``; every subparser
sets ``func`` to its handler, which takes the parsed ``argparse.Namespace`` and returns an exit
code. Run standalone with ``python -m workers.engine.simplicity.cli ...``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_subcommands", "main", "run_metric", "run_score"]

METRICS = ("sari",)


def _read_lines(path: str) -> list[str]:
    text = Path(path).read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def run_metric(args: argparse.Namespace) -> int:
    """``metric sari --orig O --sys S --refs R1 [R2 ...]``: print corpus SARI as one JSON line."""
    from .sari import corpus_sari

    if args.metric not in METRICS:
        print(f"unknown metric {args.metric!r}; choose one of: {', '.join(METRICS)}", file=sys.stderr)
        return 2
    orig, sys_ = _read_lines(args.orig), _read_lines(args.sys)
    refs = [_read_lines(r) for r in args.refs]
    try:
        result = corpus_sari(
            orig, sys_, refs, lowercase=not args.no_lowercase,
            use_f1_for_deletion=not args.del_precision, use_paper_version=args.paper_version,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


def run_score(args: argparse.Namespace) -> int:
    """``score --input PAIRS --output OUT [--reference REF]``: add ``attributes`` to every pair."""
    from ..errors import EngineError
    from .pairs import read_pairs, write_jsonl
    from .score import score_pairs

    try:
        pairs = list(read_pairs(args.input))
        reference = list(read_pairs(args.reference)) if args.reference else None
        lexicon = cefr = flt = clf = None
        if args.lexicon:
            from .sum4simp_filter import load_lexicon

            lexicon = load_lexicon(args.lexicon)
        if args.cefr_lexicon:
            from .gain_features import load_cefr_lexicon

            cefr = load_cefr_lexicon(args.cefr_lexicon)
        if args.sum4simp_filter:
            from .sum4simp_filter import Sum4SimpFilter

            flt = Sum4SimpFilter.load(args.sum4simp_filter)
        if args.gain_classifier:
            from .gain_classifier import GainClassifier

            clf = GainClassifier.load(args.gain_classifier)
        report = score_pairs(
            pairs, reference, language=args.language,
            parser=None if args.parser == "none" else args.parser,
            lexicon=lexicon, cefr_lexicon=cefr, sum4simp_filter=flt, gain_classifier=clf,
        )
    except (EngineError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    def rows() -> Any:
        for p, attrs in zip(pairs, report.attributes):
            row: dict[str, Any] = {"id": p.id, "complex": p.complex, "simple": p.simple}
            if p.refs:
                row["refs"] = list(p.refs)
            row.update(p.extra)
            row["attributes"] = attrs
            yield row

    n = write_jsonl(args.output, rows())
    print(json.dumps({"pairs": n, "skipped": report.skipped, **report.info}))
    return 0


def add_subcommands(subparsers: Any) -> None:
    """Register ``score`` and ``metric`` on an ``argparse`` subparsers object."""
    sc = subparsers.add_parser("score", help="add every simplicity attribute (SPEC §5.4–5.7) to a pairs JSONL")
    sc.add_argument("--input", required=True, help='pairs JSONL: {"id","complex","simple","refs":[...]}')
    sc.add_argument("--output", required=True, help="output JSONL (input pairs + 'attributes')")
    sc.add_argument("--reference", help="reference simplification pairs JSONL (Sum4Simp fits, odds ratios)")
    sc.add_argument("--language", default="en", help="ISO 639-1 code (default en)")
    sc.add_argument("--parser", default="auto", help="spaCy pipeline name, 'auto' or 'none'")
    sc.add_argument("--lexicon", help="word<TAB>complexity TSV for Sum4Simp (default: wordfreq)")
    sc.add_argument("--cefr-lexicon", help="word<TAB>CEFR level TSV for WIVICO (default: wordfreq bands)")
    sc.add_argument("--sum4simp-filter", help="fitted Sum4Simp filter JSON (instead of --reference)")
    sc.add_argument("--gain-classifier", help="directory of a trained WIVICO gain classifier")
    sc.set_defaults(func=run_score)

    mt = subparsers.add_parser("metric", help="corpus-level metrics, e.g. SARI exactly as EASSE")
    mt.add_argument("metric", choices=METRICS)
    mt.add_argument("--orig", required=True, help="source sentences, one per line")
    mt.add_argument("--sys", required=True, help="system outputs, one per line")
    mt.add_argument("--refs", required=True, nargs="+", help="reference files, one per line each")
    mt.add_argument("--no-lowercase", action="store_true", help="keep case (EASSE lowercase=False)")
    mt.add_argument("--del-precision", action="store_true", help="precision-only deletion (Xu et al. 2016)")
    mt.add_argument("--paper-version", action="store_true", help="average P/R over n before F1")
    mt.set_defaults(func=run_metric)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers.engine.simplicity.cli")
    add_subcommands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
