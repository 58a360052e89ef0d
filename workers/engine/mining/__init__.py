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

from .config import MiningConfig
from .folder import STAGES
from .local import mine_corpus, run_local
from .records import CorpusDocument, CorpusPair, MinedSide, parse_document, read_documents, write_pairs
from .work import MiningWork

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
