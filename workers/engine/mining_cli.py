"""The ``mine`` command of the engine CLI (SPEC §4): MUSS paraphrase mining over a whole corpus.

    python -m workers.engine mine --input DOCS.jsonl --output PAIRS.jsonl [--model PATH]
        [--config JSON] [--language en] [--workers N] [--workdir DIR]

DOCS.jsonl: one document per line, ``{"id", "text"}`` or ``{"id", "paragraphs"}``, optional
``"language"``. PAIRS.jsonl: one mined pair per line, ``{"id", "score", "complex": {"document",
"sentences", "text"}, "simple": {...}}``, best first (see :mod:`workers.engine.mining`).
``--workdir`` keeps the job's chunk files there; running again with the same folder resumes.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_mine_subcommand", "run_mine"]


def run_mine(args: argparse.Namespace) -> int:
    from .cli_common import Progress, parse_config
    from .errors import EngineInputError
    from .mining import MiningConfig, MiningWork, read_documents, run_local, write_pairs

    config = MiningConfig.from_dict(parse_config(args.config))
    if args.workers < 1:
        raise EngineInputError("--workers must be at least 1")
    documents = read_documents(args.input, language=args.language)

    def mine(folder: Any) -> int:
        work = MiningWork.create(folder, documents, config, model=args.model)
        print(f"mining {work.plan['documents']} documents: {work.n_sequences} sequences in {work.n_shards} "
              f"shards, {work.plan['index']} index", file=sys.stderr)
        seconds = run_local(work, workers=args.workers, progress=Progress(sys.stderr))
        n = write_pairs(work.pairs(), args.output)
        stages = ", ".join(f"{k} {v:.1f}s" for k, v in seconds.items())
        print(f"wrote {n} mined pairs to {args.output} ({stages})", file=sys.stderr)
        return 0

    if args.workdir:
        return mine(args.workdir)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="mine-") as tmp:
        return mine(tmp)


def add_mine_subcommand(sub: Any) -> None:
    """Add ``mine`` to the engine CLI's sub-parsers."""
    from .cli_common import config_help
    from .mining.config import MINING_PARAMS
    from .text import SUPPORTED_LANGUAGES

    p = sub.add_parser("mine", help="MUSS paraphrase mining over a corpus (DOCS JSONL in → PAIRS JSONL out)")
    p.add_argument("--input", required=True, help='documents JSONL: {"id", "text"|"paragraphs", "language"?}')
    p.add_argument("--output", required=True, help="mined pairs JSONL")
    p.add_argument("--model", default=None, help="sentence-transformers model path or name (default: bundled MiniLM)")
    p.add_argument("--config", default=None, help=config_help("mining", MINING_PARAMS))
    p.add_argument("--language", default="en", choices=SUPPORTED_LANGUAGES,
                   help="language of documents without a 'language' field")
    p.add_argument("--workers", type=int, default=1, help="processes running each stage's chunks")
    p.add_argument("--workdir", default=None, help="keep the job's chunk files here (resumed when it exists)")
    p.set_defaults(func=run_mine)
