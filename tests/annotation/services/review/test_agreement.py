"""Agreement: Cohen's κ, Fleiss' κ, Krippendorff's α and link agreement on hand-made label sets
with values worked out by hand (or taken from the sources the docstrings cite)."""
from __future__ import annotations

import math

import pytest

from annotation.models import Label, LabelScheme, Membership
from annotation.services.review import agreement, qc
from tests import factories
from tests.annotation.services.review.test_adjudication import make_pairs, vote

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5 categories.
FLEISS_TABLE = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]


def test_fleiss_kappa_reproduces_the_worked_example_computed_by_hand():
    # By hand: P̄ = 0.378, P̄e = Σ p_j² = 0.0143+0.0684+0.1219+0.0420+0.0090 ≈ 0.2130 → κ = (0.378−0.213)/(1−0.213)
    p_bar = sum((sum(n * n for n in row) - 14) / (14 * 13) for row in FLEISS_TABLE) / 10
    p_j = [sum(row[j] for row in FLEISS_TABLE) / 140 for j in range(5)]
    p_e = sum(p * p for p in p_j)
    assert p_bar == pytest.approx(0.378, abs=1e-3) and p_e == pytest.approx(0.213, abs=1e-3)
    assert agreement.fleiss_kappa_from_counts(FLEISS_TABLE) == pytest.approx((p_bar - p_e) / (1 - p_e))
    assert agreement.fleiss_kappa_from_counts(FLEISS_TABLE) == pytest.approx(0.210, abs=1e-3)


def test_fleiss_kappa_from_a_label_matrix_counts_each_items_votes():
    matrix = {i: {f"r{r}": c for r, c in enumerate(cat for cat, n in zip("abcde", row) for _ in range(n))}
              for i, row in enumerate(FLEISS_TABLE)}
    assert agreement.fleiss_kappa(matrix, list("abcde")) == pytest.approx(0.210, abs=1e-3)


def test_fleiss_kappa_is_one_for_unanimous_items_and_undefined_for_one_category_only():
    assert agreement.fleiss_kappa_from_counts([[3, 0], [0, 3], [3, 0]]) == pytest.approx(1.0)
    assert agreement.fleiss_kappa_from_counts([[3, 0], [3, 0]]) is None
    assert agreement.fleiss_kappa_from_counts([[1, 0]]) is None  # one rating: nothing to agree on


def test_cohen_kappa_is_one_for_identical_labels_and_at_most_zero_for_chance_patterns():
    same = ["aligned", "partial", "not", "aligned", "not"]
    assert agreement.cohen_kappa(same, same) == 1.0
    # Each of B's labels is independent of A's: observed agreement 0.5 = chance agreement → κ = 0.
    a = ["x", "x", "y", "y"]
    b = ["x", "y", "x", "y"]
    assert agreement.cohen_kappa(a, b) == pytest.approx(0.0)
    # Systematic disagreement: κ = −1.
    assert agreement.cohen_kappa(["x", "y", "x", "y"], ["y", "x", "y", "x"]) == pytest.approx(-1.0)


def test_cohen_kappa_matches_a_hand_computed_two_by_two_table():
    # 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no (the Wikipedia example): po = 0.7, pe = 0.5 → κ = 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert agreement.cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_kappa_is_undefined_when_both_annotators_used_one_and_the_same_label():
    assert agreement.cohen_kappa(["x", "x"], ["x", "x"]) is None
    assert agreement.cohen_kappa([], []) is None


def test_pairwise_cohen_uses_only_the_items_both_annotators_labelled():
    matrix = {1: {"ann": "a", "bob": "a", "cy": "b"}, 2: {"ann": "b", "bob": "b"}, 3: {"ann": "a", "cy": "a"}}
    pairs = {(p["a"], p["b"]): p for p in agreement.pairwise_cohen(matrix)}
    assert pairs["ann", "bob"]["items"] == 2 and pairs["ann", "bob"]["kappa"] == 1.0
    assert pairs["ann", "cy"]["items"] == 2 and pairs["ann", "cy"]["observed"] == 0.5
    assert pairs["bob", "cy"]["items"] == 1


def test_krippendorff_alpha_matches_krippendorffs_own_example_with_missing_data():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 3 coders × 15 units example
    # with missing values: α nominal = 0.691, α interval = 0.811.
    rows = {
        "A": [None, None, None, None, None, 3, 4, 1, 2, 1, 1, 3, 3, None, 3],
        "B": [1, None, 2, 1, 3, 3, 4, 3, None, None, None, None, None, None, None],
        "C": [None, None, 2, 1, 3, 4, 4, None, 2, 1, 1, 3, 3, None, 4],
    }
    matrix = agreement.label_matrix((unit, coder, value) for coder, values in rows.items()
                                    for unit, value in enumerate(values) if value is not None)
    assert agreement.krippendorff_alpha(matrix, [1, 2, 3, 4]) == pytest.approx(0.691, abs=1e-3)
    assert agreement.krippendorff_alpha(matrix, [1, 2, 3, 4], level="interval") == pytest.approx(0.811, abs=1e-3)


def test_krippendorff_alpha_is_one_for_perfect_agreement_and_undefined_without_variation():
    matrix = {1: {"a": "x", "b": "x"}, 2: {"a": "y", "b": "y"}, 3: {"a": "x", "b": "x", "c": "x"}}
    assert agreement.krippendorff_alpha(matrix, ["x", "y"]) == pytest.approx(1.0)
    assert agreement.krippendorff_alpha({1: {"a": "x", "b": "x"}}, ["x", "y"]) is None


def test_link_agreement_scores_one_annotators_links_against_anothers():
    a = {1: "aligned", 2: "aligned", 3: "partial", 4: "not", 5: "not", 6: "aligned"}
    b = {1: "aligned", 2: "partial", 3: "partial", 4: "aligned", 5: "not"}  # pair 6 only A labelled
    result = agreement.link_agreement(a, b)
    assert result["items"] == 5
    # strict (aligned only): A {1, 2}, B {1, 4} → tp 1: P = 1/2, R = 1/2
    assert (result["strict"]["precision"], result["strict"]["recall"]) == (0.5, 0.5)
    # lenient (aligned + partial): A {1, 2, 3}, B {1, 2, 3, 4} → P = 3/3, R = 3/4
    assert (result["lenient"]["precision"], result["lenient"]["recall"]) == (1.0, 0.75)
    assert result["lenient"]["f1"] == pytest.approx(2 * 0.75 / 1.75)
    assert result["confusion"]["aligned"] == {"aligned": 1, "partial": 1, "not": 0}
    assert result["confusion"]["not"] == {"aligned": 1, "partial": 0, "not": 1}
    # binary collapse: A yes,yes,yes,no,no; B yes,yes,yes,yes,no → po 0.8, pe 0.6·0.8+0.4·0.2 = 0.56
    assert result["binary_kappa"] == pytest.approx((0.8 - 0.56) / (1 - 0.56))


def test_a_projects_agreement_counts_only_counted_labels_and_collapses_to_classes(project, users):
    bob = factories.make_user("bob")
    Membership.objects.create(project=project, user=bob, role="annotator")
    pairs = make_pairs(project, 4)
    anna = users["anna"]
    for pair, (x, y) in zip(pairs, [("aligned", "aligned"), ("partial", "aligned"), ("not-aligned", "not-aligned"),
                                    ("partial", "partial")]):
        vote(pair, anna, x)
        vote(pair, bob, y)
    Label.objects.create(pair=pairs[0], annotator=users["rita"], value="not-aligned", is_test_question=True)
    result = agreement.project_agreement(project)
    assert result["kind"] == "categorical"
    values = result["values"]
    assert values["annotators"] == 2 and values["items_multi"] == 4  # rita's test answer does not count
    assert values["cohen"][0]["observed"] == 0.75
    # classes are the same as values in this scheme; the binary collapse agrees everywhere
    assert result["classes"]["cohen_mean"] == pytest.approx(values["cohen_mean"])
    assert result["binary"]["cohen_mean"] == 1.0 and result["binary"]["fleiss"] == pytest.approx(1.0)
    assert result["links"][0]["lenient"]["f1"] == 1.0
    qc.exclude(bob, project, "test")
    assert agreement.project_agreement(project)["values"]["annotators"] == 1


def test_likert_agreement_is_reported_per_dimension_with_ordinal_and_interval_alpha(project, users):
    project.label_scheme = LabelScheme.objects.get(slug="likert-human-eval")
    project.save()
    bob = factories.make_user("bob")
    Membership.objects.create(project=project, user=bob, role="annotator")
    pairs = make_pairs(project, 3)
    for pair, (x, y) in zip(pairs, [(5, 5), (3, 4), (1, 1)]):
        for user, r in ((users["anna"], x), (bob, y)):
            Label.objects.create(pair=pair, annotator=user, ratings={"simplicity": str(r), "adequacy": "4",
                                                                      "fluency": str(r)})
    result = agreement.project_agreement(project)
    assert set(result["dimensions"]) == {"simplicity", "adequacy", "fluency"}
    simplicity = result["dimensions"]["simplicity"]
    assert simplicity["items_multi"] == 3
    assert simplicity["alpha_interval"] > simplicity["alpha"]  # 3 vs 4 is a near miss on an interval scale
    assert simplicity["cohen_quadratic_mean"] > simplicity["cohen_mean"]
    assert result["dimensions"]["adequacy"]["alpha"] is None  # everyone said 4: undefined, not 1 or 0
    assert not math.isnan(simplicity["fleiss"])


# --- issue 37: the dashboard's agreement at a million pairs ----------------------------------------------
def test_cohen_kappa_equals_scikit_learns_on_random_labels_weighted_or_not():
    import random
    import warnings

    from sklearn.metrics import cohen_kappa_score

    rng = random.Random(37)
    for trial in range(200):
        labels = ["a", "b", "c", "d"][: rng.randint(1, 4)]
        n = rng.randint(1, 30)
        xs, ys = [rng.choice(labels) for _ in range(n)], [rng.choice(labels) for _ in range(n)]
        for weights in (None, "linear", "quadratic"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = cohen_kappa_score(xs, ys, labels=labels, weights=weights)
            got = agreement.cohen_kappa(xs, ys, categories=labels, weights=weights)
            if expected != expected or abs(expected) == float("inf"):  # NaN: undefined
                assert got is None, (trial, xs, ys, weights)
            else:
                assert got == pytest.approx(expected, abs=1e-12), (trial, xs, ys, weights)


def test_pairwise_statistics_pair_annotators_by_their_shared_items_as_a_pass_per_pair_would():
    import random
    from itertools import combinations

    rng = random.Random(7)
    people = [f"u{k}" for k in range(12)]
    matrix = {item: {u: rng.choice(["aligned", "partial", "not"]) for u in rng.sample(people, rng.randint(1, 4))}
              for item in range(300)}
    brute = {}
    for a, b in combinations(agreement.annotators_of(matrix), 2):
        items = [i for i, votes in matrix.items() if a in votes and b in votes]
        if items:
            brute[(a, b)] = items
    assert agreement.shared_items(matrix) == brute and list(agreement.shared_items(matrix)) == list(brute)
    links = agreement.pairwise_links(matrix)
    assert [(p["a"], p["b"], p["items"]) for p in links] == [(a, b, len(i)) for (a, b), i in brute.items()]
    for p in links:
        a_classes = {i: matrix[i][p["a"]] for i in matrix if p["a"] in matrix[i]}
        b_classes = {i: matrix[i][p["b"]] for i in matrix if p["b"] in matrix[i]}
        assert p == {"a": p["a"], "b": p["b"], **agreement.link_agreement(a_classes, b_classes)}
