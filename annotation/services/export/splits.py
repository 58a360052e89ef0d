"""Article-level train/dev/test splits (SPEC §6–7; CRF paper §3: 35/5/10 Newsela-Manual, 350/50/100
Wiki-Manual).

A split *policy* is a ratio (``{"mode": "ratio", "train": 0.7, "dev": 0.1, "test": 0.2}``) or
counts (``{"mode": "counts", "train": 35, "dev": 5, "test": 10}``), a ``seed`` and an optional
``stratify`` (``"source"``, ``"levels"`` — the article's set of document levels — or
``"meta:<key>"``). :func:`assign` gives every article *without* a split one, never moving an
existing assignment, so adding articles later and assigning again keeps earlier splits stable:

* unassigned articles are taken in a seeded pseudo-random order (a hash of seed and title, so the
  order does not depend on database ids or on which other articles exist);
* each goes to the split furthest below its share (ratio: share × articles in the stratum after
  the assignment; counts: the count, apportioned over strata by size) — the sequential form of
  the largest-remainder method, so 50 articles with 35/5/10 land exactly 35/5/10;
* counts mode: once every split is full, further articles go to ``overflow`` (``"train"``, the
  default, or ``"none"``: left unassigned).

Splits are whole articles, so an article (with all its levels) is never in two splits. Exporting
locks the exported articles' splits (:func:`lock`); :func:`set_split` changes one, and changing a
locked one needs ``override=True`` and a reason, both logged as a
:class:`~annotation.models.SplitChange`.

Example:
    >>> policy = validate_policy({"mode": "counts", "train": 35, "dev": 5, "test": 10, "seed": 1})
    >>> assign(project, policy)  # doctest: +SKIP
    {'assigned': 50, 'kept': 0, 'unassigned': 0, 'counts': {'train': 35, 'dev': 5, 'test': 10}}
"""
from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from annotation.errors import DomainError
from annotation.models import Article, Document, Project, Split, SplitChange
from annotation.services import audit

NAMES: tuple[str, ...] = Split.NAMES
MODES = ("ratio", "counts")
OVERFLOW = ("train", "none")
DEFAULT_POLICY = {"mode": "ratio", "train": 0.7, "dev": 0.1, "test": 0.2, "seed": 0, "stratify": None,
                  "overflow": "train"}


class SplitError(DomainError, ValueError):
    """A bad policy, or a change refused (e.g. a locked split without an override)."""


class SplitLocked(SplitError):
    """A locked split changed without an override: 409."""

    status = 409


@dataclass(frozen=True)
class SplitPolicy:
    mode: str
    train: float
    dev: float
    test: float
    seed: int = 0
    stratify: str | None = None
    overflow: str = "train"

    def as_dict(self) -> dict:
        return asdict(self)

    def shares(self) -> dict[str, float]:
        total = self.train + self.dev + self.test
        return {name: getattr(self, name) / total for name in NAMES}


def validate_policy(raw: dict | None) -> SplitPolicy:
    """A :class:`SplitPolicy` from a dict (missing keys take :data:`DEFAULT_POLICY`'s values).

    Raises:
        SplitError: naming the bad key and the valid values.
    """
    raw = dict(raw or {})
    unknown = sorted(set(raw) - set(DEFAULT_POLICY))
    if unknown:
        raise SplitError(f"unknown split policy key(s) {', '.join(unknown)}; valid: {', '.join(DEFAULT_POLICY)}")
    mode = raw.get("mode", "ratio")
    if mode not in MODES:
        raise SplitError(f"split mode must be one of {', '.join(MODES)}, got {mode!r}")
    values = {}
    for name in NAMES:
        value = raw.get(name, DEFAULT_POLICY[name] if mode == "ratio" else None)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise SplitError(f"split {name} must be a non-negative number, got {value!r}")
        if mode == "counts" and value != int(value):
            raise SplitError(f"split {name} must be a whole number of articles in counts mode, got {value!r}")
        values[name] = int(value) if mode == "counts" else float(value)
    if sum(values.values()) <= 0:
        raise SplitError("the split sizes must not all be zero")
    seed = raw.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SplitError(f"split seed must be an integer, got {seed!r}")
    stratify = raw.get("stratify") or None
    if stratify is not None and not (stratify in ("source", "levels") or
                                     (isinstance(stratify, str) and stratify.startswith("meta:") and len(stratify) > 5)):
        raise SplitError(f"stratify must be source, levels or meta:<key>, got {stratify!r}")
    overflow = raw.get("overflow", "train")
    if overflow not in OVERFLOW:
        raise SplitError(f"overflow must be one of {', '.join(OVERFLOW)}, got {overflow!r}")
    return SplitPolicy(mode=mode, seed=seed, stratify=stratify, overflow=overflow, **values)


def _order_key(seed: int, title: str) -> bytes:
    return hashlib.sha256(f"{seed}\x00{title}".encode()).digest()


def _strata(project: Project, stratify: str | None) -> dict[int, str]:
    """Article id → stratum name (one stratum, ``""``, when not stratified)."""
    articles = Article.objects.filter(project=project)
    if stratify is None:
        return dict.fromkeys(articles.values_list("id", flat=True), "")
    if stratify == "source":
        return dict(articles.values_list("id", "source"))
    if stratify == "levels":
        levels: dict[int, list[str]] = defaultdict(list)
        for article_id, level in Document.objects.filter(article__project=project).order_by("article_id", "rank", "level") \
                .values_list("article_id", "level"):
            levels[article_id].append(level)
        return {aid: ",".join(levels.get(aid, [])) for aid in articles.values_list("id", flat=True)}
    key = stratify[len("meta:"):]
    return {aid: str((meta or {}).get(key, "")) for aid, meta in articles.values_list("id", "meta")}


def _largest_remainder(total: int, weights: dict[str, int]) -> dict[str, int]:
    """``total`` apportioned over ``weights`` by the largest-remainder method (ties by name)."""
    whole = sum(weights.values())
    if whole == 0:
        return dict.fromkeys(weights, 0)
    exact = {k: total * w / whole for k, w in weights.items()}
    out = {k: int(v) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: (-(exact[k] - out[k]), k))[: total - sum(out.values())]:
        out[k] += 1
    return out


def plan(project: Project, policy: SplitPolicy) -> dict[int, str]:
    """Article id → split for the articles without one (nothing is written)."""
    strata = _strata(project, policy.stratify)
    existing = dict(Split.objects.filter(article__project=project).values_list("article_id", "name"))
    titles = dict(Article.objects.filter(project=project).values_list("id", "title"))
    by_stratum: dict[str, list[int]] = defaultdict(list)
    for article_id, stratum in strata.items():
        by_stratum[stratum].append(article_id)
    caps: dict[str, dict[str, int]] = {}
    if policy.mode == "counts":
        sizes = {s: len(ids) for s, ids in by_stratum.items()}
        per_split = {name: _largest_remainder(int(getattr(policy, name)), sizes) for name in NAMES}
        caps = {s: {name: per_split[name][s] for name in NAMES} for s in by_stratum}
    shares = policy.shares()
    out: dict[int, str] = {}
    for stratum, ids in sorted(by_stratum.items()):
        current = Counter(existing[a] for a in ids if a in existing)
        todo = sorted((a for a in ids if a not in existing), key=lambda a: _order_key(policy.seed, titles[a]))
        assigned = sum(current.values())
        for article_id in todo:
            if policy.mode == "counts":
                open_splits = [n for n in NAMES if current[n] < caps[stratum][n]]
                if not open_splits:
                    if policy.overflow == "none":
                        continue
                    choice = policy.overflow
                else:
                    # furthest below its share of the articles assigned so far (+1), among open splits
                    choice = max(open_splits, key=lambda n: (shares[n] * (assigned + 1) - current[n], -NAMES.index(n)))
            else:
                choice = max(NAMES, key=lambda n: (shares[n] * (assigned + 1) - current[n], -NAMES.index(n)))
            out[article_id] = choice
            current[choice] += 1
            assigned += 1
    return out


def counts(project: Project) -> dict[str, int]:
    """Articles per split (and ``unassigned``)."""
    rows = dict(Split.objects.filter(article__project=project).order_by().values_list("name")
                .annotate(n=Count("id")).values_list("name", "n"))
    out = {name: rows.get(name, 0) for name in NAMES}
    out["unassigned"] = Article.objects.filter(project=project, split__isnull=True).count()
    return out


def assign(project: Project, policy: SplitPolicy | dict | None = None, *, user=None) -> dict:
    """Give every article without a split one (existing splits never move); idempotent.

    The policy is remembered in ``project.config["splits"]`` so later assignments (new articles)
    and the export manifest use the same one. An assignment that changed anything is audited.
    """
    if not isinstance(policy, SplitPolicy):
        policy = validate_policy(policy if policy is not None else (project.config or {}).get("splits"))
    with transaction.atomic():
        kept = Split.objects.filter(article__project=project).count()
        todo = plan(project, policy)
        Split.objects.bulk_create([Split(article_id=a, name=n, origin=Split.POLICY) for a, n in todo.items()],
                                  batch_size=1000, ignore_conflicts=True)
        locked = Project.objects.select_for_update().get(pk=project.pk)  # not a stale copy of the other settings
        config = dict(locked.config or {})
        changed_policy = config.get("splits") != policy.as_dict()
        if changed_policy:
            config["splits"] = policy.as_dict()
            locked.config = project.config = config
            locked.save(update_fields=["config"])
        if todo or changed_policy:
            audit.record("split.change", actor=user, project=project, target="splits by policy", assigned=len(todo),
                         policy=policy.as_dict())
    result = counts(project)
    return {"assigned": len(todo), "kept": kept, "unassigned": result.pop("unassigned"), "counts": result,
            "policy": policy.as_dict()}


def project_policy(project: Project) -> SplitPolicy:
    """The policy last used by :func:`assign` (the default policy when none was)."""
    return validate_policy((project.config or {}).get("splits"))


def set_split(article: Article, name: str | None, *, user=None, override: bool = False, reason: str = "") -> Split | None:
    """Move ``article`` to split ``name`` (``None`` removes its split), logged as a SplitChange.

    Raises:
        SplitLocked: the split is locked (exported) and ``override`` is not set.
        SplitError: an unknown split name, or an override without a reason.
    """
    if name is not None and name not in NAMES:
        raise SplitError(f"split must be one of {', '.join(NAMES)}, got {name!r}")
    with transaction.atomic():
        current = Split.objects.select_for_update().filter(article=article).first()
        old = current.name if current else ""
        if current is not None and current.locked and old != (name or ""):
            if not override:
                raise SplitLocked(f"the split of article {article.title!r} is locked because it was exported; "
                                  "changing it needs an explicit override with a reason")
            if not reason.strip():
                raise SplitError("an override of a locked split needs a reason (it is logged)")
        if old == (name or ""):
            return current
        if name is None:
            current.delete()
            result = None
        elif current is None:
            result = Split.objects.create(article=article, name=name, origin=Split.MANUAL)
        else:
            current.name, current.origin = name, Split.MANUAL
            current.save(update_fields=["name", "origin"])
            result = current
        SplitChange.objects.create(article=article, old_name=old, new_name=name or "", user=user,
                                   override=bool(current is not None and current.locked), reason=reason)
        audit.record("split.change", actor=user, project=article.project, target=f"article {article.title}",
                     old=old, new=name or "", override=bool(current is not None and current.locked), reason=reason)
    return result


def lock(article_ids) -> int:
    """Lock the splits of these articles (done when they are exported). Returns how many were newly locked."""
    total = 0
    ids = list(article_ids)
    for start in range(0, len(ids), 5000):
        total += Split.objects.filter(article_id__in=ids[start:start + 5000], locked=False).update(
            locked=True, locked_at=timezone.now())
    return total


def unlock(project: Project, *, user=None, reason: str) -> int:
    """Unlock every split of a project (an override of all locks; logged per article)."""
    if not reason.strip():
        raise SplitError("unlocking needs a reason (it is logged)")
    with transaction.atomic():
        locked = list(Split.objects.filter(article__project=project, locked=True).values_list("article_id", "name"))
        SplitChange.objects.bulk_create([SplitChange(article_id=a, old_name=n, new_name=n, override=True, user=user,
                                                     reason=f"unlocked: {reason}") for a, n in locked])
        Split.objects.filter(article__project=project, locked=True).update(locked=False, locked_at=None)
        if locked:
            audit.record("split.change", actor=user, project=project, target="all locked splits",
                         unlocked=len(locked), reason=reason)
    return len(locked)


__all__ = ["DEFAULT_POLICY", "NAMES", "SplitError", "SplitLocked", "SplitPolicy", "assign", "counts", "lock",
           "plan", "project_policy", "set_split", "unlock", "validate_policy"]
