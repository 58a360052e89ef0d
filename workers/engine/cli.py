"""Command line of the engine (SPEC §4): ``python -m workers.engine COMMAND ...``.

Commands:
    align     ``--method M --input IN.jsonl --output OUT.jsonl [--model PATH] [--config JSON]
              [--language en]``: align every article pair; progress on stderr.
    evaluate  ``--pred P.jsonl --gold G.jsonl``: Task 1 / Task 2 P/R/F1, printed as JSON on the
              last line of stdout.
    train     ``--method crf --input TRAIN.jsonl --output MODEL_DIR [--dev DEV.jsonl]
              [--base MODEL] [--config JSON] [--seed N] [--regulariser OTHER.jsonl]``: train pair
              model + CRF + decisions
              on exhaustively annotated article pairs (``gold``, optional ``gold_labels``); a
              line per epoch on stderr, the manifest's held-out metrics as JSON on the last line
              of stdout. ``align --method crf --model MODEL_DIR`` then uses the model.
    mine      ``--input DOCS.jsonl --output PAIRS.jsonl [--model PATH] [--config JSON]``: MUSS
              paraphrase mining over a whole corpus (see :mod:`workers.engine.mining_cli`).

Bad input gives a one-line ``error: file:line: field ...: message`` on stderr and exit status 2;
a model that cannot be loaded gives exit status 1.

Example:
    $ python -m workers.engine align --method tfidf --input in.jsonl --output out.jsonl
    $ python -m workers.engine evaluate --pred out.jsonl --gold in.jsonl
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from .cli_common import Progress, config_help, parse_config
from .errors import EngineError, EngineInputError

__all__ = ["build_parser", "main"]


def _cmd_align(args: argparse.Namespace) -> int:
    from .io import read_pairs, write_alignments
    from .methods import get_aligner

    config = parse_config(args.config)
    pairs = read_pairs(args.input, language=args.language)
    aligner = get_aligner(args.method, config, args.model)
    print(f"aligning {len(pairs)} article pairs with {args.method}", file=sys.stderr)
    alignments = aligner.align(pairs, progress=Progress(sys.stderr))
    n = write_alignments(alignments, args.output)
    n_pairs = sum(len(a.pairs) for a in alignments)
    print(f"wrote {n} lines, {n_pairs} aligned groups to {args.output}", file=sys.stderr)
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .io import read_alignments, read_pairs
    from .metrics import evaluate

    gold = read_pairs(args.gold, language=args.language)
    if not any(p.gold is not None for p in gold):
        raise EngineInputError("no record has a 'gold' field", source=args.gold)
    pred = read_alignments(args.pred)
    result = evaluate(pred, gold, exclude_identical=not args.keep_identical)
    t1, t2 = result["task1"], result["task2"]
    print(f"task1 P {t1['precision']:.4f} R {t1['recall']:.4f} F1 {t1['f1']:.4f}",  # type: ignore[index]
          file=sys.stderr)
    print(f"task2 P {t2['precision']:.4f} R {t2['recall']:.4f} F1 {t2['f1']:.4f}",  # type: ignore[index]
          file=sys.stderr)
    print(json.dumps(result, sort_keys=True))
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    from .io import read_pairs
    from .training import train_aligner

    config = parse_config(args.config)
    pairs = read_pairs(args.input, language=args.language, require_gold=True)
    if not pairs:
        raise EngineInputError("no article pair", source=args.input)
    dev = read_pairs(args.dev, language=args.language, require_gold=True) if args.dev else None
    if dev is not None and not dev:
        raise EngineInputError("no article pair", source=args.dev)
    regulariser = read_pairs(args.regulariser, language=args.language, require_gold=True) \
        if args.regulariser else None
    held = f"{len(dev)} dev article pairs" if dev else "held-out articles of the input"
    print(f"training {args.method} on {len(pairs)} article pairs ({held}), seed {args.seed}",
          file=sys.stderr, flush=True)
    t0 = time.perf_counter()

    def progress(report: Any) -> None:
        print(f"[{time.perf_counter() - t0:7.1f}s] {report.line()}", file=sys.stderr, flush=True)

    manifest = train_aligner(pairs, args.output, dev=dev, base=args.base, config=config,
                             seed=args.seed, progress=progress, regulariser=regulariser)
    summary = {"output": str(args.output), "seconds": manifest["seconds"]["total"],
               "thresholds": manifest["thresholds"], "heldout": manifest["metrics"]["heldout"]}
    print(f"wrote {args.output} in {summary['seconds']:.0f}s", file=sys.stderr)
    print(json.dumps(summary, sort_keys=True))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (one sub-parser per command)."""
    from .methods import available_methods
    from .text import SUPPORTED_LANGUAGES
    from .training_config import TRAIN_PARAMS

    parser = argparse.ArgumentParser(prog="python -m workers.engine",
                                     description="alignapp sentence alignment engine")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("align", help="align article pairs (JSONL in → JSONL out)")
    p.add_argument("--method", required=True, choices=available_methods())
    p.add_argument("--input", required=True, help="input JSONL (SPEC §4)")
    p.add_argument("--output", required=True, help="output JSONL")
    p.add_argument("--model", default=None, help="model path or name for the method")
    p.add_argument("--config", default=None, help="method options as a JSON object (or @file)")
    p.add_argument("--language", default="en", choices=SUPPORTED_LANGUAGES,
                   help="language for splitting {'text': ...} documents")
    p.set_defaults(func=_cmd_align)

    p = sub.add_parser("evaluate", help="Task 1/2 precision, recall, F1 against gold")
    p.add_argument("--pred", required=True, help="predicted alignments JSONL")
    p.add_argument("--gold", required=True, help="input JSONL with 'gold' links")
    p.add_argument("--language", default="en", choices=SUPPORTED_LANGUAGES)
    p.add_argument("--keep-identical", action="store_true",
                   help="do not exclude identical sentence pairs")
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("train", help="train an aligner on exhaustively annotated article pairs")
    p.add_argument("--method", required=True, choices=["crf"])
    p.add_argument("--input", required=True, help="training JSONL with 'gold' (and 'gold_labels')")
    p.add_argument("--output", required=True, help="MODEL_DIR to write")
    p.add_argument("--dev", default=None,
                   help="held-out JSONL for early stopping and thresholds (default: part of --input)")
    p.add_argument("--base", default=None,
                   help="encoder to start the pair model from (default: bundled all-MiniLM-L6-v2)")
    p.add_argument("--config", default=None, help=config_help("training", TRAIN_PARAMS))
    p.add_argument("--regulariser", default=None,
                   help="optional JSONL of another corpus's gold: its links (and hard negatives) also train "
                        "the pair model, not the CRF, cut-offs or labeller (another corpus may label differently)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--language", default="en", choices=SUPPORTED_LANGUAGES,
                   help="language for splitting {'text': ...} documents")
    p.set_defaults(func=_cmd_train)

    from .simplicity.cli import add_subcommands  # pair-level tools: score, metric sari

    add_subcommands(sub)

    from .mining_cli import add_mine_subcommand  # corpus mining: mine

    add_mine_subcommand(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except EngineInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"error: no such file: {exc.filename}", file=sys.stderr)
        return 2
    except EngineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # bad option values (messages list the valid ones)
        print(f"error: {exc}", file=sys.stderr)
        return 2
