"""alignapp-client: alignapp's REST API from scripts and notebooks.

>>> from alignapp_client import Client
>>> Client  # doctest: +ELLIPSIS
<class 'alignapp_client.client.Client'>
"""
from .client import Client, project_id
from .errors import (
    AlignappError,
    Forbidden,
    Invalid,
    JobFailed,
    NotFound,
    OtherOrigin,
    StillComputing,
    Unauthorized,
    Unavailable,
)
from .project import Project
from .work import Export, ExportHandle, Handle, Import, ImportHandle, Job, JobHandle, Run, RunHandle, Work

__all__ = ["AlignappError", "Client", "Export", "ExportHandle", "Forbidden", "Handle", "Import", "ImportHandle",
           "Invalid", "Job", "JobFailed", "JobHandle", "NotFound", "OtherOrigin", "Project", "Run", "RunHandle",
           "StillComputing", "Unauthorized", "Unavailable", "Work", "project_id"]
__version__ = "0.2.0"
