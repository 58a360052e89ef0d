"""A hand-made corpus for the export tests: articles with levels, pairs, votes and gold."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotation.models import (
    Adjudication,
    AlignmentRun,
    CandidatePair,
    Label,
    PairSentence,
    Sentence,
    Side,
    Status,
    indices_key,
)
from tests import factories


def make_pair(article, complex_level: str, simple_level: str, complex_ids, simple_ids, *, run=None, **fields) -> CandidatePair:
    docs = {d.level: d for d in article.documents.all()}
    c_doc, s_doc = docs[complex_level], docs[simple_level]
    pair = factories.make_pair(run, article=article, complex_document=c_doc, simple_document=s_doc,
                               complex_key=indices_key(complex_ids), simple_key=indices_key(simple_ids), **fields)
    for doc, ids, side in ((c_doc, complex_ids, Side.COMPLEX), (s_doc, simple_ids, Side.SIMPLE)):
        for i in ids:
            PairSentence.objects.get_or_create(pair=pair, sentence=Sentence.objects.get(document=doc, index=i), side=side)
    return pair


def vote(pair, username: str, value: str, **fields) -> Label:
    user = get_user_model().objects.get(username=username)
    return Label.objects.create(pair=pair, annotator=user, value=value, seconds=12.0, **fields)


def gold(pair, value: str, provenance: str = Adjudication.ADJUDICATED, reviewer=None) -> Adjudication:
    return Adjudication.objects.create(pair=pair, value=value, provenance=provenance, reviewer=reviewer)


@pytest.fixture
def crowd(project, users):
    """Three more annotators (bea, cal, dan) in the project."""
    from annotation.models import Membership

    for name in ("bea", "cal", "dan"):
        Membership.objects.create(project=project, user=factories.make_user(name), role="annotator")
    return project


@pytest.fixture
def newsela(crowd):
    """Article "Bees" at three levels (0 most complex) with adjacent-level gold, and article "Owls" at two.

    0→1: C0→M0 aligned (adjudicated), C1→M1 partial (majority of 3 votes, no stored gold),
         C2→M1 aligned (imported), C1→M0 not-aligned (adjudicated);
    1→2: M0→S0 aligned (single vote stored as single), M1→S1 aligned (adjudicated);
    Owls 0→1: O0→P0,P1 (1:2 split, aligned, adjudicated), O1→P2 identical text (aligned, adjudicated).
    """
    project = crowd
    bees = factories.make_article(project, "Bees", {
        "0": [["Honey bees communicate the location of flowers by dancing.", "The dance is called the waggle dance."],
              ["Scientists decoded it in the 1940s."]],
        "1": [["Bees dance to show where flowers are.", "The dance has a name."]],
        "2": [["Bees dance.", "It is the waggle dance."]],
    })
    owls = factories.make_article(project, "Owls", {
        "0": [["Owls, which hunt at night, have exceptional hearing.", "They live everywhere."]],
        "1": [["Owls hunt at night.", "They hear very well."], ["They live everywhere."]],
    })
    p = {}
    p["c0m0"] = make_pair(bees, "0", "1", [0], [0], score=0.9)
    gold(p["c0m0"], "aligned", reviewer=get_user_model().objects.get(username="rita"))
    p["c1m1"] = make_pair(bees, "0", "1", [1], [1], score=0.7, features={"sum4simp_T": 0.8, "gain_prob": 0.4})
    for name, value in (("anna", "partial"), ("bea", "partial"), ("cal", "aligned")):
        vote(p["c1m1"], name, value)
    p["c2m1"] = make_pair(bees, "0", "1", [2], [1])
    gold(p["c2m1"], "aligned", Adjudication.IMPORTED)
    p["c1m0"] = make_pair(bees, "0", "1", [1], [0], score=0.2)
    gold(p["c1m0"], "not-aligned")
    p["m0s0"] = make_pair(bees, "1", "2", [0], [0])
    vote(p["m0s0"], "anna", "aligned")
    gold(p["m0s0"], "aligned", Adjudication.SINGLE)
    p["m1s1"] = make_pair(bees, "1", "2", [1], [1], features={"sum4simp_T": 0.9, "gain_prob": 0.9})
    gold(p["m1s1"], "aligned")
    p["o0p01"] = make_pair(owls, "0", "1", [0], [0, 1], score=0.8)
    gold(p["o0p01"], "aligned")
    p["o1p2"] = make_pair(owls, "0", "1", [1], [2])
    gold(p["o1p2"], "aligned")
    return {"project": project, "bees": bees, "owls": owls, "pairs": p}


@pytest.fixture
def auto_run(newsela):
    """A succeeded run (with a model version) that aligned both articles' 0→1 levels."""
    from annotation.models import ModelVersion

    project = newsela["project"]
    mv = ModelVersion.objects.create(project=project, name="crf-v1", kind="crf", path="/models/crf-v1")
    run = AlignmentRun.objects.create(project=project, method="crf", model_version=mv, status=Status.SUCCEEDED)
    bees, owls = newsela["bees"], newsela["owls"]
    make_pair(bees, "0", "1", [0], [0], run=run, score=0.95, predicted_label="aligned")
    make_pair(bees, "0", "1", [1], [1], run=run, score=0.6, predicted_label="partial")
    make_pair(bees, "0", "1", [2], [0], run=run, score=0.1, predicted_label="not-aligned")
    make_pair(bees, "1", "2", [0], [0], run=run, score=0.9, predicted_label="aligned")
    make_pair(owls, "0", "1", [0], [0, 1], run=run, score=0.9, predicted_label="aligned")
    return {**newsela, "run": run, "model_version": mv}
