"""``run-comparison``: compare two finished runs of a big project (and keep both runs' scores) in the background."""
from annotation.services.background.registry import Queue, Work, register_job, task_name

register_job("run-comparison", Work(
    task_name("run_comparison"), "annotation.services.training.comparison_answer.comparison_job", Queue.CPU,
    "Compare two finished runs of a big project and store the comparison (and keep both runs' scores) for the API.",
    one_core=True))
