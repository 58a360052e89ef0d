"""Write logic shared by views, management commands and Celery tasks, one subpackage per area
(corpus, alignment, review, training, export, projects, background)."""
