"""Celery tasks (``workers.tasks``) and the Django-free alignment engine (``workers.engine``)."""
