"""``training-summary``: build a big project's training set in the background for its Models page."""
from annotation.services.background.registry import Queue, Work, register_job, task_name

register_job("training-summary", Work(
    task_name("training_summary"), "annotation.services.training.current.run_summary_job", Queue.CPU,
    "Build the project's training set and keep its summary for the Models page."))
