"""``run-scores``: compute a finished run's scores in the background for its page after the project's data changed."""
from annotation.services.background.registry import Queue, Work, register_job, task_name

register_job("run-scores", Work(
    task_name("run_scores"), "annotation.services.training.run_scores.run_scores_job", Queue.CPU,
    "Compute a finished run's scores against the project's exhaustive gold and keep them for its page.",
    one_core=True))
