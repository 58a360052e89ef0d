"""How good a model version is, honestly (issue 18 §5, issue 21 §4).

* :func:`measure` — at the end of training: Task 1/Task 2 of the version, of the version it started
  from, of the project's default then, and of the untrained crf, on the *exhaustively annotated*
  test article pairs only (:func:`annotation.services.review.exhaustive.exhaustive_pairs`, the
  same definition training uses), with which articles they were;
* :func:`assess` — on the Models page and before promoting: how many test articles (too few to
  trust below :func:`min_trusted_articles`), the current default's and the untrained crf's
  scores beside the version's, and a warning for each task where the version is worse;
* :func:`complete_articles` — how many articles are complete, against the learning curve's
  suggestion (:data:`SUGGESTED_COMPLETE_ARTICLES`, README "Retraining the aligner").
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

from annotation.models import Article, ModelVersion, Project
from annotation.services.review.exhaustive import exhaustive_articles
from workers.engine import ArticlePair

#: Fewer exhaustively annotated test articles than this: the page says the metrics are too few to trust.
MIN_TRUSTED_ARTICLES = 5
#: Complete article pairs the learning curve suggests for training (README, bench/train_bench.py: trained on 6
#: OneStop articles both tasks beat the untrained crf; on 3, Task 1 only matched it, within 0.005).
SUGGESTED_COMPLETE_ARTICLES = 6
TASKS = ("task1", "task2")


def min_trusted_articles() -> int:
    """``settings.MODEL_MIN_TEST_ARTICLES`` when set, else :data:`MIN_TRUSTED_ARTICLES`."""
    return int(getattr(settings, "MODEL_MIN_TEST_ARTICLES", MIN_TRUSTED_ARTICLES))


def article_of(pair_id: str) -> int | None:
    """The article id of a training-set pair id ``"<article>:<complex>-<simple>"``."""
    head = str(pair_id).split(":", 1)[0]
    return int(head) if head.isdigit() else None


def articles(pair_ids) -> list[dict]:
    """``[{id, title}]`` of the articles of these training-set pair ids, in id order."""
    ids = sorted({a for a in map(article_of, pair_ids or ()) if a is not None})
    titles = dict(Article.objects.filter(pk__in=ids).values_list("pk", "title"))
    return [{"id": a, "title": titles.get(a, f"article #{a} (deleted)")} for a in ids]


def measure(test: list[ArticlePair], path: Path, parent: ModelVersion | None,
            default: ModelVersion | None) -> dict:
    """Test metrics of a new version on the exhaustive test article pairs ``test``."""
    if not test:
        return {"n_article_pairs": 0, "n_articles": 0, "articles": [], "pairs": []}
    from workers.engine import align, evaluate

    def score(model: str | None) -> dict:
        result = evaluate(align(test, "crf", model=model), test)
        return {"task1": result["task1"], "task2": result["task2"]}

    found = articles([p.id for p in test])
    out = {"n_article_pairs": len(test), "n_articles": len(found), "articles": found,
           "pairs": sorted(p.id for p in test), "this": score(str(path)), "untrained": score(None)}
    if parent is not None and Path(parent.path).exists():
        out["previous"], out["previous_version"] = score(parent.path), parent.pk
    if default is not None and Path(default.path).exists():
        same = parent is not None and default.pk == parent.pk and "previous" in out
        out["default"] = out["previous"] if same else score(default.path)
        out["default_version"] = default.pk
    return out


def dev_articles(manifest: dict) -> dict:
    """The dev (held-out) article pairs a training measured on, from its manifest."""
    ids = ((manifest.get("data") or {}).get("heldout") or {}).get("ids") or []
    found = articles(ids)
    return {"n_article_pairs": len(ids), "n_articles": len(found), "articles": found}


def _f1(scores: dict | None, task: str) -> float | None:
    value = ((scores or {}).get(task) or {}).get("f1")
    return None if value is None else round(float(value), 3)


def _worse(this: dict | None, other: dict | None) -> list[str]:
    """Tasks on which ``this`` scores below ``other`` (as the page shows them, 3 decimals)."""
    return [t for t in TASKS if _f1(this, t) is not None and _f1(other, t) is not None and _f1(this, t) < _f1(other, t)]


def _default_scores(version: ModelVersion, default: ModelVersion | None) -> tuple[dict | None, str]:
    """The current default's scores on ``version``'s test articles and how they were obtained."""
    test = (version.metrics or {}).get("test") or {}
    if default is None or default.pk == version.pk:
        return None, ""
    if test.get("default_version") == default.pk and test.get("default"):
        return test["default"], "measured with this version"
    previous = test.get("previous_version", version.parent_id)
    if previous == default.pk and test.get("previous"):
        return test["previous"], "measured with this version"
    theirs = (default.metrics or {}).get("test") or {}
    if test.get("pairs") and theirs.get("pairs") == test.get("pairs") and theirs.get("this"):
        return theirs["this"], "same test articles"
    return None, "measured on other test articles: not comparable"


def assess(version: ModelVersion, default: ModelVersion | None) -> dict:
    """What the page shows beside a version, and whether promoting it needs a confirmation."""
    test = (version.metrics or {}).get("test") or {}
    n = test.get("n_articles", test.get("n_article_pairs", 0)) or 0
    minimum = min_trusted_articles()
    default_scores, basis = _default_scores(version, default)
    worse_default = _worse(test.get("this"), default_scores)
    worse_untrained = _worse(test.get("this"), test.get("untrained"))
    names = {"task1": "Task 1", "task2": "Task 2"}
    warnings = []
    if not test.get("this"):
        warnings.append("no exhaustively annotated test article: this version's quality is unknown")
    elif n < minimum:
        warnings.append(f"measured on {n} test article{'s' if n != 1 else ''}: too few to trust (fewer than {minimum})")
    if worse_untrained:
        warnings.append("worse than the untrained crf on " + " and ".join(names[t] for t in worse_untrained))
    if worse_default and default is not None:
        warnings.append(f"worse than the current default {default.name} on " + " and ".join(names[t] for t in worse_default))
    return {
        "n_test_articles": n, "test_articles": test.get("articles"), "min_articles": minimum,
        "too_few": n < minimum,
        "default": ({"id": default.pk, "name": default.name, "basis": basis,
                     **({t: {"f1": _f1(default_scores, t)} for t in TASKS} if default_scores else {})}
                    if default is not None and default.pk != version.pk else None),
        "worse_than_default": worse_default, "worse_than_untrained": worse_untrained,
        "warnings": warnings, "needs_confirmation": bool(worse_default or worse_untrained),
    }


def promotion_record(version: ModelVersion, assessment: dict) -> dict:
    """The metrics an audit event of a promotion keeps."""
    test = (version.metrics or {}).get("test") or {}
    return {"test_f1": {name: {t: _f1(scores, t) for t in TASKS} for name, scores in
                        (("this", test.get("this")), ("untrained", test.get("untrained")),
                         ("default", assessment["default"]))
                        if scores},
            "n_test_articles": assessment["n_test_articles"], "warnings": assessment["warnings"]}


def complete_articles(project: Project) -> dict:
    """How many articles have an exhaustively annotated document pair, and how many are suggested."""
    n = len(exhaustive_articles(project))
    return {"complete": n, "suggested": SUGGESTED_COMPLETE_ARTICLES, "enough": n >= SUGGESTED_COMPLETE_ARTICLES}


__all__ = ["MIN_TRUSTED_ARTICLES", "SUGGESTED_COMPLETE_ARTICLES", "assess", "complete_articles", "dev_articles",
           "measure", "min_trusted_articles", "promotion_record"]
