"""Checks at run time, not only at queue time: a job runs with the access its creator has *now*.

A job is checked when it is queued (the API looks projects up among those the user sees), but it may
run minutes or hours later; by then its creator may have been removed from the project, demoted,
deactivated, or removed from a project the job reads (an export's ``dedup`` evaluation project, a
scoring job's reference corpus). Every job that reads a project calls :func:`check` inside its run,
before it reads anything, and fails with a clear message when access is gone. A job with no creator
(queued from the command line, which runs with the server's own rights) is not limited.
"""
from __future__ import annotations

from collections.abc import Iterable

from annotation.models import Project
from annotation.permissions import can_research, visible_projects


class AccessLost(PermissionError):
    """The job's creator may no longer read a project the job names (the message says which)."""


def check(user, project: Project, references: Iterable = ()) -> None:
    """Refuse the job unless ``user`` may still research ``project`` and see every project of
    ``references`` (ids, names or projects; one that no longer exists is left to the job's own check).

    Raises:
        AccessLost: "you no longer have access to project '<name>'" (and why, for a deactivated account).
    """
    if user is None:
        return
    if not user.is_active:
        raise AccessLost(f"you no longer have access to project {project.name!r}: the account {user.username!r} "
                         "that queued this job is deactivated; nothing was written")
    if not can_research(user, project):
        raise AccessLost(f"you no longer have access to project {project.name!r} (as a researcher; the job was "
                         f"queued by {user.username!r}); nothing was written")
    visible = visible_projects(user)
    for reference in references:
        target = _find(reference)
        if target is not None and not visible.filter(pk=target.pk).exists():
            raise AccessLost(f"you no longer have access to project {target.name!r}, which this job reads (queued by "
                             f"{user.username!r}); nothing was written")


def _find(reference) -> Project | None:
    if isinstance(reference, Project):
        return reference
    if reference in (None, ""):
        return None
    from annotation.services.projects.creation import find_project

    try:
        return find_project(reference)
    except ValueError:
        return None


__all__ = ["AccessLost", "check"]
