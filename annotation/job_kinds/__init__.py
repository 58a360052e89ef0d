"""The job kinds (``Job.kind``): one module per kind, each registering its background work (Celery task
name, service function, queue, retry rule) with
:func:`annotation.services.background.registry.register_job`; the registry imports this package on first
read. Services are named by dotted path, imported only when the task runs, so these modules stay cheap
(the Celery app routes by them). The scoring kinds' jobs come from their own declarations (``scoring.py``).
"""
