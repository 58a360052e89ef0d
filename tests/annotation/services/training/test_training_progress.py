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
    assert batches[-1][1] == "pair model: epoch 1/2, batch 4/8 · 2 min 10 s elapsed · about 2 min 0 s left"
    clock.now = 200
    tracker.on_epoch(EpochReport("pair_model", 1, 2, 0.5, {"f1": 0.8}))
    assert seen[-1][1].startswith("pair_model epoch 1/2: loss 0.5000")
    tracker.on_step(StepReport("crf"))
    tracker.on_epoch(EpochReport("crf", 3, 5, 0.1, {"f1": 0.9}))
    tracker.begin("measure")
    assert [f for f, _ in seen] == sorted(f for f, _ in seen) and seen[-1][0] == 0.92


def test_durations_read_naturally():
    assert [duration(s) for s in (4.4, 65, 3725)] == ["4 s", "1 min 5 s", "1 h 2 min"]
