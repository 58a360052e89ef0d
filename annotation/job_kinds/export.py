"""``export``: write a gold or auto export (files, manifest, zip)."""
from annotation.services.background.registry import Queue, Work, register_job, task_name

register_job("export", Work(task_name("export"), "annotation.services.export.run_export_job", Queue.CPU,
                            "Write a gold or auto export (files, manifest, zip) under MEDIA_ROOT/exports/<id>/."))
