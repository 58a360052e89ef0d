"""Quality control of crowd labels (SPEC §6; neural CRF paper §3.1, step 2).

The paper's procedure: several annotators per item, at least ten seconds per question, one hidden
test question in every five, and annotators whose test accuracy drops below 85% removed. Every
number is a per-project setting kept in ``Project.config["qc"]``; the defaults live here and only
here::

    {"qc": {"overlap": 1, "min_seconds": 10, "test_every": 5,
            "exclusion_threshold": 0.85, "min_test_answers": 5}}

Test questions are pairs with an :class:`~annotation.models.Adjudication` (gold). The queue
(``services.queue``) serves them hidden among the real items; the label is stored with
``is_test_question=True`` and scored against the gold value here. Excluded annotators get no more
items, and :func:`~annotation.services.review.gold_reading.counted_labels` (what agreement, training and
export use) leaves their labels out.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from django.db.models import QuerySet
from django.utils import timezone

from annotation.errors import DomainError
from annotation.label_schemes import UNKNOWN_KIND, value_classes
from annotation.models import Assignment, CandidatePair, Label, Membership, Project
from annotation.requests import BadOptions, Option, parse_request
from annotation.services.review.gold_reading import pair_gold
from workers.engine import defaults

MAX_OVERLAP = 10
MAX_REASON = 300  # Membership.exclusion_reason's length

QC_OPTIONS: tuple[Option, ...] = (
    Option("overlap", "int", 1, 1, MAX_OVERLAP, "annotators per item (k); the paper used 5"),
    Option("min_seconds", "float", 10, 0, 3600, "labels faster than this are rejected (0 turns the check off)"),
    Option("test_every", "int", 5, 0, None, "one hidden test question in every N items (0 = no tests)"),
    Option("exclusion_threshold", "float", 0.85, 0, 1, "test accuracy below this excludes the annotator..."),
    Option("min_test_answers", "int", 5, 1, None, "...once they answered at least this many test questions"),
)
"""The QC settings (``Project.config["qc"]``): types, ranges, defaults and help, read by the settings page."""
DEFAULTS: dict[str, float | int] = defaults(QC_OPTIONS)

# A label may arrive this much sooner than the server's own clock says (request latency, clock skew).
CLOCK_TOLERANCE_S = 1.0


class QualityControlError(DomainError, ValueError):
    """A label or request refused by quality control (the message is shown to the annotator)."""


class LabelTooFast(QualityControlError):
    code = "too_fast"


class AnnotatorExcluded(QualityControlError):
    status, code = 403, "excluded"

    def payload(self) -> dict:
        return {**super().payload(), "excluded": True}


@dataclass(frozen=True)
class QcConfig:
    """A project's QC settings, parsed once from ``config["qc"]`` (:data:`QC_OPTIONS`)."""

    overlap: int = int(DEFAULTS["overlap"])
    min_seconds: float = float(DEFAULTS["min_seconds"])
    test_every: int = int(DEFAULTS["test_every"])
    exclusion_threshold: float = float(DEFAULTS["exclusion_threshold"])
    min_test_answers: int = int(DEFAULTS["min_test_answers"])

    @classmethod
    def parse(cls, config: Mapping | None, *, text: bool = False) -> QcConfig:
        """The settings of a ``qc`` object (``text``: a form's fields), defaults filled in.

        Raises:
            QcConfigError: every unknown key and bad value at once (``problems``: key → why).
        """
        if config is not None and not isinstance(config, Mapping):
            raise QcConfigError(f"project config qc must be an object with keys {', '.join(DEFAULTS)}", {})
        return parse_request(cls, "qc", QC_OPTIONS, config, text=text, error=QcConfigError.of)

    def as_dict(self) -> dict:
        return asdict(self)


class QcConfigError(BadOptions):
    """Bad QC settings (``problems``: each bad key → why)."""


def qc_config(project: Project) -> QcConfig:
    return QcConfig.parse((project.config or {}).get("qc"))


# --- Time on item -----------------------------------------------------------------------------

def check_seconds(config: QcConfig, seconds: float, assignment: Assignment | None = None) -> None:
    """Refuse a label given faster than ``min_seconds``: by the client's timer and, when the pair was
    served by the queue, by the server's clock since it was served."""
    if config.min_seconds <= 0:
        return
    if seconds < config.min_seconds:
        raise LabelTooFast(f"Please spend at least {config.min_seconds:g} seconds on each item "
                           f"(this one took {seconds:.1f} s).")
    if assignment is not None and assignment.status == Assignment.OPEN:
        elapsed = (timezone.now() - assignment.assigned_at).total_seconds()
        if elapsed + CLOCK_TOLERANCE_S < config.min_seconds:
            raise LabelTooFast(f"Please spend at least {config.min_seconds:g} seconds on each item "
                               f"(it was shown {elapsed:.1f} s ago).")


# --- Test questions and exclusion -------------------------------------------------------------

@dataclass(frozen=True)
class TestAccuracy:
    annotator_id: int
    answers: int
    correct: int

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.answers if self.answers else None


def test_labels(project: Project) -> QuerySet[Label]:
    """Labels given to hidden test questions (pairs with gold) of the project."""
    return Label.objects.filter(pair__article__project=project, is_test_question=True, pair__gold__isnull=False)


def test_accuracy(project: Project, user=None) -> dict[int, TestAccuracy]:
    """Per annotator: how many test questions they answered and how many matched the pair's value by
    the one precedence rule (``review.gold_rule``: its stored gold, unless annotators' counted labels refine
    imported gold). A value of unknown kind (an imported link without gold_labels) is matched by any
    linking answer."""
    qs = test_labels(project)
    if user is not None:
        qs = qs.filter(annotator=user)
    expected = pair_gold(project, CandidatePair.objects.filter(pk__in=qs.values("pair_id")))
    linking = {v for v, c in value_classes(project.label_scheme).items() if c in ("aligned", "partial")}
    answers: Counter = Counter()
    correct: Counter = Counter()
    for annotator_id, pair_id, value in qs.order_by("annotator_id").values_list("annotator_id", "pair_id", "value"):
        gold = expected.get(pair_id)
        if gold is None:  # no value to score against (e.g. an imported tie)
            continue
        answers[annotator_id] += 1
        correct[annotator_id] += value == gold.value or (gold.value == UNKNOWN_KIND and value in linking)
    return {a: TestAccuracy(a, n, correct[a]) for a, n in answers.items()}


def exclusion_message(excluded_at, reason: str) -> str | None:
    """What an annotator is told, from their membership's ``excluded_at`` and ``exclusion_reason``."""
    if excluded_at is None:
        return None
    return reason or "You were removed from this project by quality control."


def exclusion_reason(user, project: Project) -> str | None:
    """Why the annotator was removed from the project, or None if they may label."""
    row = Membership.objects.filter(project=project, user=user, excluded_at__isnull=False).values_list(
        "excluded_at", "exclusion_reason").first()
    return None if row is None else exclusion_message(*row)


def ensure_not_excluded(user, project: Project) -> None:
    """Raise AnnotatorExcluded if QC removed the annotator (for callers without an annotator context)."""
    reason = exclusion_reason(user, project)
    if reason is not None:
        raise AnnotatorExcluded(reason)


def should_exclude(config: QcConfig, result: TestAccuracy | None) -> bool:
    return (result is not None and result.answers >= config.min_test_answers
            and result.accuracy is not None and result.accuracy < config.exclusion_threshold)


def record_test_answer(user, project: Project, config: QcConfig) -> str | None:
    """Re-score ``user`` after a test answer; exclude them if they fell below the threshold of
    ``config`` (the project's QC settings). Returns the reason when this call excluded them."""
    result = test_accuracy(project, user).get(user.pk)
    if not should_exclude(config, result):
        return None
    reason = (f"Your accuracy on test questions is {result.accuracy:.0%} ({result.correct} of {result.answers}), "
              f"below the project's {config.exclusion_threshold:.0%}. You can no longer label in this project; "
              f"please contact its researchers.")
    return reason[:MAX_REASON] if exclude(user, project, reason) else None


def exclude(user, project: Project, reason: str) -> bool:
    """Remove an annotator: no more items, their open items go back to the queue. Idempotent."""
    updated = Membership.objects.filter(project=project, user=user, excluded_at__isnull=True).update(
        excluded_at=timezone.now(), exclusion_reason=reason[:MAX_REASON])
    Assignment.objects.filter(annotator=user, pair__article__project=project, status=Assignment.OPEN).delete()
    return bool(updated)


def reinstate(user, project: Project) -> None:
    Membership.objects.filter(project=project, user=user).update(excluded_at=None, exclusion_reason="")


def reevaluate(project: Project) -> list[int]:
    """Apply the project's current thresholds to everyone (e.g. after they changed); returns the
    ids of annotators newly excluded. Nobody is reinstated automatically."""
    config = qc_config(project)
    newly = []
    for annotator_id, result in test_accuracy(project).items():
        if should_exclude(config, result):
            user = Membership.objects.filter(project=project, user_id=annotator_id).select_related("user").first()
            if user is not None and exclude(user.user, project, f"Test accuracy {result.accuracy:.0%} below "
                                                                f"{config.exclusion_threshold:.0%}."):
                newly.append(annotator_id)
    return newly
