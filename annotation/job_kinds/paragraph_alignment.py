"""``paragraph-alignment`` and ``regenerate-candidates``: one task, one service (the job's params say which)."""
from annotation.services.background.registry import Queue, Work, register_job, task_name

PARAGRAPHS = Work(task_name("paragraph_alignment"), "annotation.services.alignment.paragraph_alignment.run_job",
                  Queue.CPU, "Paragraph links of a whole project and/or sentence candidates within them (SBERT when "
                  "the project's similarity is neural).")
register_job("paragraph-alignment", PARAGRAPHS)
register_job("regenerate-candidates", PARAGRAPHS)
