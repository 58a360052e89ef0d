"""``corpus-stats``: count articles, documents and sentences per level."""
from annotation.services.background.registry import Queue, Work, register_job, task_name

register_job("corpus-stats", Work(task_name("corpus_stats"), "annotation.services.corpus.corpus_stats.run_stats_job",
                                  Queue.CPU, "Count articles, documents and sentences per level."))
