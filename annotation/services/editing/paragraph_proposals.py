"""Annotators' paragraph corrections waiting for a researcher: list, compare, accept, reject.

An annotator's save on the paragraph page becomes a :class:`~annotation.models.ParagraphProposal`
(``services.editing.paragraph_correction.save_paragraph_links``) unless the project lets annotators'
corrections apply directly. A researcher sees each pending proposal as a diff against the links in
force now, then accepts it — the proposed set is applied exactly as a researcher's own save would
be (links stored, candidates regenerated), the new manual links credited to the annotator — or
rejects it with a note. Only pending proposals can be decided; each is decided once.
"""
from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotation.errors import DomainError
from annotation.models import ParagraphProposal, Project
from annotation.services.editing import paragraph_correction as pc

STATUSES = (ParagraphProposal.PENDING, ParagraphProposal.ACCEPTED, ParagraphProposal.REJECTED)


class ProposalError(DomainError, ValueError):
    """A decision refused (the message says why): 409, the proposal was decided meanwhile."""

    status = 409


def proposals(project: Project, *, status: str | None = ParagraphProposal.PENDING, proposed_by=None,
              article_id: int | None = None, complex_id: int | None = None,
              simple_id: int | None = None) -> QuerySet[ParagraphProposal]:
    """The project's proposals, newest first; ``status`` None = any; the other filters narrow them
    to one annotator's, one article's or one document pair's (ids; None: any)."""
    if status is not None and status not in STATUSES:
        raise ProposalError(f"status must be one of: {', '.join(STATUSES)} (got {status!r})")
    rows = ParagraphProposal.objects.filter(article__project=project).select_related(
        "article", "complex_document", "simple_document", "proposed_by", "decided_by")
    wanted = {"status": status, "proposed_by": proposed_by, "article_id": article_id,
              "complex_document_id": complex_id, "simple_document_id": simple_id}
    return rows.filter(**{field: value for field, value in wanted.items() if value is not None}).order_by(
        "-created_at", "-pk")


def proposed_links(proposal: ParagraphProposal) -> set[tuple[int, int]]:
    return {(int(c), int(s)) for c, s in proposal.links}


def diff(proposal: ParagraphProposal, current: set[tuple[int, int]] | None = None) -> dict:
    """The proposal against the links in force now: ``added`` and ``removed`` links (sorted
    ``[complex, simple]`` paragraph indices) and how many stay (``kept``)."""
    if current is None:
        current = pc.current_links(proposal.article, proposal.complex_document, proposal.simple_document)
    wanted = proposed_links(proposal)
    return {"added": sorted([c, s] for c, s in wanted - current), "removed": sorted([c, s] for c, s in current - wanted),
            "kept": len(wanted & current)}


def payload(proposal: ParagraphProposal, *, with_diff: bool = True) -> dict:
    """A proposal as the API and the page show it (with its diff against the links in force when
    ``with_diff`` and it is still pending)."""
    out = {
        "id": proposal.pk, "status": proposal.status, "article": proposal.article_id,
        "article_title": proposal.article.title,
        "complex": {"id": proposal.complex_document_id, "level": proposal.complex_document.level},
        "simple": {"id": proposal.simple_document_id, "level": proposal.simple_document.level},
        "links": sorted([int(c), int(s)] for c, s in proposal.links),
        "proposed_by": proposal.proposed_by.username if proposal.proposed_by else None,
        "created_at": proposal.created_at.isoformat(),
        "decided_by": proposal.decided_by.username if proposal.decided_by else None,
        "decided_at": proposal.decided_at.isoformat() if proposal.decided_at else None,
        "note": proposal.note,
    }
    if with_diff and proposal.status == ParagraphProposal.PENDING:
        out["diff"] = diff(proposal)
    return out


def _pending(proposal: ParagraphProposal) -> ParagraphProposal:
    """The proposal locked for a decision; refused unless it is still pending."""
    locked = ParagraphProposal.objects.select_for_update(of=("self",)).select_related(
        "article__project", "complex_document", "simple_document", "proposed_by").get(pk=proposal.pk)
    if locked.status != ParagraphProposal.PENDING:
        who = f" by {locked.decided_by.username}" if locked.decided_by else ""
        raise ProposalError(f"proposal #{locked.pk} was already {locked.status}{who}")
    return locked


def accept(proposal: ParagraphProposal, by, note: str = "") -> dict:
    """Apply the proposed links as a direct save would (links, then candidates regenerated; new
    manual links credited to the annotator) and mark the proposal accepted by ``by``.

    Returns ``{"proposal": payload, "saved": <apply_paragraph_links summary>}``. Raises
    :class:`ProposalError` when it is no longer pending, and ``AlignmentInputError`` when a proposed
    paragraph no longer exists (nothing is changed then).
    """
    with transaction.atomic():
        locked = _pending(proposal)
        wanted = pc.parse_paragraph_links([{"complex": c, "simple": s} for c, s in sorted(proposed_links(locked))],
                                          locked.complex_document, locked.simple_document)
        saved = pc.apply_paragraph_links(by, locked.article, locked.complex_document, locked.simple_document, wanted,
                                         created_by=locked.proposed_by or by)
        locked.status, locked.decided_by, locked.decided_at = ParagraphProposal.ACCEPTED, by, timezone.now()
        locked.note = note.strip()
        locked.save(update_fields=["status", "decided_by", "decided_at", "note"])
    return {"proposal": payload(locked, with_diff=False), "saved": saved}


def reject(proposal: ParagraphProposal, by, note: str = "") -> dict:
    """Mark the proposal rejected by ``by`` with ``note`` (why); the links stay as they are."""
    with transaction.atomic():
        locked = _pending(proposal)
        locked.status, locked.decided_by, locked.decided_at = ParagraphProposal.REJECTED, by, timezone.now()
        locked.note = note.strip()
        locked.save(update_fields=["status", "decided_by", "decided_at", "note"])
    return {"proposal": payload(locked, with_diff=False)}


__all__ = ["ProposalError", "STATUSES", "accept", "diff", "payload", "proposals", "proposed_links", "reject"]
