"""Paragraph links corrected by people: who may apply a correction, proposals, applying one.

The automatic links and the candidates regenerated from the corrected links are the machine side
(:mod:`annotation.services.alignment.paragraph_alignment`); this module is what a person's save does.

* **Who applies a correction.** A researcher's (or admin's) save applies at once. An annotator's
  save is a :class:`~annotation.models.ParagraphProposal` (the whole proposed set of links) that
  changes nothing until a researcher accepts it (``services.editing.paragraph_proposals``) — unless
  the project lets annotators' corrections apply directly (``config["paragraph_corrections"] =
  "direct"``; default ``"proposals"``).
* **Applying** a corrected set of links stores the automatic links first (if they were only
  computed), then: a link that is not stored yet gets a ``manual`` row; a stored one that was
  removed is kept with ``active=False`` (the correction is recorded); a removed one that comes back
  is active again. Saving the same set twice changes nothing. The sentence candidates are then
  regenerated (in the request, or queued as a job with a neural measure).
"""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotation.errors import StoredConfigError
from annotation.models import Article, Document, ParagraphAlignment, ParagraphProposal, Prediction, Project
from annotation.permissions import can_research
from annotation.services.alignment.paragraph_alignment import (
    CANDIDATES_JOB,
    ParagraphSettings,
    candidate_run,
    compute_auto_links,
    paragraph_ids,
    regenerate_candidates,
    settings_for,
    store_auto_links,
    stored_links,
)
from annotation.services.background import jobs
from annotation.services.corpus.documents import document_pair_payload
from annotation.services.editing.article_alignment import AlignmentInputError

PROPOSALS, DIRECT = "proposals", "direct"
CORRECTION_MODES = (PROPOSALS, DIRECT)


def corrections_mode(project: Project) -> str:
    """``"proposals"`` (default: annotators' corrections wait for a researcher) or ``"direct"``."""
    mode = (project.config or {}).get("paragraph_corrections", PROPOSALS)
    if mode not in CORRECTION_MODES:
        raise StoredConfigError(f"project config paragraph_corrections {mode!r} is not one of: "
                                f"{', '.join(CORRECTION_MODES)}")
    return mode


def applies_directly(user, project: Project) -> bool:
    """Whether ``user``'s paragraph corrections apply at once (researchers, admins, or everyone in
    a project set to ``"direct"``) rather than becoming proposals."""
    return can_research(user, project) or corrections_mode(project) == DIRECT


def paragraph_state(article: Article, complex_doc: Document, simple_doc: Document, settings: ParagraphSettings | None = None) -> dict:
    """What the correction view shows: both documents' paragraphs, the links and where they come from."""
    settings = settings or settings_for(article.project)
    rows = list(stored_links(complex_doc, simple_doc).select_related("complex_paragraph", "simple_paragraph", "created_by"))
    if rows:
        links = [{"complex": r.complex_paragraph.index, "simple": r.simple_paragraph.index, "source": r.source,
                  "active": r.active, "score": r.score, "by": r.created_by.username if r.created_by else None} for r in rows]
        origin = "stored"
    else:
        links = [{"complex": a.complex, "simple": a.simple, "source": ParagraphAlignment.AUTO, "active": True,
                  "score": round(a.score, 4), "by": None} for a in compute_auto_links(complex_doc, simple_doc, settings)]
        origin = "computed"
    links.sort(key=lambda link: (link["complex"], link["simple"]))
    run = candidate_run(article.project, create=False)
    return {
        **document_pair_payload(article, complex_doc, simple_doc),
        "links": links,
        "origin": origin,
        "similarity": settings.inline_similarity if origin == "computed" else None,
        "candidates": settings.candidates,
        "candidate_pairs": (Prediction.objects.filter(run=run, pair__complex_document=complex_doc,
                                                      pair__simple_document=simple_doc).count() if run else 0),
    }


# --- Saving corrections ------------------------------------------------------------------------

def parse_paragraph_links(raw, complex_doc: Document, simple_doc: Document) -> set[tuple[int, int]]:
    """Validate ``[{"complex": paragraph index, "simple": paragraph index}, ...]`` (duplicates are merged)."""
    if not isinstance(raw, list):
        raise AlignmentInputError("'links' must be a list of {complex, simple} paragraph indices")
    valid = {"complex": set(paragraph_ids(complex_doc)), "simple": set(paragraph_ids(simple_doc))}
    problems, out = [], set()
    for n, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            problems.append(f"link {n}: must be an object with 'complex' and 'simple' paragraph indices")
            continue
        ok = True
        for side in ("complex", "simple"):
            value = item.get(side)
            if isinstance(value, bool) or not isinstance(value, int):
                problems.append(f"link {n}: {side} paragraph must be an integer index, got {value!r}")
                ok = False
            elif value not in valid[side]:
                top = max(valid[side], default=-1)
                problems.append(f"link {n}: {side} paragraph {value} does not exist (the {side} document has "
                                f"paragraphs 0–{top})" if top >= 0 else f"link {n}: the {side} document has no paragraphs")
                ok = False
        if ok:
            out.add((item["complex"], item["simple"]))
    if problems:
        raise AlignmentInputError(problems)
    return out


def current_links(article: Article, complex_doc: Document, simple_doc: Document,
                  settings: ParagraphSettings | None = None) -> set[tuple[int, int]]:
    """The links in force now: the stored active ones, or the automatic ones while none are stored."""
    if stored_links(complex_doc, simple_doc).exists():
        return set(stored_links(complex_doc, simple_doc).filter(active=True)
                   .values_list("complex_paragraph__index", "simple_paragraph__index"))
    settings = settings or settings_for(article.project)
    return {(a.complex, a.simple) for a in compute_auto_links(complex_doc, simple_doc, settings)}


def save_paragraph_links(user, article: Article, complex_doc: Document, simple_doc: Document, raw_links) -> dict:
    """Save a corrected set of paragraph links: applied at once when :func:`applies_directly`,
    otherwise stored as the user's pending proposal for a researcher (nothing else changes).

    Applied: ``{"applied": True, "added", "removed", "restored", "links", "candidates": {...}}``
    (:func:`apply_paragraph_links`). Proposed: ``{"applied": False, "links", "added", "removed",
    "proposal": {...}}`` where ``added``/``removed`` compare the proposal with the links in force,
    and ``proposal`` is None when it would change nothing (a pending proposal of the user for the
    document pair is then withdrawn). One pending proposal per user and document pair: saving
    again replaces it.
    """
    wanted = parse_paragraph_links(raw_links, complex_doc, simple_doc)
    if applies_directly(user, article.project):
        return {"applied": True, **apply_paragraph_links(user, article, complex_doc, simple_doc, wanted)}
    return {"applied": False, **propose_paragraph_links(user, article, complex_doc, simple_doc, wanted)}


def propose_paragraph_links(user, article: Article, complex_doc: Document, simple_doc: Document,
                            wanted: set[tuple[int, int]]) -> dict:
    """Store ``wanted`` as ``user``'s pending proposal for the document pair (see :func:`save_paragraph_links`)."""
    now_links = current_links(article, complex_doc, simple_doc)
    links = sorted([c, s] for c, s in wanted)
    with transaction.atomic():
        mine = ParagraphProposal.objects.select_for_update().filter(
            article=article, complex_document=complex_doc, simple_document=simple_doc, proposed_by=user,
            status=ParagraphProposal.PENDING).order_by("-created_at", "-pk")
        proposal = mine.first()
        if wanted == now_links:
            mine.update(status=ParagraphProposal.REJECTED, decided_by=user, decided_at=timezone.now(),
                        note="withdrawn: the annotator saved the links in force")
            proposal = None
        elif proposal is None:
            proposal = ParagraphProposal.objects.create(article=article, complex_document=complex_doc,
                                                        simple_document=simple_doc, links=links, proposed_by=user)
        else:
            proposal.links, proposal.created_at = links, timezone.now()
            proposal.save(update_fields=["links", "created_at"])
            mine.exclude(pk=proposal.pk).update(status=ParagraphProposal.REJECTED, decided_by=user,
                                                decided_at=timezone.now(), note=f"replaced by proposal #{proposal.pk}")
    return {"links": len(wanted), "added": len(wanted - now_links), "removed": len(now_links - wanted),
            "proposal": None if proposal is None else {"id": proposal.pk, "status": proposal.status,
                                                       "created_at": proposal.created_at.isoformat()}}


def apply_paragraph_links(user, article: Article, complex_doc: Document, simple_doc: Document,
                          wanted: set[tuple[int, int]], *, created_by=None) -> dict:
    """Store the corrected paragraph links, then regenerate the sentence candidates.

    New manual links are ``created_by`` (default ``user``: an accepted proposal credits its
    annotator); a queued regeneration job is ``user``'s. Returns ``{"added", "removed",
    "restored", "links", "candidates": {...}}``; ``candidates`` is the regeneration summary, or
    ``{"job": id}`` when it was queued.
    """
    settings = settings_for(article.project)
    c_ids, s_ids = paragraph_ids(complex_doc), paragraph_ids(simple_doc)
    added = removed = restored = 0
    with transaction.atomic():
        if not stored_links(complex_doc, simple_doc).exists():
            store_auto_links(complex_doc, simple_doc, compute_auto_links(complex_doc, simple_doc, settings))
        existing = {(r.complex_paragraph.index, r.simple_paragraph.index): r
                    for r in stored_links(complex_doc, simple_doc).select_related("complex_paragraph", "simple_paragraph")
                    .select_for_update()}
        for key, row in existing.items():
            if row.active and key not in wanted:
                ParagraphAlignment.objects.filter(pk=row.pk).update(active=False)
                removed += 1
            elif not row.active and key in wanted:
                ParagraphAlignment.objects.filter(pk=row.pk).update(active=True)
                restored += 1
        new = [ParagraphAlignment(complex_paragraph_id=c_ids[c], simple_paragraph_id=s_ids[s], source=ParagraphAlignment.MANUAL,
                                  created_by=created_by or user) for c, s in sorted(wanted - set(existing))]
        ParagraphAlignment.objects.bulk_create(new, ignore_conflicts=True)
        added = len(new)
        if settings.regenerates_inline:
            candidates = regenerate_candidates(article, complex_doc, simple_doc, settings)
        else:
            job = jobs.start_job(article.project, CANDIDATES_JOB, user=user,
                                 params={"article": article.pk, "complex": complex_doc.pk, "simple": simple_doc.pk})
            candidates = {"job": job.pk}
    return {"added": added, "removed": removed, "restored": restored, "links": len(wanted), "candidates": candidates}
