"""The one gate every label write goes through (services.labelling): conflicts, explicit changes,
idempotent resubmission, input validation, served-only, and the history an undo leaves."""
from __future__ import annotations

import math
import uuid

import pytest

from annotation.models import Adjudication, Assignment, Label, LabelChange
from annotation.services.review import label_input, labelling, queue
from tests import factories, labels
from tests.annotation.services.review.test_queue import build_queue, set_qc

RATINGS = {"simplicity": "4", "adequacy": "3", "fluency": "5"}


@pytest.fixture
def work(project):
    set_qc(project)
    pairs, _ = build_queue(project, 3)
    return pairs


@pytest.fixture
def served(users, project, work):
    """The first pair of anna's queue, served to her."""
    pair = labels.next_item(users["anna"], project)
    assert pair == work[0]
    return pair


@pytest.fixture
def likert(users):
    project = factories.make_project("Human evaluation", scheme="likert-human-eval", anna="annotator")
    set_qc(project)
    build_queue(project, 2)
    return project, labels.next_item(users["anna"], project)


def submit(user, pair, **fields):
    return labels.submit_label(user, pair, **{"value": "aligned", "seconds": 3.0, **fields})


def test_a_served_pair_is_labelled_once_with_its_source(users, served):
    label, created = submit(users["anna"], served, comment="fine")
    assert created
    assert (label.value, label.comment, label.source, label.seconds) == ("aligned", "fine", labelling.API, 3.0)
    assert Label.objects.count() == 1 and LabelChange.objects.count() == 0


def test_another_value_raises_a_conflict_and_stores_nothing(users, served):
    first, _ = submit(users["anna"], served, client_token=uuid.uuid4())
    with pytest.raises(labelling.LabelConflict) as caught:
        submit(users["anna"], served, value="not-aligned", client_token=uuid.uuid4())
    assert caught.value.label.pk == first.pk
    payload = caught.value.payload()
    assert payload["code"] == "conflict" and payload["pair"] == served.pk
    assert payload["stored"]["value"] == "aligned" and payload["stored"]["id"] == first.pk
    assert "'aligned'" in payload["detail"]
    assert Label.objects.get().value == "aligned"
    assert LabelChange.objects.count() == 0


def test_an_explicit_change_is_applied_and_recorded_old_to_new(users, served):
    first, _ = submit(users["anna"], served, comment="first look")
    before = first.updated_at
    label, created = submit(users["anna"], served, value="partial", comment="second look", change=True,
                            source=labelling.QUEUE, client_token=uuid.uuid4())
    assert not created and label.pk == first.pk
    assert Label.objects.get().value == "partial"
    change = LabelChange.objects.get()
    assert (change.old_value, change.new_value) == ("aligned", "partial")
    assert (change.old_comment, change.new_comment) == ("first look", "second look")
    assert change.old_at == before
    assert change.source == labelling.QUEUE
    assert change.changed_by == users["anna"] and change.annotator == users["anna"]
    assert change.label_id == first.pk and change.pair_id == served.pk


def test_the_same_client_token_again_returns_the_stored_label_untouched(users, served):
    token = uuid.uuid4()
    first, created = submit(users["anna"], served, client_token=token)
    again, created_again = submit(users["anna"], served, value="not-aligned", client_token=token)
    assert created and not created_again
    assert again.pk == first.pk and again.value == "aligned"
    assert Label.objects.get().value == "aligned" and LabelChange.objects.count() == 0


def test_the_same_content_with_another_token_returns_the_stored_label_without_history(users, served):
    first, _ = submit(users["anna"], served, comment="same", client_token=uuid.uuid4())
    again, created = submit(users["anna"], served, comment="same", client_token=uuid.uuid4())
    assert not created and again.pk == first.pk
    assert Label.objects.count() == 1 and LabelChange.objects.count() == 0


def test_a_client_token_of_another_label_is_refused(users, project, served, work):
    token = uuid.uuid4()
    submit(users["anna"], served, client_token=token)
    labels.next_item(users["anna"], project)
    with pytest.raises(labelling.LabelInputError, match="client_token"):
        submit(users["anna"], work[1], client_token=token)


@pytest.mark.parametrize("fields,message", [
    ({"value": "aligned", "ratings": {"simplicity": 4}}, "only for Likert"),
    ({"value": "maybe"}, "not a label of scheme"),
    ({"value": "alig\x00ned"}, "NUL"),
    ({"comment": "bad \ud800 surrogate"}, "lone surrogate"),
    ({"comment": "x" * (labelling.MAX_COMMENT_CHARS + 1)}, "at most 5000"),
    ({"seconds": math.inf}, "finite"),
    ({"seconds": math.nan}, "finite"),
    ({"seconds": -1}, "between 0 and"),
    ({"seconds": label_input.MAX_SECONDS + 1}, "between 0 and"),
    ({"seconds": True}, "finite"),
])
def test_bad_input_on_a_categorical_scheme_is_refused_and_nothing_is_stored(users, served, fields, message):
    with pytest.raises(labelling.LabelInputError, match=message):
        submit(users["anna"], served, **fields)
    assert Label.objects.count() == 0 and LabelChange.objects.count() == 0


@pytest.mark.parametrize("ratings,message", [
    ({**RATINGS, "clarity": "3"}, "unknown dimension"),
    ({"simplicity": "4", "adequacy": "3"}, "missing fluency"),
    ({**RATINGS, "fluency": 0}, "not one of"),
    ({**RATINGS, "fluency": 6}, "not one of"),
    ({**RATINGS, "fluency": "6"}, "not one of"),
    ({**RATINGS, "fluency": True}, "must be an integer"),
    ({**RATINGS, "fluency": 2.5}, "not one of"),
    ({**RATINGS, "fluency": "4\ud800"}, "lone surrogate"),
    ("5", "must be an object"),
])
def test_bad_likert_ratings_are_refused_and_nothing_is_stored(users, likert, ratings, message):
    _, pair = likert
    with pytest.raises(labelling.LabelInputError, match=message):
        submit(users["anna"], pair, value="", ratings=ratings)
    assert Label.objects.count() == 0


def test_a_likert_label_needs_ratings_not_a_value(users, likert):
    _, pair = likert
    with pytest.raises(labelling.LabelInputError, match="not a value"):
        submit(users["anna"], pair, value="4", ratings=RATINGS)
    label, created = submit(users["anna"], pair, value="", ratings={**RATINGS, "fluency": 5})
    assert created and label.ratings == RATINGS, "ratings are stored as the scheme's value names"


def test_changing_likert_ratings_conflicts_and_an_explicit_change_is_recorded(users, likert):
    _, pair = likert
    submit(users["anna"], pair, value="", ratings=RATINGS)
    changed = {**RATINGS, "adequacy": "1"}
    with pytest.raises(labelling.LabelConflict, match="adequacy 3"):
        submit(users["anna"], pair, value="", ratings=changed)
    submit(users["anna"], pair, value="", ratings=changed, change=True)
    change = LabelChange.objects.get()
    assert (change.old_ratings, change.new_ratings) == (RATINGS, changed)
    assert Label.objects.get().ratings == changed


def test_a_pair_never_served_to_the_annotator_is_refused(users, project, work):
    with pytest.raises(labelling.NotServed, match="not served to you"):
        submit(users["anna"], work[2])
    assert Label.objects.count() == 0


def test_a_skipped_pair_is_refused_until_it_comes_back(users, project, served):
    queue.skip(users["anna"], project, served.pk)
    with pytest.raises(labelling.NotServed, match="you skipped"):
        submit(users["anna"], served)
    assert Label.objects.count() == 0


def test_editing_keeps_the_old_value_in_the_history(users, served):
    label, _ = submit(users["anna"], served, comment="first")
    edited = labels.edit_label(users["anna"], label, value="partial")
    assert (edited.value, edited.comment) == ("partial", "first"), "the comment stays when not given"
    change = LabelChange.objects.get()
    assert (change.old_value, change.new_value, change.source) == ("aligned", "partial", labelling.MY_LABELS)


def test_nobody_edits_another_annotators_label(users, served):
    label, _ = submit(users["anna"], served)
    with pytest.raises(labelling.NotServed, match="your own"):
        labels.edit_label(users["rita"], label, value="partial")
    assert Label.objects.get().value == "aligned" and LabelChange.objects.count() == 0


def test_undo_deletes_the_label_and_leaves_a_change_with_an_empty_new_value(users, project, served):
    labels.submit(users["anna"], project, served.pk, value="partial", comment="hmm")
    assert labels.undo(users["anna"], project) == served
    assert Label.objects.count() == 0
    change = LabelChange.objects.get()
    assert (change.old_value, change.old_comment, change.new_value) == ("partial", "hmm", "")
    assert change.source == labelling.UNDO and change.changed_by == users["anna"]
    assert change.label is None


def test_a_removed_member_writes_nothing_through_the_gate(users, project, served):
    """Issue 36 item 11: the gate checks membership on every write (the context each request loads),
    not only on creation: once anna is removed, editing, re-submitting and undoing her label fail."""
    from annotation.models import Membership
    from annotation.services.review import annotator
    from annotation.services.review.label_input import LabelInput

    anna = users["anna"]
    label, _ = labels.submit(anna, project, served.pk, value="aligned", seconds=2.0)
    Membership.objects.filter(project=project, user=anna).delete()
    actor = annotator.of(anna, project)
    edit = LabelInput.parse(project.label_scheme, value="not-aligned")
    for write in (lambda: labelling.edit_label(annotator.of(anna, project), label, edit),
                  lambda: labelling.submit_label(actor, served, LabelInput.parse(project.label_scheme, value="not-aligned",
                                                                                 change=True)),
                  lambda: queue.undo(annotator.of(anna, project))):
        with pytest.raises(annotator.NotMember):
            write()
    assert list(Label.objects.values_list("value", flat=True)) == ["aligned"] and not LabelChange.objects.exists()


def test_the_permission_to_label_is_checked_once_per_write(users, project, served, work, monkeypatch):
    """Issue 38, item 4: ``ensure_may_label`` runs once for each write (the queue's submit, the API's
    submit, an edit); ``checked_fields`` no longer asks again."""
    from annotation.services.review.annotator import Annotator

    anna = users["anna"]
    label, _ = labels.submit(anna, project, served.pk, value="aligned", seconds=2.0)
    second = labels.next_item(anna, project)
    calls = []
    real = Annotator.ensure_may_label
    monkeypatch.setattr(Annotator, "ensure_may_label", lambda self: calls.append(1) or real(self))
    labels.submit(anna, project, second.pk, value="aligned", seconds=2.0)  # the queue's submit
    assert len(calls) == 1
    labels.submit_label(anna, second, value="partial", seconds=2.0, change=True)  # the API's submit
    assert len(calls) == 2
    labels.edit_label(anna, label, value="partial")
    assert len(calls) == 3


@pytest.mark.parametrize("gold", [None, "single", "majority", "adjudicated"])
def test_a_new_label_refreshes_the_pairs_gold_only_when_it_has_automatic_gold(users, project, served, gold,
                                                                               django_capture_on_commit_callbacks):
    """Issue 37: the label's UPDATE of its assignment also tells whether the pair has automatic gold
    (single or majority), so the refresh after the commit is scheduled only then (before, every label
    looked the gold up after its commit, almost always finding none on a queue pair)."""
    if gold is not None:
        Adjudication.objects.create(pair=served, value="partial", provenance=gold)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        submit(users["anna"], served)
    assert len(callbacks) == (1 if gold in ("single", "majority") else 0)
    assert Assignment.objects.get(pair=served, annotator=users["anna"]).status == Assignment.DONE
    if gold == "single":  # refreshed: the only vote decides
        assert Adjudication.objects.get(pair=served).value == "aligned"


def test_a_label_and_its_assignment_closed_are_one_statement_on_postgresql(users, served):
    """Issue 37: on PostgreSQL the label's INSERT and its assignment's UPDATE are one statement (two
    data-modifying CTEs); elsewhere two. Either way the stored row is the instance returned."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    fields = {"value": "aligned", "ratings": {}, "comment": "c", "seconds": 3.0, "server_seconds": 1.5,
              "source": labelling.QUEUE, "is_test_question": False}
    token = uuid.uuid4()
    with CaptureQueriesContext(connection) as queries, transaction.atomic():
        label = labelling._insert_label(users["anna"], served.pk, fields, token)
    writes = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(writes) == (1 if connection.vendor == "postgresql" else 2), writes
    stored = Label.objects.get(pk=label.pk)
    assert (stored.pair_id, stored.annotator_id, stored.value, stored.comment, stored.client_token, stored.server_seconds,
            stored.created_at, stored.updated_at) == (served.pk, users["anna"].pk, "aligned", "c", token, 1.5,
                                                      label.created_at, label.updated_at)
    assert not label._state.adding and Assignment.objects.get(pair=served, annotator=users["anna"]).status == "done"


def test_a_label_that_exists_already_closes_no_assignment(users, served):
    """The INSERT that fails (one label per annotator and pair) takes its assignment's UPDATE with it."""
    submit(users["anna"], served)
    Assignment.objects.filter(pair=served, annotator=users["anna"]).update(status=Assignment.OPEN)
    with pytest.raises(labelling.LabelConflict):
        submit(users["anna"], served, value="partial")
    assert Assignment.objects.get(pair=served, annotator=users["anna"]).status == Assignment.OPEN
    assert Label.objects.get(pair=served, annotator=users["anna"]).value == "aligned"
