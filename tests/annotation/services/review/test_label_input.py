"""One label input for every path (issue 38, item 4): the queue's submit, ``POST /api/labels/`` and
``PATCH /api/labels/<id>/`` read a label through the one declaration (``serializers.LabelInputFields``)
and the one parse (:meth:`LabelInput.from_data`): the same odd input gets the same answer on each.

Before: the queue's ``SubmitInput`` trimmed whitespace (DRF's default) and ``LabelSerializer`` did not,
so ``" aligned"`` was stored by the queue and refused by ``/api/labels/``.
"""
from __future__ import annotations

import pytest

from annotation.models import Label, LabelScheme
from annotation.services.review.label_input import MAX_SECONDS, LabelInput, LabelInputError
from tests import factories, labels
from tests.annotation.services.review.test_queue import build_queue, set_qc

pytestmark = pytest.mark.django_db

SCHEME = LabelScheme(kind="categorical", values=[{"value": "aligned"}, {"value": "not-aligned"}])


@pytest.fixture
def world(users):
    """anna in a project of her own with two served pairs; the first labelled "not-aligned" (to edit)."""
    project = factories.make_project("Input paths", anna="annotator")
    set_qc(project)
    work, _ = build_queue(project, 3)
    anna = users["anna"]
    first = labels.next_item(anna, project)
    labels.submit(anna, project, first.pk, value="not-aligned", seconds=1.0)
    second = labels.next_item(anna, project)
    return {"project": project, "anna": anna, "labelled": Label.objects.get(pair=first), "served": second}


def by_queue(api, w, fields):
    return api(w["anna"]).post(f"/api/projects/{w['project'].pk}/queue/submit/",
                               {"pair": w["served"].pk, **fields}, format="json")


def by_labels_api(api, w, fields):
    return api(w["anna"]).post("/api/labels/", {"pair": w["served"].pk, **fields}, format="json")


def by_edit(api, w, fields):
    return api(w["anna"]).patch(f"/api/labels/{w['labelled'].pk}/", fields, format="json")


PATHS = {"queue submit": by_queue, "POST /api/labels/": by_labels_api, "PATCH /api/labels/<id>/": by_edit}

ODD = {
    "value not in the scheme": {"value": "maybe"},
    "a number as the value": {"value": 5},
    "a value too long once trimmed": {"value": "a" * 51},
    "a comment too long": {"value": "aligned", "comment": "c" * 5001},
    "ratings on a categorical scheme": {"value": "aligned", "ratings": {"fluency": 3}},
    "ratings not an object": {"value": "aligned", "ratings": [1, 2]},
    "a NUL in the comment": {"value": "aligned", "comment": "a\x00b"},
    "a value of whitespace only": {"value": "   "},
    "a comment that is not text": {"value": "aligned", "comment": {"a": 1}},
}


def _answer(response) -> tuple[int, object]:
    body = response.json()
    return response.status_code, body


@pytest.mark.parametrize("case", sorted(ODD))
def test_the_same_odd_input_gets_the_same_refusal_on_every_path(world, api, case):
    answers = {name: _answer(path(api, world, ODD[case])) for name, path in PATHS.items()}
    first = answers["queue submit"]
    assert first[0] == 400, answers
    assert all(answer == first for answer in answers.values()), answers
    assert Label.objects.filter(annotator=world["anna"]).values_list("value", flat=True).get() == "not-aligned"


def test_surrounding_whitespace_is_trimmed_alike_on_every_path(world, api):
    """``" aligned"`` is ``aligned`` everywhere (the labels API refused it before); the comment too."""
    fields = {"value": " aligned\t", "comment": "  tense \n", "seconds": 2.0}
    stored = {}
    for name, path in PATHS.items():
        response = path(api, world, fields)
        assert response.status_code in (200, 201), (name, response.json())
        label = Label.objects.get(pk=response.json()["label"]["id"] if "label" in response.json()
                                  else response.json()["id"])
        stored[name] = (label.value, label.comment)
        if name != "PATCH /api/labels/<id>/":  # the next path labels the same served pair afresh
            label.delete()
    assert set(stored.values()) == {("aligned", "tense")}, stored


def test_an_edit_keeps_the_comment_and_seconds_when_left_out(world, api):
    label = world["labelled"]
    Label.objects.filter(pk=label.pk).update(comment="kept", seconds=7.0)
    response = by_edit(api, world, {"value": "aligned", "seconds": 99})
    assert response.status_code == 200, response.json()
    label.refresh_from_db()
    assert (label.value, label.comment, label.seconds) == ("aligned", "kept", 7.0)


def test_from_data_trims_checks_the_scheme_and_fills_defaults():
    parsed = LabelInput.from_data(SCHEME, {"value": "  not-aligned ", "comment": None, "seconds": None})
    assert parsed.content() == {"value": "not-aligned", "ratings": {}, "comment": "", "seconds": 0.0}
    assert parsed.client_token is None and parsed.change is False
    with pytest.raises(LabelInputError, match="comment: at most 5000 characters"):
        LabelInput.from_data(SCHEME, {"value": "aligned", "comment": "x" * 5001})
    assert LabelInput.from_data(SCHEME, {"value": "aligned", "comment": " " * 6000}).comment == ""
    with pytest.raises(LabelInputError, match="seconds: must be between 0"):
        LabelInput.from_data(SCHEME, {"value": "aligned", "seconds": MAX_SECONDS + 1})
    with pytest.raises(LabelInputError, match="value: must be a string"):
        LabelInput.from_data(SCHEME, {"value": 5})


def test_from_data_for_an_edit_keeps_the_stored_comment_and_seconds():
    stored = Label(value="aligned", comment="tense", seconds=4.0)
    assert LabelInput.from_data(SCHEME, {"value": "not-aligned"}, editing=stored).content() == {
        "value": "not-aligned", "ratings": {}, "comment": "tense", "seconds": 4.0}
    assert LabelInput.from_data(SCHEME, {"value": "aligned", "comment": "", "seconds": 9}, editing=stored).content() \
        == {"value": "aligned", "ratings": {}, "comment": "", "seconds": 4.0}
