"""The two queue names, and which task goes where (routing by task name)."""
from __future__ import annotations

from enum import Enum


class Queue(str, Enum):
    CPU = "cpu"
    GPU = "gpu"


# Tasks that run a neural model go to the gpu queue (they use CUDA when present, CPU otherwise).
GPU_TASKS: tuple[str, ...] = ("workers.tasks.run_alignment", "workers.tasks.train_aligner",
                              "workers.tasks.wivico_thresholds", "workers.tasks.gain_classifier",
                              "workers.tasks.mine_encode_shard")


def task_routes() -> dict[str, dict[str, str]]:
    routes = {name: {"queue": Queue.GPU.value} for name in GPU_TASKS}
    routes["workers.tasks.*"] = {"queue": Queue.CPU.value}
    return routes
