"""A project's labelling guidelines: Markdown kept in ``project.config["guidelines"]`` (blank: the default
guidelines of its label scheme, ``annotation/fixtures/guidelines/<scheme slug>.md``), rendered safely.

Rendering uses markdown-it-py with raw HTML disabled: ``<script>`` and any other tag a researcher types
shows as text, and links with ``javascript:`` and similar schemes are not made into links.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from django.db import transaction
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from annotation.errors import DomainError
from annotation.models import LabelScheme, Project
from annotation.services import audit

CONFIG_KEY = "guidelines"
MAX_LENGTH = 50_000
DEFAULTS_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "guidelines"

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


class GuidelinesError(DomainError, ValueError):
    """Guidelines refused (the message is shown on the settings page)."""


@lru_cache(maxsize=32)
def _default_file(slug: str) -> str | None:
    path = DEFAULTS_DIR / f"{slug}.md"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def default_guidelines(scheme: LabelScheme) -> str:
    """The built-in guidelines of a scheme; for a custom scheme, a list of its labels to start from."""
    text = _default_file(scheme.slug)
    if text is not None:
        return text
    lines = [f"# Guidelines: {scheme.name}", "", "## Labels", ""]
    for value in scheme.values or []:
        key = f"{value.get('key')} · " if value.get("key") else ""
        lines.append(f"- **{key}{value.get('name', value.get('value'))}** — (describe when to choose it)")
    return "\n".join(lines) + "\n"


def custom_guidelines(project: Project) -> str:
    """The project's own guidelines ("" while it uses its scheme's defaults)."""
    return str((project.config or {}).get(CONFIG_KEY, ""))


def project_guidelines(project: Project) -> str:
    """The Markdown annotators of the project see."""
    return custom_guidelines(project) or default_guidelines(project.label_scheme)


def render(markdown: str) -> SafeString:
    """Markdown → HTML with every raw HTML tag escaped (safe to put into a page)."""
    return mark_safe(_markdown.render(markdown))  # noqa: S308 - html=False: markdown-it escapes raw HTML


def version(markdown: str) -> str:
    """A short hash of the guidelines: the labelling page shows changed guidelines again."""
    return hashlib.sha256(markdown.encode("utf-8")).hexdigest()[:12]


def update(project: Project, markdown: str, *, by=None, audited: bool = True) -> Project:
    """Save the project's guidelines; blank text or the scheme's defaults go back to the defaults.
    ``audited=False``: part of another audited action (creating the project).

    Raises:
        GuidelinesError: text longer than :data:`MAX_LENGTH` characters. Nothing is saved then.
    """
    text = markdown.replace("\r\n", "\n").strip()
    if len(text) > MAX_LENGTH:
        raise GuidelinesError(f"Guidelines can be at most {MAX_LENGTH:,} characters long (got {len(text):,}).")
    with transaction.atomic():
        project = Project.objects.select_for_update().select_related("label_scheme").get(pk=project.pk)
        config = dict(project.config or {})
        if not text or text == default_guidelines(project.label_scheme).strip():
            config.pop(CONFIG_KEY, None)
        else:
            config[CONFIG_KEY] = text + "\n"
        project.config = config
        project.save(update_fields=["config"])
        if audited:
            audit.record("project.settings", actor=by, project=project, target=project.name, changed=["guidelines"])
    return project
