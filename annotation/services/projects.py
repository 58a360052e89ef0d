"""Looking projects up the way commands and APIs name them."""
from __future__ import annotations

from ..models import Project


def find_project(value, what: str = "project", visible=None) -> Project:
    """A project by id or exact name (within ``visible`` when given).

    Raises:
        ValueError: no such project.
    """
    qs = visible if visible is not None else Project.objects.all()
    project = None
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        project = qs.filter(pk=int(value)).first()
    if project is None and isinstance(value, str):
        project = qs.filter(name=value).first()
    if project is None:
        raise ValueError(f"{what} {value!r} not found")
    return project
