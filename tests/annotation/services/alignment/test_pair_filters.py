"""Filtering and ordering pairs (``alignment/pair_filters.py``): the query-string grammar applied to real rows,
numbers compared numerically through JSON key lookups, a run's own predictions, and each refusal naming its
parameter."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, AlignmentRun, CandidatePair, Label, PairSentence, Side
from annotation.services.alignment import pair_filters
from annotation.services.alignment.pair_filters import PairFilterError
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def pairs(project):
    """Five pairs: keys, score, predicted label and attributes chosen so every filter keeps a known subset."""
    article = factories.make_article(project, "Bees", {"0": [["Bees dance.", "Honey is sweet.", "Hives hum."]],
                                                      "1": [["Bees move.", "Honey tastes good.", "Hives buzz."]]})
    c, s = article.documents.order_by("rank")
    rows = {
        "a": ("0", "0", 0.9, "aligned", {"gain": 10.0, "flag": 1.0}),
        "b": ("1", "1", 0.5, "partial", {"gain": 9.0}),
        "c": ("0,1", "0", 0.2, "not-aligned", {"gain": -2.5, "flag": 0.0}),
        "d": ("2", "1,2", None, "", {}),
        "e": ("0,1", "1,2", 0.7, "aligned", {"gain": 100.0}),
    }
    made = {name: factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key=ck,
                                      simple_key=sk, score=score, predicted_label=label, features=features)
            for name, (ck, sk, score, label, features) in rows.items()}
    for pair in made.values():  # the pair's sentences, which the text search reads
        for doc, key, side in ((c, pair.complex_key, Side.COMPLEX), (s, pair.simple_key, Side.SIMPLE)):
            for i in key.split(","):
                PairSentence.objects.create(pair=pair, sentence=doc.sentences.get(index=int(i)), side=side)
    return made


def names(pairs, params, run=None) -> list[str]:
    by_pk = {p.pk: name for name, p in pairs.items()}
    return [by_pk[pk] for pk in pair_filters.apply(CandidatePair.objects.all(), params, run).values_list("pk", flat=True)]


def test_attributes_compare_and_order_as_numbers_and_pairs_without_them_come_last(pairs):
    assert names(pairs, {"ordering": "-features__gain"}) == ["e", "a", "b", "c", "d"]  # 100 > 10 > 9, not as text
    assert names(pairs, {"ordering": "features__gain"}) == ["c", "b", "a", "e", "d"]
    assert sorted(names(pairs, {"f.gain__gte": "9.5"})) == ["a", "e"]
    assert names(pairs, {"f.gain": "9"}) == ["b"]
    assert sorted(names(pairs, {"f.flag__isnull": "true"})) == ["b", "d", "e"]
    assert names(pairs, {"f.flag__exact": "1", "f.gain__lt": "50"}) == ["a"]


def test_shape_counts_the_sentences_on_each_side(pairs):
    assert sorted(names(pairs, {"shape": "1:1"})) == ["a", "b"]
    assert sorted(names(pairs, {"shape": "n:m"})) == ["c", "d", "e"]
    assert names(pairs, {"shape": "n:1"}) == ["c"] and names(pairs, {"shape": "1:n"}) == ["d"]
    assert names(pairs, {"shape": "2:2"}) == ["e"] and names(pairs, {"shape": " 2:1 "}) == ["c"]


def test_label_score_range_text_and_ordering_by_score(pairs):
    assert sorted(names(pairs, {"label": "aligned, partial"})) == ["a", "b", "e"]
    assert sorted(names(pairs, {"score__gte": "0.5", "score__lte": "0.8"})) == ["b", "e"]
    assert sorted(names(pairs, {"q": "HONEY"})) == ["b", "c", "d", "e"]  # a sentence of either side, any case
    assert names(pairs, {"q": "hum"}) == ["d"]
    assert names(pairs, {"ordering": "-score"}) == ["a", "e", "b", "c", "d"]  # no score: last
    assert names(pairs, {"ordering": "id"}) == ["a", "b", "c", "d", "e"]


def test_labelled_means_a_label_or_gold(pairs, users):
    Label.objects.create(pair=pairs["a"], annotator=users["anna"], value="aligned")
    Adjudication.objects.create(pair=pairs["c"], value="not-aligned", provenance=Adjudication.IMPORTED)
    assert sorted(names(pairs, {"labelled": "1"})) == ["a", "c"]
    assert sorted(names(pairs, {"labelled": "false"})) == ["b", "d", "e"]
    assert len(names(pairs, {"labelled": ""})) == 5


def test_with_a_run_score_and_label_are_that_runs_prediction(project, pairs):
    run = AlignmentRun.objects.create(project=project, method="jaccard")
    factories.predict(run, [pairs["b"]])
    from annotation.models import Prediction

    Prediction.objects.filter(run=run).update(score=0.95, predicted_label="aligned")
    assert names(pairs, {"label": "aligned"}, run=run.pk) == ["b"]
    assert names(pairs, {"score__gte": "0.9"}, run=run.pk) == ["b"]
    assert names(pairs, {"label": "partial"}, run=run.pk) == []  # the pair's latest label is not this run's


@pytest.mark.parametrize("params,param,message", [
    ({"ordering": "colour"}, "ordering", "cannot order by 'colour'"),
    ({"ordering": "id,,score"}, "ordering", "empty ordering term"),
    ({"ordering": "features__bad-key"}, "ordering", "invalid attribute key 'bad-key'"),
    ({"f.gain__near": "1"}, "f.gain__near", "unknown operator 'near'"),
    ({"f.gain__gte": "lots"}, "f.gain__gte", "got 'lots'"),
    ({"f.gain__gte": "nan"}, "f.gain__gte", "finite"),
    ({"f.flag__isnull": "maybe"}, "f.flag__isnull", "must be true or false"),
    ({"labelled": "yes"}, "labelled", "must be 1 or 0"),
    ({"shape": "3:x"}, "shape", "unknown shape '3:x'"),
    ({"label": " , "}, "label", "give a predicted label"),
    ({"score__gte": "high"}, "score__gte", "got 'high'"),
])
def test_a_bad_parameter_is_refused_naming_it(pairs, params, param, message):
    with pytest.raises(PairFilterError, match=message) as info:
        list(pair_filters.apply(CandidatePair.objects.all(), params))
    assert info.value.param == param and info.value.payload() == {param: str(info.value)} and info.value.status == 400


def test_uses_predictions_says_whether_a_model_derived_value_is_asked_for():
    assert pair_filters.uses_predictions({"label": "aligned"}) and pair_filters.uses_predictions({"f.gain": "1"})
    assert pair_filters.uses_predictions({"ordering": "id, -score"})
    assert pair_filters.uses_predictions({"ordering": "-features__gain"}) and pair_filters.uses_predictions({"score__gte": "1"})
    assert not pair_filters.uses_predictions({"ordering": "id,-created_at", "q": "bees", "labelled": "1", "shape": "1:1"})
