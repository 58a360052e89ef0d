"""Labelling as tests write it: the queue's and the gate's calls from a user, a project and plain
fields, through the same annotator context (``annotator.of``) and validated input
(``LabelInput.parse``) that the views build."""
from __future__ import annotations

from annotation.models import CandidatePair, Label
from annotation.services.review import annotator, labelling, queue
from annotation.services.review.label_input import LabelInput


def next_item(user, project) -> CandidatePair | None:
    return queue.next_item(annotator.of(user, project))


def submit(user, project, pair_id: int, **fields) -> tuple[Label, bool]:
    return queue.submit(annotator.of(user, project), pair_id, LabelInput.parse(project.label_scheme, **fields))


def submit_and_next(user, project, pair_id: int, *, with_context: bool = False, **fields) -> tuple[Label, bool, dict]:
    actor = annotator.of(user, project)
    return queue.submit_and_next(actor, pair_id, LabelInput.parse(project.label_scheme, **fields),
                                 with_context=with_context)


def undo(user, project) -> CandidatePair:
    return queue.undo(annotator.of(user, project))


def submit_label(user, pair: CandidatePair, *, source: str = labelling.API, **fields) -> tuple[Label, bool]:
    project = pair.article.project
    return labelling.submit_label(annotator.of(user, project), pair, LabelInput.parse(project.label_scheme, **fields),
                                  source)


def edit_label(user, label: Label, **fields) -> Label:
    """As "My labels" edits: ``fields`` (value, ratings, comment) parsed as the API parses them."""
    project = label.pair.article.project
    return labelling.edit_label(annotator.of(user, project), label,
                                LabelInput.from_data(project.label_scheme, fields, editing=label))
