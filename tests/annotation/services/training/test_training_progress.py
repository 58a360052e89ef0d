"""Training progress that moves (issue 18 §6): each stage, batches inside an epoch, time elapsed and
an estimate — fed by the engine's callbacks (the engine side is in tests/engine/test_training.py)."""
from __future__ import annotations

from annotation.services.training.reporting import TrainingProgress, duration
from workers.engine.training import EpochReport, StepReport


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_every_batch_moves_the_bar_with_elapsed_time_and_an_estimate():
    seen, clock = [], Clock()
    tracker = TrainingProgress(lambda f, m: seen.append((f, m)), clock=clock)
    tracker.begin("collect")
    clock.now = 5
    tracker.on_step(StepReport("prepare"))
    clock.now = 10
    tracker.on_step(StepReport("pair_model"))
    for step in range(1, 5):
        clock.now = 10 + 30 * step  # 30 s a batch
        tracker.on_step(StepReport("pair_model", step, 8, epoch=1 + (step - 1) // 4, epochs=2))
    assert seen[0] == (0.01, "collecting the training data · 0 s elapsed")
    assert seen[1][1].startswith("preparing the pair-model examples")
    batches = seen[3:]
    assert [m.split(" · ")[0] for _, m in batches] == [f"pair model: epoch 1/2, batch {k}/8" for k in range(1, 5)]
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and 0.05 < batches[0][0] < batches[-1][0] < 0.80
    # 2 min left in the pair model (4 batches of 30 s) + the later stages at the whole run's pace:
    # 130 s for 0.425 of the bar, the stages after the pair model 0.20 → 61 s
    assert batches[-1][1] == "pair model: epoch 1/2, batch 4/8 · 2 min 10 s elapsed · about 3 min 1 s left"
    clock.now = 200
    tracker.on_epoch(EpochReport("pair_model", 1, 2, 0.5, {"f1": 0.8}))
    assert seen[-1][1].startswith("pair_model epoch 1/2: loss 0.5000")
    tracker.on_step(StepReport("crf"))
    tracker.on_epoch(EpochReport("crf", 3, 5, 0.1, {"f1": 0.9}))
    tracker.begin("measure")
    assert [f for f, _ in seen] == sorted(f for f, _ in seen) and seen[-1][0] == 0.92


def test_durations_read_naturally():
    assert [duration(s) for s in (4.4, 65, 3725)] == ["4 s", "1 min 5 s", "1 h 2 min"]


LAST_TIME = {"score_candidates": 20, "crf": 40, "thresholds": 5, "save": 2, "measure": 30}


def test_the_time_left_includes_the_stages_still_to_come():
    """Issue 27 item 8: "about 0 s left" at 80 %, then 75–120 s more (scoring, CRF, thresholds, saving, measuring)."""
    seen, clock = [], Clock()
    tracker = TrainingProgress(lambda f, m: seen.append((f, m)), clock=clock, expected=LAST_TIME)
    tracker.on_step(StepReport("pair_model"))
    clock.now = 60
    tracker.on_step(StepReport("pair_model", 4, 4, epoch=1, epochs=1))  # the last batch
    assert seen[-1][0] == 0.80 and seen[-1][1].endswith("about 1 min 37 s left")  # 20 + 40 + 5 + 2 + 30 s
    clock.now = 70
    tracker.on_step(StepReport("crf"))  # the CRF starts
    assert seen[-1][1].endswith("about 1 min 17 s left")  # crf 40 + thresholds 5 + save 2 + measure 30


def test_without_an_earlier_training_the_later_stages_are_estimated_at_the_pace_so_far():
    seen, clock = [], Clock()
    tracker = TrainingProgress(lambda f, m: seen.append((f, m)), clock=clock)
    tracker.on_step(StepReport("pair_model"))
    clock.now = 150
    tracker.on_step(StepReport("pair_model", 4, 4))
    assert seen[-1][1].endswith("about 37 s left")  # 150 s for 0.80 of the bar; 0.20 still to come
    clock.now = 160
    tracker.begin("crf")
    assert "left" in seen[-1][1] and not seen[-1][1].endswith("about 0 s left")


def test_each_stages_time_is_recorded_for_the_next_estimate():
    clock = Clock()
    tracker = TrainingProgress(lambda f, m: None, clock=clock)
    for now, stage in ((1, "prepare"), (3, "pair_model"), (63, "crf"), (83, "measure")):
        clock.now = now
        tracker.begin(stage)
    clock.now = 113
    tracker.finish()
    assert tracker.durations == {"collect": 1.0, "prepare": 2.0, "pair_model": 60.0, "crf": 20.0, "measure": 30.0}



def test_the_next_training_expects_the_stage_times_of_the_last_one(project):
    from annotation.models import ModelVersion
    from annotation.services.training.versions import last_stage_times

    assert last_stage_times(project) == {}
    for name, crf in (("crf-old", 99.0), ("crf-new", 40.0)):
        ModelVersion.objects.create(project=project, name=name, kind="crf", path="/nowhere",
                                    training_snapshot={"timings": {"total_s": 300, "stages_s": {**LAST_TIME, "crf": crf}}})
    assert last_stage_times(project)["crf"] == 40.0


def seconds_left(message: str) -> float | None:
    """``about 1 h 3 min left`` / ``about 4 min 5 s left`` / ``about 7 s left`` → seconds."""
    if " left" not in message:
        return None
    words = message.rsplit("about ", 1)[1].removesuffix(" left").split()
    units = {"h": 3600, "min": 60, "s": 1}
    return float(sum(int(n) * units[u] for n, u in zip(words[::2], words[1::2])))


def test_the_time_left_never_jumps_when_a_slow_stage_begins():
    """Issue 28 item 5: "17:54 elapsed, 22:35 left" at 82 %, a minute after about 4 min left — the
    CRF's first epoch extrapolated to the whole stage and, at its pace, the stages after it. A first
    training (nothing expected): 16 min of pair model, then a CRF whose 20 epochs take a minute each."""
    seen, clock = [], Clock()
    tracker = TrainingProgress(lambda f, m: seen.append((clock.now, f, m)), clock=clock)
    tracker.begin("collect")
    clock.now = 10
    tracker.on_step(StepReport("pair_model"))
    for step in range(1, 101):
        clock.now = 10 + 9.6 * step
        tracker.on_step(StepReport("pair_model", step, 100, epoch=1 + (step - 1) // 25, epochs=4))
    clock.now = 1000
    tracker.on_step(StepReport("score_candidates"))
    clock.now = 1074  # 17:54 elapsed
    tracker.on_step(StepReport("crf"))
    for epoch in range(1, 21):
        clock.now = 1074 + 60 * epoch
        tracker.on_epoch(EpochReport("crf", epoch, 20, 1.0 / epoch, {"f1": 0.5}))
    shown = [(now, seconds_left(m)) for now, _, m in seen if seconds_left(m) is not None]
    at_crf = next(left for now, left in shown if now == 1074)
    assert 3 * 60 <= at_crf <= 5 * 60  # about 4 min: the bar's last 18 % at the pace so far
    for (before, left_before), (now, left) in zip(shown, shown[1:]):
        assert left <= left_before + (now - before) + 1, (before, left_before, now, left)  # +1: whole seconds
    after_first_epoch = next(left for now, left in shown if now == 1134)
    assert after_first_epoch <= at_crf + 60 + 1  # not 59 min (the first epoch × 20, the later stages at its pace)
    assert shown[-1][1] > at_crf  # the longer CRF still shows: the estimate rose, gradually
