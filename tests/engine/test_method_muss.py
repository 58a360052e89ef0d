"""The muss method: mining inside article pairs."""
from __future__ import annotations

import pytest

from tests.engine.simplicity._fakes import BagOfWordsEncoder
from workers.engine.methods import get_aligner
from workers.engine.methods.muss import MussAligner
from workers.engine.types import ArticlePair, Document

COMPLEX = ["alpha beta gamma delta epsilon.", "zeta eta theta iota kappa.", "lambda mu nu xi omicron."]
SIMPLE = ["alpha beta gamma delta.", "zeta eta theta iota kappa lambda.", "pi rho sigma."]


def _pair() -> ArticlePair:
    return ArticlePair("m1", Document((tuple(COMPLEX),)), Document((tuple(SIMPLE),)))


def test_it_pairs_paraphrased_sequences_without_reusing_sentences():
    aligner = MussAligner({"max_distance": 0.6, "max_relative": 1.0}, encoder=BagOfWordsEncoder())
    [res] = aligner.align([_pair()])
    links = {(p.complex, p.simple) for p in res.pairs}
    assert ((0,), (0,)) in links
    used = [c for p in res.pairs for c in p.complex]
    assert len(used) == len(set(used))
    assert all(2 not in p.simple for p in res.pairs)  # "pi rho sigma" has no paraphrase
    assert res.meta["mining"]["sequences"] > 0


def test_the_evaluation_set_and_config_checks():
    aligner = MussAligner({"max_distance": 0.6, "max_relative": 1.0, "evaluation_set": [SIMPLE[0]]},
                          encoder=BagOfWordsEncoder())
    [res] = aligner.align([_pair()])
    assert all(0 not in p.simple for p in res.pairs)
    with pytest.raises(ValueError, match="valid:"):
        get_aligner("muss", {"topk": 3})


@pytest.mark.slow
def test_with_minilm_it_aligns_a_paraphrase_and_skips_an_unrelated_sentence():
    c = ["The municipal authorities announced that the bridge will be closed for repairs next month.",
         "Ticket prices for the concert have risen sharply this year."]
    s = ["The city said the bridge will shut next month so it can be fixed.", "Penguins live in Antarctica."]
    [res] = get_aligner("muss", {"max_relative": 1.0}).align([ArticlePair("m2", Document((tuple(c),)), Document((tuple(s),)))])
    links = {(p.complex, p.simple) for p in res.pairs}
    assert ((0,), (0,)) in links
    assert not any(1 in p.simple for p in res.pairs)
