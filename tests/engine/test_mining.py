"""Corpus mining in chunks: the same pairs as the in-memory miner, idempotent chunks, resume."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.engine.simplicity._fakes import BagOfWordsEncoder
from workers.engine.errors import EngineInputError
from workers.engine.mining import (
    CorpusDocument,
    MiningConfig,
    MiningWork,
    mine_corpus,
    parse_document,
    run_local,
)
from workers.engine.simplicity.muss_mining import mine_paraphrases

DOCS = {
    "news-adv": ["The government announced sweeping reforms to the national health service yesterday.",
                 "Ministers insisted that waiting lists would fall within two years."],
    "news-ele": ["The government said it will change the health service.",
                 "Ministers said waiting lists will be shorter in two years."],
    "penguins": ["Emperor penguins huddle together to survive the bitter Antarctic winter.",
                 "Males incubate the eggs on their feet for two months."],
    "penguins-easy": ["Penguins stand close together to stay warm in winter.",
                      "The fathers keep the eggs on their feet."],
    "noise": ["!!! ??? ... ### click here !!!"],
}
LOOSE = {"max_distance": 1.5, "max_relative": 0.95, "k": 4}


class HashedWords:
    """A stateless stand-in encoder (any process embeds a text alike): hashed word counts."""

    def encode(self, texts):
        out = np.zeros((len(texts), 256), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().replace(".", " ").replace(",", " ").split():
                out[i, sum(map(ord, w)) * 2654435761 % 256] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def _documents():
    return [CorpusDocument(k, tuple(v)) for k, v in DOCS.items()]


def _keys(pairs):
    return {frozenset({(p.complex.document, p.complex.sentences), (p.simple.document, p.simple.sentences)})
            for p in pairs}


def test_chunked_mining_finds_the_same_pairs_as_the_in_memory_miner(tmp_path):
    expected, stats = mine_paraphrases(DOCS, MiningConfig.from_dict(LOOSE), encoder=HashedWords())
    work = MiningWork.create(tmp_path / "job", _documents(), MiningConfig.from_dict({**LOOSE, "shard_size": 3}))
    assert work.n_shards == 4 and work.plan["noisy"] == 1
    run_local(work, encoder=HashedWords())
    pairs = list(work.pairs())
    assert _keys(pairs) == {frozenset({(p.query.doc, tuple(range(p.query.start, p.query.end))),
                                       (p.neighbour.doc, tuple(range(p.neighbour.start, p.neighbour.end)))})
                            for p in expected}
    assert work.stats() == stats and stats["kept"] == len(pairs) > 0
    assert [p.score for p in pairs] == sorted((p.score for p in pairs), reverse=True)
    assert len({p.id for p in pairs}) == len(pairs)


def test_the_side_that_reads_more_simply_is_the_simple_side(tmp_path):
    pairs = mine_corpus(_documents(), LOOSE, encoder=HashedWords(), folder=tmp_path / "job")
    assert pairs
    for p in pairs:
        assert p.features["fres_simple"] >= p.features["fres_complex"]
        text = " ".join(dict((k, v) for k, v in DOCS.items())[p.simple.document][i] for i in p.simple.sentences)
        assert p.simple.text == text
        assert p.score == pytest.approx(1 - p.features["l2_distance"] / 2, abs=1e-5)
    health = [p for p in pairs if {p.complex.document, p.simple.document} == {"news-adv", "news-ele"}]
    assert health and all(p.simple.document == "news-ele" for p in health)


def test_a_chunk_whose_output_exists_is_skipped_and_a_stage_waits_for_the_one_before(tmp_path):
    work = MiningWork.create(tmp_path / "job", _documents(), MiningConfig.from_dict({**LOOSE, "shard_size": 3}))
    enc = BagOfWordsEncoder()
    assert work.current_stage() == "encode" and work.missing("encode") == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="before stage encode"):
        work.run_chunk("index")
    assert work.run_chunk("encode", 1, encoder=enc) is True
    before = work.output("encode", 1).stat().st_mtime_ns
    assert work.run_chunk("encode", 1, encoder=enc) is False  # a re-delivered chunk
    assert work.output("encode", 1).stat().st_mtime_ns == before
    assert work.missing("encode") == [0, 2, 3]


def test_a_job_resumes_where_it_stopped_and_ends_with_the_same_result(tmp_path):
    cfg = MiningConfig.from_dict({**LOOSE, "shard_size": 2})
    whole = mine_corpus(_documents(), cfg, encoder=HashedWords(), folder=tmp_path / "a")
    work = MiningWork.create(tmp_path / "b", _documents(), cfg)
    for shard in work.chunks("encode")[:2]:
        work.run_chunk("encode", shard, encoder=HashedWords())
    (work.folder / "vectors" / ".00002.npy.123.deadbeef.tmp").write_bytes(b"half-written")  # a worker died here
    again = MiningWork.create(tmp_path / "b", [], MiningConfig())  # an existing job is opened, not replanned
    assert again.plan == work.plan and again.missing("encode") == work.chunks("encode")[2:]
    run_local(again, encoder=HashedWords())
    assert [p.to_dict() for p in again.pairs()] == [p.to_dict() for p in whole]


def test_above_the_exact_limit_the_index_is_ivf_with_scalar_quantisation(tmp_path):
    docs = [CorpusDocument(f"d{i}", (f"Sentence number {i} talks about topic {i % 7} and colour {i % 5}.",))
            for i in range(300)]
    docs += [CorpusDocument("p1", ("Topic three is about the colour blue and the sea.",)),
             CorpusDocument("p2", ("The colour blue and the sea: this is topic three.",))]
    cfg = MiningConfig.from_dict({"exact_limit": 100, "shard_size": 64, "k": 4, "max_distance": 1.0, "max_relative": 0.9})
    work = MiningWork.create(tmp_path / "job", docs, cfg)
    assert work.plan["index"].startswith("IVF") and work.plan["index"].endswith(",SQ8") and work.plan["nprobe"] >= 1
    run_local(work, encoder=HashedWords())
    assert type(work.index()).__name__ == "IndexIVFScalarQuantizer" and work.index().ntotal == 302
    assert frozenset({("p1", (0,)), ("p2", (0,))}) in _keys(work.pairs())
    assert work.timings()["index"]["chunks"] == 1


def test_the_evaluation_set_and_same_document_options(tmp_path):
    pairs = mine_corpus(_documents(), {**LOOSE, "evaluation_set": [DOCS["news-ele"][0]]}, encoder=HashedWords())
    assert all(0 not in p.simple.sentences for p in pairs if p.simple.document == "news-ele")
    assert all(0 not in p.complex.sentences for p in pairs if p.complex.document == "news-ele")
    assert all(p.complex.document != p.simple.document for p in mine_corpus(_documents(), LOOSE, encoder=HashedWords()))


def test_an_empty_corpus_mines_nothing(tmp_path):
    work = MiningWork.create(tmp_path / "job", [CorpusDocument("x", ())], MiningConfig())
    assert work.n_shards == 0 and work.current_stage() == "merge"
    run_local(work)
    assert list(work.pairs()) == [] and work.current_stage() is None


@pytest.mark.parametrize("config, fragment", [
    ({"kk": 1}, "bad mine option.*kk: unknown option"),
    ({"k": 0}, "k: must be >= 1, got 0"),
    ({"same_document": "never"}, "choose one of: overlapping, any, keep"),
    ({"evaluation_set": "x"}, "evaluation_set: must be a list"),
    ({"evaluation_set": [1]}, "evaluation_set: must be a list of texts"),
    ({"max_distance": "far"}, "max_distance: must be a float"),
])
def test_bad_options_are_named(config, fragment):
    with pytest.raises(ValueError, match=fragment):
        MiningConfig.from_dict(config)


def test_documents_are_read_from_text_or_paragraphs_with_errors_naming_the_field():
    assert parse_document({"id": "a", "paragraphs": [["A b.", "C d."], ["E."]]}).sentences == ("A b.", "C d.", "E.")
    assert parse_document({"id": 3, "text": "Il pleut. On reste.", "language": "fr"}).language == "fr"
    with pytest.raises(EngineInputError, match=r"f.jsonl:4: field 'text': give exactly one"):
        parse_document({"id": "a"}, source="f.jsonl", line=4)
    with pytest.raises(EngineInputError, match="field 'language': unsupported language 'xx'"):
        parse_document({"id": "a", "text": "x", "language": "xx"})
    with pytest.raises(EngineInputError, match="field 'id'"):
        parse_document({"id": "", "text": "x"})


def test_the_job_folder_records_who_ran_each_chunk_and_how_long(tmp_path):
    work = MiningWork.create(tmp_path / "job", _documents(), MiningConfig.from_dict(LOOSE))
    run_local(work, encoder=HashedWords())
    timings = work.timings()
    assert set(timings) == {"plan", "encode", "index", "search", "merge"}
    assert all(t["chunks"] >= 1 and t["workers"] for t in timings.values())
    plan = json.loads((work.folder / "plan.json").read_text())
    assert plan["config"]["k"] == 4 and plan["index"] == "IndexFlatIP"
    work.remove_intermediates()
    assert not list(work.folder.glob("vectors/*.npy")) and not work.output("index").exists()
    assert list(work.pairs())  # the result stays
