"""alignapp-client: alignapp's REST API from scripts and notebooks.

>>> from alignapp_client import Client
>>> Client  # doctest: +ELLIPSIS
<class 'alignapp_client.client.Client'>
"""
from .client import Client, project_id
from .errors import AlignappError, JobFailed
from .handles import ExportHandle, Handle, ImportHandle, JobHandle, RunHandle

__all__ = ["AlignappError", "Client", "ExportHandle", "Handle", "ImportHandle", "JobFailed", "JobHandle", "RunHandle",
           "project_id"]
__version__ = "0.1.0"
