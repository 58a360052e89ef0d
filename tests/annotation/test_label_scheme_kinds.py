"""The label-scheme kinds' registry (``annotation/label_schemes/``): every built-in scheme's kind is
registered and decides validation, display, agreement, gold and the pages' JSON description; a kind
registered by a test works through the label gate, the labelling page and adjudication at once."""
from __future__ import annotations

import json
import re

import pytest
from django.core.exceptions import ValidationError

from annotation.label_schemes import BUILTIN_SCHEMES, InvalidValue, kinds, register, scheme_kind, unregister
from annotation.label_schemes.classes import Categorical
from annotation.models import LabelScheme, indices_key
from annotation.services.review import adjudication, label_input, labelling, queue
from annotation.services.review.agreement import project_agreement
from tests import factories

pytestmark = pytest.mark.django_db

VALID = {"categorical": ("aligned", None), "likert": ("", {"simplicity": 4, "adequacy": "5", "fluency": 3.0})}


def test_every_built_in_scheme_has_a_registered_kind():
    assert {k.name for k in kinds()} >= {s["kind"] for s in BUILTIN_SCHEMES} == {"categorical", "likert"}
    assert scheme_kind("categorical").gold and not scheme_kind("likert").gold
    assert (scheme_kind("categorical").widget, scheme_kind("likert").widget) == ("choices", "ratings")


@pytest.mark.parametrize("slug", [s["slug"] for s in BUILTIN_SCHEMES])
def test_every_kind_validates_describes_and_describes_itself_to_the_pages(slug):
    scheme = LabelScheme.objects.get(slug=slug)
    kind = scheme_kind(scheme)
    value, ratings = VALID[kind.name]
    if kind.name == "categorical":
        value = scheme.value_names()[0]
    stored = label_input.validate_value(scheme, value, ratings)
    assert kind.describe(scheme, value, stored) != "(empty)"
    with pytest.raises(labelling.LabelInputError):
        label_input.validate_value(scheme, "no-such-value", {"no-such-dimension": 1})
    payload = queue.scheme_payload(scheme)
    assert payload["kind"] == kind.name and payload["widget"] == kind.widget and payload["gold"] == kind.gold
    assert [v["value"] for v in payload["values"]] == scheme.value_names()
    assert json.loads(json.dumps(payload)) == payload


class Pick(Categorical):
    """A test's kind: one value per pair, like categorical, but never settled into gold."""

    name = "pick"
    label = "pick"
    gold = False
    why_no_gold = "Picks are counted, not adjudicated"

    def validate(self, scheme, value, ratings):
        if value == "maybe":
            raise InvalidValue("value: 'maybe' is no pick")
        return super().validate(scheme, value, ratings)


@pytest.fixture
def pick(users):
    register(Pick)
    scheme = LabelScheme.objects.create(slug="pick", name="Pick", kind="pick", values=[
        {"value": "yes", "name": "Yes", "key": "1", "counts_as": "aligned"},
        {"value": "maybe", "name": "Maybe", "key": "2", "counts_as": "partial"},
        {"value": "no", "name": "No", "key": "3", "counts_as": "not"}])
    project = factories.make_project("Picks", scheme="pick", rita="researcher", anna="annotator")
    yield project, scheme
    unregister("pick")


def test_a_registered_kind_decides_through_the_gate_the_pages_and_adjudication(pick, client, users):
    project, scheme = pick
    assert label_input.validate_value(scheme, "yes", {}) == {}
    with pytest.raises(labelling.LabelInputError, match="'maybe' is no pick"):
        label_input.validate_value(scheme, "maybe", {})
    assert queue.scheme_payload(scheme)["widget"] == "choices" and queue.scheme_payload(scheme)["gold"] is False

    client.force_login(users["anna"])
    page = client.get(f"/projects/{project.pk}/annotate/").content.decode()
    config = json.loads(re.search(r'<script id="annotate-config" type="application/json">(.*?)</script>', page, re.S)[1])
    assert config["scheme"]["kind"] == "pick" and config["scheme"]["widget"] == "choices"
    assert 'data-value="yes"' in page

    article = factories.make_article(project, "A", {"0": [["Long."]], "1": [["Short."]]})
    docs = {d.level: d for d in article.documents.all()}
    pair = factories.make_pair(None, article=article, complex_document=docs["0"], simple_document=docs["1"],
                               complex_key=indices_key([0]), simple_key=indices_key([0]))
    with pytest.raises(adjudication.AdjudicationError, match="Picks are counted, not adjudicated"):
        adjudication.decide(pair, "yes", users["rita"])
    assert project_agreement(project)["kind"] == "pick"


def test_a_kind_cannot_be_registered_twice():
    class Other(Categorical):
        name = "categorical"

    with pytest.raises(ValueError, match="registered twice"):
        register(Other)
    assert type(scheme_kind("categorical")) is Categorical


def test_the_scheme_api_offers_the_registered_kinds(pick, api, users):
    values = [{"value": "a", "name": "A", "key": "1", "counts_as": "aligned"}]
    created = api(users["admin"]).post("/api/label-schemes/", {"slug": "picks-2", "name": "Picks 2", "kind": "pick",
                                                                "values": values}, format="json")
    assert created.status_code == 201, created.content
    unregister("pick")
    refused = api(users["admin"]).post("/api/label-schemes/", {"slug": "picks-3", "name": "Picks 3", "kind": "pick",
                                                                "values": values}, format="json")
    assert refused.status_code == 400 and "kind" in refused.json()


def test_the_model_takes_its_kinds_from_the_registry_not_from_choices(pick):
    """Adding a kind needs no model edit and no migration: the field has no choices, ``clean`` asks the registry."""
    assert not LabelScheme._meta.get_field("kind").choices
    LabelScheme(slug="picks-4", name="Picks 4", kind="pick", values=[{"value": "a", "name": "A"}]).full_clean()
    with pytest.raises(ValidationError, match="unknown label-scheme kind 'stars'; choose one of: categorical, likert"):
        LabelScheme(slug="stars", name="Stars", kind="stars", values=[{"value": "a", "name": "A"}]).full_clean()
