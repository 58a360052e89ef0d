from __future__ import annotations

import pytest

from annotation.models import Article, Split, SplitChange
from annotation.services.export import splits
from tests import factories

pytestmark = pytest.mark.django_db


def articles(project, n: int, start: int = 0, source: str = "") -> list[Article]:
    return [Article.objects.create(project=project, title=f"article {i:03d}", source=source) for i in range(start, start + n)]


def assignment(project) -> dict[str, str]:
    return dict(Split.objects.filter(article__project=project).values_list("article__title", "name"))


def test_counts_35_5_10_split_50_articles_exactly(project):
    articles(project, 50)
    result = splits.assign(project, {"mode": "counts", "train": 35, "dev": 5, "test": 10, "seed": 3})
    assert result["counts"] == {"train": 35, "dev": 5, "test": 10} and result["unassigned"] == 0


def test_counts_350_50_100_split_500_articles_exactly_and_overflow_goes_to_train(project):
    articles(project, 510)
    result = splits.assign(project, {"mode": "counts", "train": 350, "dev": 50, "test": 100})
    assert result["counts"] == {"train": 360, "dev": 50, "test": 100}


def test_overflow_none_leaves_extra_articles_unassigned(project):
    articles(project, 12)
    result = splits.assign(project, {"mode": "counts", "train": 7, "dev": 1, "test": 2, "overflow": "none"})
    assert result["counts"] == {"train": 7, "dev": 1, "test": 2} and result["unassigned"] == 2


def test_ratio_assignment_follows_the_shares(project):
    articles(project, 100)
    result = splits.assign(project, {"mode": "ratio", "train": 0.8, "dev": 0.1, "test": 0.1})
    assert result["counts"] == {"train": 80, "dev": 10, "test": 10}


def test_the_same_seed_gives_the_same_assignment_and_another_seed_another(project, users):
    articles(project, 40)
    splits.assign(project, {"seed": 7})
    first = assignment(project)
    Split.objects.all().delete()
    splits.assign(project, {"seed": 7})
    assert assignment(project) == first
    Split.objects.all().delete()
    splits.assign(project, {"seed": 8})
    assert assignment(project) != first


def test_existing_assignments_do_not_move_when_articles_are_added(project):
    articles(project, 50)
    splits.assign(project, {"mode": "ratio", "train": 0.7, "dev": 0.1, "test": 0.2, "seed": 1})
    before = assignment(project)
    articles(project, 30, start=50)
    result = splits.assign(project)  # the project's remembered policy
    after = assignment(project)
    assert {t: after[t] for t in before} == before
    assert result["assigned"] == 30 and result["kept"] == 50
    assert result["counts"] == {"train": 56, "dev": 8, "test": 16}


def test_stratified_assignment_balances_each_source(project):
    articles(project, 20, source="newsela")
    articles(project, 10, start=20, source="wiki")
    splits.assign(project, {"mode": "ratio", "train": 0.6, "dev": 0.2, "test": 0.2, "stratify": "source"})
    by_source = {}
    for source, name in Split.objects.values_list("article__source", "name"):
        by_source.setdefault(source, {}).setdefault(name, 0)
        by_source[source][name] += 1
    assert by_source == {"newsela": {"train": 12, "dev": 4, "test": 4}, "wiki": {"train": 6, "dev": 2, "test": 2}}


def test_levels_stratification_groups_articles_by_their_level_set(project):
    for i in range(4):
        factories.make_article(project, f"two {i}", {"0": [["a."]], "1": [["b."]]})
        factories.make_article(project, f"three {i}", {"0": [["a."]], "1": [["b."]], "2": [["c."]]})
    splits.assign(project, {"mode": "ratio", "train": 0.5, "dev": 0, "test": 0.5, "stratify": "levels"})
    names = assignment(project)
    for prefix in ("two", "three"):
        assert sorted(n for t, n in names.items() if t.startswith(prefix)) == ["test", "test", "train", "train"]


def test_a_researcher_moves_an_unlocked_article_and_the_change_is_logged(project, users):
    article = articles(project, 1)[0]
    splits.assign(project, {"mode": "counts", "train": 1, "dev": 0, "test": 0})
    split = splits.set_split(article, "test", user=users["rita"])
    assert split.name == "test" and split.origin == Split.MANUAL
    change = SplitChange.objects.get()
    assert (change.old_name, change.new_name, change.override, change.user) == ("train", "test", False, users["rita"])


def test_a_locked_split_changes_only_with_an_override_and_a_reason(project, users):
    article = articles(project, 1)[0]
    splits.assign(project, {"mode": "counts", "train": 1, "dev": 0, "test": 0})
    splits.lock([article.pk])
    with pytest.raises(splits.SplitLocked, match="locked because it was exported"):
        splits.set_split(article, "dev", user=users["rita"])
    with pytest.raises(splits.SplitError, match="needs a reason"):
        splits.set_split(article, "dev", user=users["rita"], override=True)
    splits.set_split(article, "dev", user=users["rita"], override=True, reason="leaked into the test set")
    change = SplitChange.objects.get()
    assert change.override and change.reason == "leaked into the test set"
    assert Split.objects.get().name == "dev"


def test_unlocking_a_project_logs_one_override_per_article(project, users):
    for article in articles(project, 3):
        Split.objects.create(article=article, name="train", locked=True)
    assert splits.unlock(project, user=users["rita"], reason="new release") == 3
    assert not Split.objects.filter(locked=True).exists()
    assert SplitChange.objects.filter(override=True).count() == 3


@pytest.mark.parametrize("policy,message", [
    ({"mode": "thirds"}, "split mode must be one of ratio, counts"),
    ({"mode": "counts", "train": 3.5, "dev": 1, "test": 1}, "whole number"),
    ({"train": 0, "dev": 0, "test": 0}, "must not all be zero"),
    ({"stratify": "colour"}, "stratify must be source, levels or meta:<key>"),
    ({"seed": "x"}, "seed must be an integer"),
    ({"sizes": 1}, "unknown split policy key"),
])
def test_bad_policies_are_refused_with_the_valid_values(policy, message):
    with pytest.raises(splits.SplitError, match=message):
        splits.validate_policy(policy)
