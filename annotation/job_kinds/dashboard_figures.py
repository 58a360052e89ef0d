"""``dashboard-figures``: compute a big project's dashboard figures in the background after its data changed."""
from annotation.services.background.registry import Queue, Work, register_job, task_name

register_job("dashboard-figures", Work(
    task_name("dashboard_figures"), "annotation.services.review.dashboard.run_figures_job", Queue.CPU,
    "Compute the project's dashboard figures (progress, annotators, labels, runs, agreement) and keep them.",
    one_core=True))
