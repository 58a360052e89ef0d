"""``export-preview``: compute a big project's first gold export preview in the background and keep it."""
from annotation.services.background.registry import Queue, Work, register_job, task_name

register_job("export-preview", Work(
    task_name("export_preview"), "annotation.services.export.preview_job", Queue.CPU,
    "Compute a big project's gold export preview for the options in its params and keep it for the API.",
    one_core=True))
