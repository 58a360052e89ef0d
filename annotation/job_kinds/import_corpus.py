"""``import``: import a large uploaded corpus in bounded memory, with progress (a lost one is undone)."""
from annotation.services.background.registry import Queue, Work, register_job, task_name

register_job("import", Work(task_name("import_corpus"), "annotation.services.corpus.importing.uploads.run_import_job",
                            Queue.CPU, "Import a large uploaded corpus in bounded memory, with progress.",
                            lost="annotation.services.corpus.importing.recovery.job_lost"))
