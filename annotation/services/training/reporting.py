"""A training job's progress line: each stage, batches inside an epoch, time elapsed and an estimate.

The engine (Django-free) calls back with a ``StepReport`` when a stage starts and after every
pair-model batch, and with an ``EpochReport`` after every epoch; :class:`TrainingProgress` turns
them into ``(fraction, message)`` for the job's progress bar, e.g.
``pair model: epoch 1/4, batch 37/120 · 2 min 5 s elapsed · about 6 min left`` — the time left
of the whole training, the stages after this one included. The estimate is smoothed: a stage barely
begun leans on the whole run's pace (elapsed time over the share of the bar done) rather than on
its own first epoch, and the time left shown never rises by more than the time that passed since
the last estimate (issue 28: "17:54 elapsed, 22:35 left" at 82 %, a minute after "4 min left").
"""
from __future__ import annotations

import time
from collections.abc import Callable

# Share of the bar where each stage starts (the pair model's batches fill most of it).
STAGE_START = {"collect": 0.01, "prepare": 0.03, "pair_model": 0.05, "score_candidates": 0.80, "crf": 0.82,
               "thresholds": 0.88, "save": 0.90, "measure": 0.92}
STAGE_NAMES = {"collect": "collecting the training data", "prepare": "preparing the pair-model examples",
               "pair_model": "pair model", "score_candidates": "scoring the candidates with the pair model",
               "crf": "CRF", "thresholds": "tuning the thresholds on the dev articles",
               "save": "saving the model", "measure": "measuring on the exhaustively annotated test articles"}
# Seconds each stage after the pair model takes per second of the pair model, for a project's first
# training (no earlier durations): from a 579-s training on this machine (issue 37: the pair model 326 s,
# then 232 s of scoring, CRF, thresholds, saving and measuring). The bar's shares above are not times:
# estimating the later stages from them said "1 min 26 s left" with 3 min 52 s to go.
AFTER_PAIR_MODEL = {"score_candidates": 0.18, "crf": 0.40, "thresholds": 0.06, "save": 0.01, "measure": 0.06}
# Share of a stage after which its own pace alone sets its estimate; before that, its extrapolation
# is weighed against the prior (the last training's time, else the whole run's pace) in proportion.
TRUSTED = 0.2


def duration(seconds: float) -> str:
    """``45 s``, ``2 min 5 s``, ``1 h 3 min``."""
    seconds = int(round(max(0.0, seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


class TrainingProgress:
    """Feeds ``report(fraction, message)`` from the engine's callbacks (see the module docstring).

    The time left counts the stages still to come, not only the current one: each later stage takes
    what it took in the project's last training (``expected``: ``{stage: seconds}``, as
    :attr:`durations` recorded it), else its share of the bar at the whole run's pace so far (elapsed
    time over the share done). The current stage's own extrapolation counts fully once
    :data:`TRUSTED` of it is done, in proportion before that, against the same prior.
    """

    def __init__(self, report: Callable[[float, str], None], clock: Callable[[], float] = time.monotonic,
                 expected: dict[str, float] | None = None) -> None:
        self.report, self.clock = report, clock
        self.expected = {k: float(v) for k, v in (expected or {}).items()}
        self.started = clock()
        self.stage_started = self.started
        self.stage = "collect"
        self.fraction = 0.0
        self.durations: dict[str, float] = {}  # seconds each finished stage took
        self._shown: tuple[float, float] | None = None  # (time left shown, when)

    def _emit(self, fraction: float, text: str, left: float | None = None) -> None:
        self.fraction = max(self.fraction, fraction)  # never moves backwards
        parts = [text, f"{duration(self.clock() - self.started)} elapsed"]
        if left is not None:
            parts.append(f"about {duration(self._bounded(left))} left")
        self.report(self.fraction, " · ".join(parts))

    def _bounded(self, left: float) -> float:
        """``left``, risen by at most the time since the last estimate shown: a longer estimate
        arrives gradually, never as a jump (a shorter one is shown at once)."""
        now = self.clock()
        if self._shown is not None:
            shown, at = self._shown
            left = min(left, shown + max(0.0, now - at))
        self._shown = (left, now)
        return left

    def _span(self, stage: str) -> tuple[float, float]:
        order = list(STAGE_START)
        start = STAGE_START[stage]
        following = order[order.index(stage) + 1] if stage != order[-1] else None
        return start, (STAGE_START[following] if following else 1.0) - start

    def _pair_model_seconds(self, done: float) -> float | None:
        """How long the pair model takes: measured once it is over, extrapolated from its pace while it
        runs (``done`` of it done), None before."""
        if self.stage == "pair_model" and done:
            return (self.clock() - self.stage_started) / done
        return self.durations.get("pair_model") if self.stage != "pair_model" else None

    def _later(self, stage: str, pace: float | None, done: float = 0.0) -> float | None:
        """Seconds the stages after ``stage`` should take: as in the last training, else in proportion to
        the pair model's time (:data:`AFTER_PAIR_MODEL`), else at ``pace`` (seconds per unit of the bar)."""
        order = list(STAGE_START)
        later = order[order.index(stage) + 1:] if stage in order else []
        if all(name in self.expected for name in later):
            return sum(self.expected[name] for name in later)
        pair_model = self._pair_model_seconds(done)
        if pair_model is not None and all(name in AFTER_PAIR_MODEL for name in later):
            return pair_model * sum(AFTER_PAIR_MODEL[name] for name in later)
        return None if pace is None else pace * sum(self._span(name)[1] for name in later)

    def _overall_pace(self) -> float | None:
        """Seconds per unit of the bar over the whole run so far (None before the pair model)."""
        if self.fraction < STAGE_START["pair_model"]:
            return None
        return (self.clock() - self.started) / self.fraction

    def _left(self, done: float) -> float | None:
        """Time left in the whole training when ``done`` (0–1) of the current stage is done."""
        spent = self.clock() - self.stage_started
        overall = self._overall_pace()
        if done and self.stage in STAGE_START:
            width = self._span(self.stage)[1]
            current = spent / done - spent  # this stage's own extrapolation
            trust = min(1.0, done / TRUSTED)
            pair_model = self._pair_model_seconds(done)
            prior = (max(0.0, self.expected[self.stage] - spent) if self.stage in self.expected
                     else pair_model * AFTER_PAIR_MODEL[self.stage] * (1.0 - done)
                     if pair_model is not None and self.stage in AFTER_PAIR_MODEL
                     else None if overall is None else overall * width * (1.0 - done))
            if trust < 1.0 and prior is not None:
                current = trust * current + (1.0 - trust) * prior
            # the stages to come at the whole run's pace, not this stage's (a slow CRF's 6 % of the bar
            # said nothing about measuring's 8 %)
            return current + (self._later(self.stage, overall if overall is not None else spent / done / width,
                                          done) or 0.0)
        known = self._later(self.stage, None)
        if known is not None and self.stage in self.expected:
            return max(0.0, self.expected[self.stage] - spent) + known
        pair_model = self._pair_model_seconds(0.0)
        if known is not None and pair_model is not None and self.stage in AFTER_PAIR_MODEL:
            return max(0.0, pair_model * AFTER_PAIR_MODEL[self.stage] - spent) + known
        if self.fraction >= STAGE_START["score_candidates"]:  # past the pair model: its pace sets the bar's
            return (overall or 0.0) * (1 - self.fraction)
        return None

    def begin(self, stage: str) -> None:
        """A stage starts (``collect`` and ``measure`` are the app's own, the rest the engine's)."""
        self.finish()
        self.stage, self.stage_started = stage, self.clock()
        self.fraction = max(self.fraction, STAGE_START.get(stage, self.fraction))
        self._emit(self.fraction, STAGE_NAMES.get(stage, stage), self._left(0.0))

    def finish(self) -> None:
        """The current stage is over: its time goes into :attr:`durations`."""
        self.durations[self.stage] = round(self.durations.get(self.stage, 0.0) + self.clock() - self.stage_started, 1)
        self.stage_started = self.clock()

    def on_step(self, step) -> None:
        """The engine's ``StepReport``: a stage starting, or a pair-model batch done."""
        if step.stage != self.stage or not step.steps:
            if step.stage != self.stage:
                self.begin(step.stage)
            return
        start, width = self._span(step.stage)
        where = f"epoch {step.epoch}/{step.epochs}, " if step.epochs else ""
        self.fraction = max(self.fraction, start + width * step.fraction)  # the estimate's pace counts this batch
        self._emit(self.fraction,
                   f"{STAGE_NAMES.get(step.stage, step.stage)}: {where}batch {step.step}/{step.steps}",
                   self._left(step.fraction) if step.step else None)

    def on_epoch(self, epoch) -> None:
        """The engine's ``EpochReport`` (loss, dev F1) after an epoch of the pair model or the CRF."""
        if epoch.stage != self.stage:
            self.begin(epoch.stage)
        start, width = self._span(epoch.stage) if epoch.stage in STAGE_START else (self.fraction, 0.0)
        done = epoch.epoch / max(1, epoch.epochs)
        self.fraction = max(self.fraction, start + width * done)
        self._emit(self.fraction, epoch.line(), self._left(done))


__all__ = ["AFTER_PAIR_MODEL", "STAGE_START", "TRUSTED", "TrainingProgress", "duration"]
