"""Corpus-scale MUSS paraphrase mining in idempotent chunks (MUSS §3.1, App. A.1; SPEC §4 ``mine``).

:func:`workers.engine.simplicity.muss_mining.mine_paraphrases` mines a pool held in memory in one
call. Here the same algorithm runs over a whole corpus as a *job folder* whose work is cut into
chunks that any number of workers can run, in any order within a stage, more than once:

==========  ========  ===========================================================================
stage       chunks    writes
==========  ========  ===========================================================================
(plan)      1         ``documents.jsonl`` (sentences per document), ``sequences.npy`` (document,
                      first and end sentence of every non-noisy sequence of ≤ 300 characters),
                      ``plan.json`` (config, model, shards; written last: the job exists once it is)
encode      n shards  ``vectors/NNNNN.npy``: unit-length encoder embeddings of one shard of sequences
index       1         ``index.faiss``: exact ``IndexFlatIP`` up to ``exact_limit`` sequences, else
                      ``IVF{nlist},SQ8`` (trained on a sample, shards added one at a time; nprobe 16)
search      n shards  ``candidates/NNNNN.npz``: the shard's queries' top-k admissible neighbours
                      that pass the distance bound, the margin and the near-identical /
                      containment / evaluation-set filters
merge       1         ``pairs.jsonl``: symmetric duplicates dropped, each pair oriented by Flesch
                      Reading Ease (the side that reads more simply is ``simple``)
==========  ========  ===========================================================================

Every output is written to a temporary name and renamed into place, so a file that exists is
complete and a chunk whose file exists is skipped: a chunk re-delivered after a worker died, or
run twice by two workers, does no harm, and a job resumes where it stopped. Each output has a
``.json`` sidecar (seconds, rows, which process ran it) written before it, for per-stage timings.

Embeddings are the engine's sentence encoder (bundled all-MiniLM-L6-v2 unless a model is given).
MUSS used 1024-d LASER vectors reduced by PCA to 512 before SQ8; MiniLM's 384 dimensions are
quantised directly. Distances are squared L2 between unit vectors (= 2 − 2·cosine); the score of
a mined pair is its cosine.

Example:
    >>> docs = [CorpusDocument("a", ("The cat sat on the mat.",)), CorpusDocument("b", ("A dog ran home",))]
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     work = MiningWork.create(tmp, docs, MiningConfig())
    ...     (work.n_sequences, work.n_shards, work.current_stage())
    (2, 1, 'encode')
"""
from __future__ import annotations

import json
import math
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO, Any

import numpy as np

from .errors import EngineInputError, check_options
from .simplicity.muss_mining import (
    SAME_DOCUMENT_MODES,
    PoolMeta,
    _norm,
    extract_sequences,
    filter_candidates,
    is_noisy,
    search_admissible,
)
from .text import SUPPORTED_LANGUAGES, split_document

__all__ = [
    "STAGES",
    "CorpusDocument",
    "MinedSide",
    "CorpusPair",
    "MiningConfig",
    "MiningWork",
    "parse_document",
    "read_documents",
    "write_pairs",
    "run_local",
    "mine_corpus",
]

STAGES: tuple[str, ...] = ("encode", "index", "search", "merge")
"""The chunked stages, in order (the plan is made when the job is created)."""

PathOrFile = str | Path | IO[str]


# --- input ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CorpusDocument:
    """One document of the corpus: its id and flattened sentences."""

    id: str
    sentences: tuple[str, ...]
    language: str = "en"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_document(obj: Any, *, language: str = "en", source: str | None = None,
                   line: int | None = None) -> CorpusDocument:
    """One DOCS.jsonl record: ``{"id", "text"}`` or ``{"id", "paragraphs"}``, optional ``"language"``.

    Raises:
        EngineInputError: with the file, line and field at fault.

    Example:
        >>> parse_document({"id": 7, "text": "It rains. We stay in."}).sentences
        ('It rains.', 'We stay in.')
    """
    where: dict[str, Any] = {"source": source, "line": line}
    if not isinstance(obj, dict):
        raise EngineInputError(f"a record must be a JSON object, got {type(obj).__name__}", **where)
    if "id" not in obj:
        raise EngineInputError("is missing", field="id", **where)
    rid = obj["id"]
    if not (isinstance(rid, str) or _is_int(rid)) or rid == "":
        raise EngineInputError("must be a non-empty string or an integer", field="id", **where)
    lang = obj.get("language", language)
    if lang not in SUPPORTED_LANGUAGES:
        raise EngineInputError(f"unsupported language {lang!r}; choose one of: {', '.join(SUPPORTED_LANGUAGES)}",
                               field="language", **where)
    has_p, has_t = "paragraphs" in obj, "text" in obj
    if has_p == has_t:
        raise EngineInputError("give exactly one of 'paragraphs' or 'text'", field="text", **where)
    if has_t:
        if not isinstance(obj["text"], str):
            raise EngineInputError("must be a string", field="text", **where)
        sentences = [s for p in split_document(obj["text"], lang) for s in p]
    else:
        paras = obj["paragraphs"]
        if not isinstance(paras, list):
            raise EngineInputError("must be a list of paragraphs (lists of sentence strings)",
                                   field="paragraphs", **where)
        sentences = []
        for pi, para in enumerate(paras):
            if not isinstance(para, list):
                raise EngineInputError("must be a list of sentence strings", field=f"paragraphs[{pi}]", **where)
            for si, sent in enumerate(para):
                if not isinstance(sent, str):
                    raise EngineInputError(f"must be a string, got {type(sent).__name__}",
                                           field=f"paragraphs[{pi}][{si}]", **where)
            sentences += para
    return CorpusDocument(str(rid), tuple(sentences), lang)


def read_documents(src: PathOrFile, *, language: str = "en") -> list[CorpusDocument]:
    """Read DOCS.jsonl (one document per line; blank lines skipped; a repeated id is an error).

    Raises:
        EngineInputError: malformed JSON or record (file, line and field in the message).
        FileNotFoundError: ``src`` is a path that does not exist.
    """
    from .io import _iter_json

    seen: dict[str, int] = {}
    out = []
    for obj, name, lineno in _iter_json(src):
        doc = parse_document(obj, language=language, source=name, line=lineno)
        if doc.id in seen:
            raise EngineInputError(f"duplicate id {doc.id!r} (first on line {seen[doc.id]})",
                                   source=name, line=lineno, field="id")
        seen[doc.id] = lineno
        out.append(doc)
    return out


# --- output -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class MinedSide:
    """One side of a mined pair: the document's id, the sentence indices, the joined text."""

    document: str
    sentences: tuple[int, ...]
    text: str


@dataclass(frozen=True)
class CorpusPair:
    """A mined paraphrase pair, oriented: ``simple`` has the higher Flesch Reading Ease."""

    id: str
    score: float
    complex: MinedSide
    simple: MinedSide
    features: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self, *, with_features: bool = False) -> dict[str, Any]:
        """The PAIRS.jsonl record (SPEC §4); ``features`` only on request (the job's own file)."""
        out: dict[str, Any] = {
            "id": self.id, "score": round(float(self.score), 6),
            "complex": {"document": self.complex.document, "sentences": list(self.complex.sentences),
                        "text": self.complex.text},
            "simple": {"document": self.simple.document, "sentences": list(self.simple.sentences),
                       "text": self.simple.text},
        }
        if with_features:
            out["features"] = {k: round(float(v), 6) for k, v in self.features.items()}
        return out

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> CorpusPair:
        def side(d: Mapping[str, Any]) -> MinedSide:
            return MinedSide(str(d["document"]), tuple(int(i) for i in d["sentences"]), str(d["text"]))

        return cls(str(obj["id"]), float(obj["score"]), side(obj["complex"]), side(obj["simple"]),
                   dict(obj.get("features") or {}))


def write_pairs(pairs: Iterable[CorpusPair], dst: PathOrFile) -> int:
    """Write PAIRS.jsonl (the contract's keys only); returns the number of lines."""
    own = isinstance(dst, (str, Path))
    fh: IO[str] = open(dst, "w", encoding="utf-8") if own else dst  # type: ignore[assignment]
    n = 0
    try:
        for p in pairs:
            fh.write(json.dumps(p.to_dict(), ensure_ascii=False) + "\n")
            n += 1
    finally:
        if own:
            fh.close()
    return n


# --- configuration ----------------------------------------------------------------------------

@dataclass(frozen=True)
class MiningConfig:
    """Parameters of a mining job (``--config`` keys; defaults of MUSS A.1 where they carry over).

    ``max_distance`` 0.5 (cosine ≥ 0.75) replaces MUSS's 0.05, which is for compressed LASER
    vectors; ``same_document="any"`` drops every pair of two sequences of one document (A.1:
    "we remove paraphrases that come from the same document"), ``"overlapping"`` only those of
    overlapping windows (§3.1), ``"keep"`` only a sequence with itself.
    ``shard_size`` sequences per encode/search chunk; ``nlist`` None = 4·√N (at most N/39).
    ``exact_limit`` 20,000: measured with MiniLM on 59k sequences (``bench/mining_bench.py``), exact
    search took 36.7 s and IVF974,SQ8 10.2 s including its training, finding 99.7% of the exact
    miner's pairs; with exact ∝ N² and IVF ∝ N (training) + N^1.5 (search) they cross near 13k.
    """

    max_chars: int = 300
    max_punctuation: float = 0.10
    k: int = 8
    max_distance: float = 0.5
    max_relative: float = 0.6
    min_change: float = 0.20
    same_document: str = "any"
    exclude_same_document_first: bool = True
    evaluation_set: tuple[str, ...] = ()
    exact_limit: int = 20_000
    nlist: int | None = None
    nprobe: int = 16
    shard_size: int = 4096
    seed: int = 0
    device: str | None = None

    @classmethod
    def from_dict(cls, config: Mapping[str, Any] | None) -> MiningConfig:
        """Validate ``config`` (unknown keys and bad values raise ``ValueError`` naming them).

        Example:
            >>> MiningConfig.from_dict({"k": 4}).k
            4
        """
        config = dict(config or {})
        names = {f.name for f in fields(cls)}
        check_options("mine", config, names)
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in config:
                continue
            v = config[f.name]
            default = f.default
            if f.name == "evaluation_set":
                if not (isinstance(v, list) and all(isinstance(t, str) for t in v)):
                    raise ValueError("mine option evaluation_set must be a list of texts")
                v = tuple(v)
            elif f.name in ("nlist", "device"):
                ok = v is None or (isinstance(v, str) if f.name == "device" else (_is_int(v) and v > 0))
                if not ok:
                    raise ValueError(f"mine option {f.name} must be {'a device name' if f.name == 'device' else 'a positive integer'} or null")
            elif isinstance(default, bool):
                if not isinstance(v, bool):
                    raise ValueError(f"mine option {f.name} must be true or false")
            elif isinstance(default, int):
                if not _is_int(v) or v < (0 if f.name == "seed" else 1):
                    raise ValueError(f"mine option {f.name} must be a positive integer, got {v!r}")
            elif isinstance(default, float):
                if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
                    raise ValueError(f"mine option {f.name} must be a non-negative number, got {v!r}")
                v = float(v)
            elif f.name == "same_document" and v not in SAME_DOCUMENT_MODES:
                raise ValueError(f"unknown same_document {v!r}; choose one of: {', '.join(SAME_DOCUMENT_MODES)}")
            values[f.name] = v
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["evaluation_set"] = list(self.evaluation_set)
        return out


# --- the job folder ---------------------------------------------------------------------------

def _atomic_write(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Write ``path`` via a unique temporary name in the same folder, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _atomic_json(path: Path, value: Any) -> None:
    _atomic_write(path, lambda fh: fh.write(json.dumps(value, ensure_ascii=False).encode("utf-8")))


def worker_name() -> str:
    """Who ran a chunk: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


STAT_KEYS = ("sequences", "noisy", "candidates", "too_far", "margin", "near_identical", "contained",
             "same_document", "evaluation_set", "duplicate", "kept")


def _fres(text: str, language: str) -> float:
    from .simplicity.readability import FRES_COEFFICIENTS, fres

    return fres(text, language if language in FRES_COEFFICIENTS else "en")


class MiningWork:
    """A mining job in a folder (see the module docstring for the files and stages).

    Create it once with :meth:`create` (idempotent: an existing job is opened), then run
    :meth:`run_chunk` for every chunk of :meth:`missing` of :meth:`current_stage` until it is
    None; :meth:`pairs` reads the result.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        plan_path = self.folder / "plan.json"
        if not plan_path.exists():
            raise FileNotFoundError(str(plan_path))
        self.plan: dict[str, Any] = json.loads(plan_path.read_text(encoding="utf-8"))
        known = {f.name for f in fields(MiningConfig)}  # a job planned by another version may have more keys
        self.config = MiningConfig.from_dict({k: v for k, v in self.plan["config"].items() if k in known})
        self.model: str | None = self.plan.get("model")
        self._documents: list[CorpusDocument] | None = None
        self._sequences: np.ndarray | None = None
        self._index: Any = None
        self._eval: set[str] | None = None

    # -- creation --------------------------------------------------------------------------

    @staticmethod
    def exists(folder: str | Path) -> bool:
        return (Path(folder) / "plan.json").exists()

    @classmethod
    def create(cls, folder: str | Path, documents: Iterable[CorpusDocument], config: MiningConfig,
               model: str | None = None) -> MiningWork:
        """Plan a job: documents → sequences (noisy ones dropped) → shards. Opens it if it exists."""
        folder = Path(folder)
        if cls.exists(folder):
            return cls(folder)
        t0 = time.perf_counter()
        folder.mkdir(parents=True, exist_ok=True)
        rows: list[tuple[int, int, int]] = []
        n_all = noisy = 0
        n_docs = n_sentences = 0
        lines = []
        for d_index, doc in enumerate(documents):
            lines.append(json.dumps({"id": doc.id, "language": doc.language, "sentences": list(doc.sentences)},
                                    ensure_ascii=False))
            n_docs += 1
            n_sentences += len(doc.sentences)
            for s in extract_sequences(doc.id, doc.sentences, config.max_chars):
                n_all += 1
                if is_noisy(s.text, config.max_punctuation):
                    noisy += 1
                else:
                    rows.append((d_index, s.start, s.end))
        seq = np.array(rows, dtype=np.int64).reshape(-1, 3)
        _atomic_write(folder / "documents.jsonl", lambda fh: fh.write(("\n".join(lines) + "\n").encode("utf-8")))
        _atomic_write(folder / "sequences.npy", lambda fh: np.save(fh, seq))
        n = len(seq)
        exact = n <= config.exact_limit
        nlist = None if exact else (config.nlist or max(1, min(n // 39, int(4 * math.sqrt(n)))))
        plan = {
            "config": config.to_dict(), "model": model, "documents": n_docs, "sentences": n_sentences,
            "sequences": n, "sequences_extracted": n_all, "noisy": noisy,
            "shard_size": config.shard_size, "shards": max(1, math.ceil(n / config.shard_size)) if n else 0,
            "index": "IndexFlatIP" if exact else f"IVF{nlist},SQ8", "nlist": nlist,
            "nprobe": None if exact else min(config.nprobe, nlist or 1),
            "plan_seconds": round(time.perf_counter() - t0, 3), "planned_by": worker_name(),
        }
        _atomic_json(folder / "plan.json", plan)
        return cls(folder)

    # -- layout ----------------------------------------------------------------------------

    @property
    def n_sequences(self) -> int:
        return int(self.plan["sequences"])

    @property
    def n_shards(self) -> int:
        return int(self.plan["shards"])

    def shard_rows(self, shard: int) -> range:
        size = int(self.plan["shard_size"])
        return range(shard * size, min(self.n_sequences, (shard + 1) * size))

    def chunks(self, stage: str) -> list[int]:
        """The chunk numbers of ``stage`` (shards for encode/search; one chunk, 0, otherwise)."""
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}; choose one of: {', '.join(STAGES)}")
        if stage in ("encode", "search"):
            return list(range(self.n_shards))
        return [0]

    def output(self, stage: str, chunk: int = 0) -> Path:
        """The file whose existence marks the chunk done."""
        return {
            "encode": self.folder / "vectors" / f"{chunk:05d}.npy",
            "index": self.folder / "index.faiss",
            "search": self.folder / "candidates" / f"{chunk:05d}.npz",
            "merge": self.folder / "pairs.jsonl",
        }[stage]

    def _sidecar(self, stage: str, chunk: int = 0) -> Path:
        out = self.output(stage, chunk)
        return out.with_name(out.name.split(".")[0] + f".{stage}.json")

    def is_done(self, stage: str, chunk: int = 0) -> bool:
        if stage == "index" and self.n_sequences == 0:
            return True
        return self.output(stage, chunk).exists()

    def missing(self, stage: str) -> list[int]:
        return [c for c in self.chunks(stage) if not self.is_done(stage, c)]

    def current_stage(self) -> str | None:
        """The first stage with a missing chunk (its chunks can run in parallel); None when done."""
        for stage in STAGES:
            if self.missing(stage):
                return stage
        return None

    def claim(self, name: str) -> bool:
        """True for exactly one caller per ``name`` (an exclusively created marker file): lets the
        worker that completes a stage, and only it, start the next one."""
        path = self.folder / "claims" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    # -- data ------------------------------------------------------------------------------

    @property
    def documents(self) -> list[CorpusDocument]:
        if self._documents is None:
            with open(self.folder / "documents.jsonl", encoding="utf-8") as fh:
                self._documents = [CorpusDocument(r["id"], tuple(r["sentences"]), r["language"])
                                   for r in map(json.loads, fh) if r]
        return self._documents

    @property
    def sequences(self) -> np.ndarray:
        """``[n, 3]`` int64: document position, first sentence, end sentence (exclusive)."""
        if self._sequences is None:
            self._sequences = np.load(self.folder / "sequences.npy")
        return self._sequences

    def text(self, row: int) -> str:
        d, s, e = self.sequences[row]
        return " ".join(self.documents[d].sentences[s:e])

    def _pool_meta(self) -> PoolMeta:
        seq = self.sequences
        return PoolMeta(seq[:, 0], seq[:, 1], seq[:, 2])

    def _in_evaluation_set(self, row: int) -> bool:
        if self._eval is None:
            self._eval = {_norm(t) for t in self.config.evaluation_set}
        if not self._eval:
            return False
        d, s, e = self.sequences[row]
        return _norm(self.text(row)) in self._eval or any(
            _norm(t) in self._eval for t in self.documents[d].sentences[s:e])

    def vectors(self, shard: int) -> np.ndarray:
        return np.load(self.output("encode", shard))

    # -- chunks ----------------------------------------------------------------------------

    def run_chunk(self, stage: str, chunk: int = 0, encoder: Any = None) -> bool:
        """Run one chunk unless its output exists; True when it did the work.

        ``encoder`` (encode only): an object with ``encode(texts)``; None = the engine's cached
        encoder for the job's model.
        """
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}; choose one of: {', '.join(STAGES)}")
        if chunk not in self.chunks(stage):
            raise ValueError(f"stage {stage} has no chunk {chunk} (it has {len(self.chunks(stage))})")
        if self.is_done(stage, chunk):
            return False
        for before in STAGES[: STAGES.index(stage)]:
            if self.missing(before):
                raise RuntimeError(f"stage {stage} cannot run before stage {before} is complete")
        if stage == "encode":
            self._encode(chunk, encoder)
        elif stage == "index":
            self._build_index()
        elif stage == "search":
            self._search(chunk)
        else:
            self._merge()
        return True

    def _finish(self, stage: str, chunk: int, t0: float, write: Callable[[Path], None], **info: Any) -> dict[str, Any]:
        """Write the sidecar, then the output (atomically): the output marks the chunk done."""
        info = {"seconds": round(time.perf_counter() - t0, 4), "worker": worker_name(), **info}
        _atomic_json(self._sidecar(stage, chunk), info)
        write(self.output(stage, chunk))
        return info

    def _encode(self, shard: int, encoder: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        if encoder is None:
            from .simplicity.embedding import default_encoder

            encoder = default_encoder(self.model, self.config.device)
        texts = [self.text(r) for r in self.shard_rows(shard)]
        encode = getattr(encoder, "encode_uncached", None) or encoder.encode
        vecs = np.ascontiguousarray(encode(texts), dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        vecs /= np.maximum(norms, 1e-12)
        return self._finish("encode", shard, t0, lambda p: _atomic_write(p, lambda fh: np.save(fh, vecs)),
                            rows=len(texts), dim=int(vecs.shape[1]) if vecs.ndim == 2 else 0)

    def _build_index(self) -> dict[str, Any]:
        import faiss

        t0 = time.perf_counter()
        shards = range(self.n_shards)
        dim = int(np.load(self.output("encode", 0), mmap_mode="r").shape[1])
        nlist = self.plan.get("nlist")
        train_s = 0.0
        if nlist is None:
            index = faiss.IndexFlatIP(dim)
        else:
            index = faiss.index_factory(dim, f"IVF{nlist},SQ8", faiss.METRIC_INNER_PRODUCT)
            # a random training sample drawn shard by shard (never the whole corpus in memory)
            rng = np.random.default_rng(self.config.seed)
            want = min(self.n_sequences, 256 * nlist)
            share = want / self.n_sequences
            parts = []
            for s in shards:
                v = np.load(self.output("encode", s), mmap_mode="r")
                take = rng.random(len(v)) < share
                parts.append(np.asarray(v[take], dtype=np.float32))
            t1 = time.perf_counter()
            index.train(np.ascontiguousarray(np.concatenate(parts)))
            train_s = time.perf_counter() - t1
            faiss.extract_index_ivf(index).nprobe = int(self.plan["nprobe"])
        for s in shards:
            index.add(np.ascontiguousarray(self.vectors(s)))

        def write(path: Path) -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
            try:
                faiss.write_index(index, str(tmp))
                os.replace(tmp, path)
            finally:
                if tmp.exists():
                    tmp.unlink()

        return self._finish("index", 0, t0, write, index=self.plan["index"], ntotal=int(index.ntotal),
                            train_seconds=round(train_s, 3))

    def index(self) -> Any:
        """The faiss index (read once per job object; IVF nprobe set from the plan)."""
        if self._index is None:
            import faiss

            index = faiss.read_index(str(self.output("index")))
            if self.plan.get("nprobe"):
                faiss.extract_index_ivf(index).nprobe = int(self.plan["nprobe"])
            self._index = index
        return self._index

    def _search(self, shard: int) -> dict[str, Any]:
        t0 = time.perf_counter()
        cfg = self.config
        rows = np.arange(self.shard_rows(shard).start, self.shard_rows(shard).stop, dtype=np.int64)
        stats = dict.fromkeys(STAT_KEYS, 0)
        rule = cfg.same_document if cfg.exclude_same_document_first else "keep"
        rows_of, skipped = search_admissible(self.index(), self.vectors(shard), rows, self._pool_meta(), cfg.k, rule)  # type: ignore[arg-type]
        t_search = time.perf_counter() - t0
        if cfg.exclude_same_document_first:
            stats["same_document"] += skipped
        seq = self.sequences

        def post_blocked(qi: int, j: int) -> bool:
            q = rows[qi]
            if seq[q, 0] != seq[j, 0]:
                return False
            return cfg.same_document == "any" or (
                cfg.same_document == "overlapping" and seq[q, 1] < seq[j, 2] and seq[j, 1] < seq[q, 2])

        passed = list(filter_candidates(
            rows_of, [self.text(int(r)) for r in rows], self.text, stats,
            max_distance=cfg.max_distance, max_relative=cfg.max_relative, min_change=cfg.min_change,
            blocked=None if cfg.exclude_same_document_first else post_blocked,
            in_evaluation_set=(lambda qi, j: self._in_evaluation_set(int(rows[qi])) or self._in_evaluation_set(j))
            if cfg.evaluation_set else None,
        ))
        q = np.array([rows[qi] for qi, _, _, _ in passed], dtype=np.int64)
        c = np.array([j for _, j, _, _ in passed], dtype=np.int64)
        dist = np.array([d for _, _, d, _ in passed], dtype=np.float32)
        rel = np.array([r for _, _, _, r in passed], dtype=np.float32)
        return self._finish("search", shard, t0, lambda p: _atomic_write(
            p, lambda fh: np.savez(fh, query=q, neighbour=c, distance=dist, relative=rel)),
            rows=len(rows), search_seconds=round(t_search, 4), stats=stats)

    def _merge(self) -> dict[str, Any]:
        t0 = time.perf_counter()
        stats = self.stats(include_merge=False)
        seen: set[tuple[int, int]] = set()
        found: list[tuple[int, int, float, float]] = []
        for shard in range(self.n_shards):
            with np.load(self.output("search", shard)) as z:
                for q, c, d, r in zip(z["query"].tolist(), z["neighbour"].tolist(), z["distance"].tolist(),
                                      z["relative"].tolist()):
                    key = (q, c) if q <= c else (c, q)
                    if key in seen:
                        stats["duplicate"] += 1
                        stats["kept"] -= 1
                        continue
                    seen.add(key)
                    found.append((q, c, d, r))
        pairs = [self._orient(q, c, d, r) for q, c, d, r in found]
        pairs.sort(key=lambda p: (-p[0], p[1]))
        lines = []
        for n, (score, _, complex_side, simple_side, features) in enumerate(pairs, start=1):
            pair = CorpusPair(f"m{n}", score, complex_side, simple_side, features)
            lines.append(json.dumps(pair.to_dict(with_features=True), ensure_ascii=False))
        payload = ("\n".join(lines) + "\n" if lines else "").encode("utf-8")
        return self._finish("merge", 0, t0, lambda p: _atomic_write(p, lambda fh: fh.write(payload)),
                            pairs=len(lines), duplicate=stats["duplicate"])

    def _side(self, row: int) -> MinedSide:
        d, s, e = (int(x) for x in self.sequences[row])
        return MinedSide(self.documents[d].id, tuple(range(s, e)), self.text(row))

    def _orient(self, q: int, c: int, d: float, r: float) -> tuple[float, tuple, MinedSide, MinedSide, dict]:
        a, b = self._side(q), self._side(c)
        lang_a = self.documents[int(self.sequences[q, 0])].language
        lang_b = self.documents[int(self.sequences[c, 0])].language
        fa, fb = _fres(a.text, lang_a), _fres(b.text, lang_b)
        # higher FRES reads more simply; ties: the shorter text, then the query, is complex
        if (fa, -len(a.text)) > (fb, -len(b.text)):
            a, b, fa, fb = b, a, fb, fa
        score = 1.0 - d / 2.0
        features = {"l2_distance": d, "relative_distance": r, "fres_complex": fa, "fres_simple": fb}
        return score, (a.document, a.sentences, b.document, b.sentences), a, b, features

    # -- results ---------------------------------------------------------------------------

    def pairs(self, start: int = 0, stop: int | None = None) -> Iterator[CorpusPair]:
        """The mined pairs (after the merge), best first; ``start``/``stop`` slice them (lines
        outside the slice are not parsed)."""
        with open(self.output("merge"), encoding="utf-8") as fh:
            for n, line in enumerate(fh):
                if stop is not None and n >= stop:
                    return
                if n >= start and line.strip():
                    yield CorpusPair.from_dict(json.loads(line))

    def n_pairs(self) -> int:
        return int(self.chunk_info("merge").get("pairs", 0)) if self.is_done("merge") else 0

    def chunk_info(self, stage: str, chunk: int = 0) -> dict[str, Any]:
        path = self._sidecar(stage, chunk)
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() and self.is_done(stage, chunk) else {}

    def stats(self, *, include_merge: bool = True) -> dict[str, int]:
        """Counts as :func:`~workers.engine.simplicity.muss_mining.mine_paraphrases` reports them."""
        stats = dict.fromkeys(STAT_KEYS, 0)
        stats["sequences"] = int(self.plan["sequences_extracted"])
        stats["noisy"] = int(self.plan["noisy"])
        for shard in range(self.n_shards):
            for key, v in self.chunk_info("search", shard).get("stats", {}).items():
                if key not in ("sequences", "noisy"):
                    stats[key] += int(v)
        if include_merge and self.is_done("merge"):
            dup = int(self.chunk_info("merge").get("duplicate", 0))
            stats["duplicate"] += dup
            stats["kept"] -= dup
        return stats

    def timings(self) -> dict[str, Any]:
        """Per stage: chunks done, summed chunk seconds, and which workers ran them."""
        out: dict[str, Any] = {"plan": {"chunks": 1, "seconds": self.plan.get("plan_seconds", 0.0),
                                        "workers": [self.plan.get("planned_by")]}}
        for stage in STAGES:
            infos = [self.chunk_info(stage, c) for c in self.chunks(stage) if self.is_done(stage, c)]
            infos = [i for i in infos if i]
            out[stage] = {"chunks": len(infos), "seconds": round(sum(i.get("seconds", 0.0) for i in infos), 3),
                          "workers": sorted({i.get("worker", "") for i in infos})}
        return out

    def mark(self, name: str, info: Mapping[str, Any] | None = None) -> None:
        """Record a step done outside the engine (the application's database writes) as
        ``records/<name>.json``; :meth:`marked` tells whether it was."""
        _atomic_json(self.folder / "records" / f"{name}.json", {"worker": worker_name(), **(info or {})})

    def marked(self, name: str) -> dict[str, Any] | None:
        path = self.folder / "records" / f"{name}.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None

    def remove_intermediates(self) -> None:
        """Delete the embeddings and the index (the bulk of the folder) once the pairs are merged."""
        if not self.is_done("merge"):
            return
        for path in [*self.folder.glob("vectors/*.npy"), self.output("index")]:
            path.unlink(missing_ok=True)


# --- running a job locally --------------------------------------------------------------------

def _pool_init(model: str | None, device: str | None, threads: int) -> None:
    import faiss
    import torch

    torch.set_num_threads(max(1, threads))
    faiss.omp_set_num_threads(max(1, threads))
    from .simplicity.embedding import default_encoder

    default_encoder(model, device)  # load once per worker, before any stage is timed


def _pool_ready(_: int) -> int:
    time.sleep(0.2)  # long enough for the other workers to take the other items
    return os.getpid()


def _pool_run(args: tuple[str, str, int]) -> bool:
    folder, stage, chunk = args
    work = _WORKS.get(folder)
    if work is None:
        work = _WORKS[folder] = MiningWork(folder)
    return work.run_chunk(stage, chunk)


_WORKS: dict[str, MiningWork] = {}


def run_local(work: MiningWork, *, encoder: Any = None, workers: int = 1,
              progress: Callable[[float, str], None] | None = None) -> dict[str, float]:
    """Run every missing chunk of a job on this machine; returns wall seconds per stage.

    ``workers`` > 1 runs each stage's chunks in that many processes (each loads the job's encoder
    once and gets ``cores / workers`` threads), the way several Celery workers would; ``encoder``
    applies to ``workers=1`` only (tests pass a stand-in).
    """
    seconds: dict[str, float] = {}
    pool = None
    if workers > 1:
        import multiprocessing as mp

        threads = max(1, (os.cpu_count() or 1) // workers)
        pool = mp.get_context("spawn").Pool(workers, initializer=_pool_init,
                                            initargs=(work.model, work.config.device, threads))
        # every worker has loaded the encoder before the first stage is timed
        started: set[int] = set()
        for _ in range(20):
            started |= set(pool.map(_pool_ready, range(workers), chunksize=1))
            if len(started) >= workers:
                break
    try:
        for n, stage in enumerate(STAGES):
            todo = work.missing(stage)
            t0 = time.perf_counter()
            if pool is not None and todo:
                pool.map(_pool_run, [(str(work.folder), stage, c) for c in todo], chunksize=1)
            else:
                for c in todo:
                    work.run_chunk(stage, c, encoder=encoder)
            seconds[stage] = round(time.perf_counter() - t0, 3)
            if progress is not None:
                progress((n + 1) / len(STAGES), f"mine: {stage} done ({len(todo)} chunks, {seconds[stage]:.1f}s)")
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return seconds


def mine_corpus(documents: Sequence[CorpusDocument], config: MiningConfig | Mapping[str, Any] | None = None, *,
                model: str | None = None, encoder: Any = None, folder: str | Path | None = None,
                workers: int = 1, progress: Callable[[float, str], None] | None = None) -> list[CorpusPair]:
    """Mine paraphrase pairs across a whole corpus (MUSS §3.1); the job runs in ``folder`` (kept,
    and resumed if it exists) or in a temporary folder.

    """
    cfg = config if isinstance(config, MiningConfig) else MiningConfig.from_dict(config)
    if folder is None:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="mine-") as tmp:
            return mine_corpus(documents, cfg, model=model, encoder=encoder, folder=tmp, workers=workers,
                               progress=progress)
    work = MiningWork.create(folder, documents, cfg, model=model)
    run_local(work, encoder=encoder, workers=workers, progress=progress)
    return list(work.pairs())
