"""``score-distribution``: compute a big project's score distribution per human label (the dashboard's) and keep it."""
from annotation.services.background.registry import Queue, Work, register_job, task_name

register_job("score-distribution", Work(
    task_name("score_distribution"), "annotation.services.scoring.kept_distribution.distribution_job", Queue.CPU,
    "Compute a big project's score distribution per human label for a run and keep it for the dashboard.",
    one_core=True))
