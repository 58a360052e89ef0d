"""Outside a project, everything in it answers as if it did not exist (404, pages and API alike); a
member without the role gets 403.

Every route of the app is checked: each route with an id in its path is either in ``SCOPED`` (what
kind of object each id names) or in ``NOT_PROJECT_SCOPED``, so a new route that forgets the rule
fails here until it is listed.
"""
from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from annotation.models import (
    AlignmentRun,
    Assignment,
    Export,
    Job,
    Label,
    Membership,
    ModelVersion,
    ParagraphProposal,
    Status,
    indices_key,
)
from tests import factories

MISSING = 999_999  # an id nothing has

# route name → {path argument: kind of object it names}
SCOPED: dict[str, dict[str, str]] = {
    "project-adjudicate": {"pk": "project"}, "project-dashboard": {"pk": "project"},
    "review-adjudication": {"project_pk": "project"}, "review-decided": {"project_pk": "project"},
    "review-pair": {"project_pk": "project", "pair_pk": "pair"},
    "review-revert": {"project_pk": "project", "pair_pk": "pair"},
    "review-gold": {"project_pk": "project"}, "review-agreement": {"project_pk": "project"},
    "review-dashboard": {"project_pk": "project"}, "review-score-distribution": {"project_pk": "project"},
    "review-calibrate": {"project_pk": "project"},
    "article-align": {"pk": "article"}, "article-paragraphs": {"pk": "article"},
    "article-alignment-api": {"pk": "article"}, "article-completion-api": {"pk": "article"},
    "article-curate": {"pk": "article"}, "article-curation-api": {"pk": "article"},
    "project-my-articles": {"project_pk": "project"},
    "article-paragraphs-api": {"pk": "article"},
    "project-paragraph-job": {"project_pk": "project"}, "project-paragraph-proposals": {"project_pk": "project"},
    "paragraph-proposal": {"pk": "proposal"}, "paragraph-proposal-accept": {"pk": "proposal"},
    "paragraph-proposal-reject": {"pk": "proposal"},
    "project-export": {"pk": "project"}, "export-splits": {"project_pk": "project"},
    "export-splits-unlock": {"project_pk": "project"},
    "export-article-split": {"project_pk": "project", "article_pk": "article"},
    "export-list": {"project_pk": "project"}, "export-preview": {"project_pk": "project"},
    "export-gold-rows": {"project_pk": "project"},
    "export-detail": {"project_pk": "project", "pk": "export"},
    "export-download": {"project_pk": "project", "pk": "export"},
    "project-settings": {"pk": "project"}, "project-settings-general": {"pk": "project"},
    "project-settings-qc": {"pk": "project"}, "project-settings-language-tools": {"pk": "project"},
    "project-settings-guidelines": {"pk": "project"}, "project-settings-add-member": {"pk": "project"},
    "project-settings-member-role": {"pk": "project", "membership_pk": "membership"},
    "project-settings-member-remove": {"pk": "project", "membership_pk": "membership"},
    "project-settings-member-reinstate": {"pk": "project", "membership_pk": "membership"},
    "project-models": {"pk": "project"}, "project-run-compare": {"pk": "project"},
    "project-train": {"project_pk": "project"}, "project-review-changes": {"project_pk": "project"},
    "project-model-versions": {"project_pk": "project"},
    "model-version-promote": {"pk": "version"}, "model-version-realign": {"pk": "version"},
    "model-version-download": {"pk": "version"},
    "run-page": {"pk": "run"}, "project-run-page": {"project_pk": "project", "pk": "run"},
    "project-my-labels": {"pk": "project"},
    "project-detail": {"pk": "project"},  # the page and the API's router route share the name
    "project-score": {"pk": "project"}, "project-stats": {"pk": "project"},
    "article-detail": {"pk": "article"},  # the page and the API's router route share the name
    "document-detail": {"pk": "document"},
    "run-detail": {"pk": "run"}, "run-cancel": {"pk": "run"}, "run-retry": {"pk": "run"},
    "job-detail": {"pk": "job"}, "job-cancel": {"pk": "job"}, "job-retry": {"pk": "job"},
    "project-audit": {"pk": "project"}, "project-audit-api": {"project_pk": "project"},
    "pair-detail": {"pk": "pair"}, "label-detail": {"pk": "label"}, "label-history": {"pk": "label"},
    "project-members": {"project_pk": "project"},
    "project-member": {"project_pk": "project", "pk": "membership"},
    "project-import": {"project_pk": "project"},
    "queue-next": {"project_pk": "project"}, "queue-submit": {"project_pk": "project"},
    "queue-skip": {"project_pk": "project"}, "queue-undo": {"project_pk": "project"},
    "queue-context": {"project_pk": "project", "pair_pk": "pair"},
    "project-import-page": {"pk": "project"}, "project-start-run": {"pk": "project"},
    "project-annotate": {"pk": "project"},
}
# routes with an id that is not a project's object
NOT_PROJECT_SCOPED = {"label-scheme-detail", "people-set-active", "accept-invitation"}

METHODS = ("get", "post", "put", "patch", "delete")


def _routes() -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, pattern, path arguments) of every route with an argument; format-suffix variants and
    Django's admin (staff only, its own rules) left out."""
    found = []

    def arguments(pattern) -> tuple[str, ...]:
        return tuple(getattr(pattern, "converters", {}) or pattern.regex.groupindex)

    def walk(resolver: URLResolver, prefix: str, outer: tuple[str, ...]) -> None:
        for entry in resolver.url_patterns:
            if isinstance(entry, URLResolver):  # an include(): its prefix's arguments belong to every route in it
                if getattr(entry, "app_name", None) != "admin":
                    walk(entry, prefix + str(entry.pattern), outer + arguments(entry.pattern))
            elif isinstance(entry, URLPattern):
                names = outer + arguments(entry.pattern)
                if names and "format" not in names and entry.name:
                    found.append((entry.name, prefix + str(entry.pattern), names))

    walk(get_resolver(), "", ())
    return found


def test_every_route_with_an_id_is_classified():
    unknown = sorted({name for name, _, _ in _routes()} - set(SCOPED) - NOT_PROJECT_SCOPED)
    assert not unknown, f"add these routes to SCOPED (or NOT_PROJECT_SCOPED): {unknown}"


@pytest.fixture
def world(project, users):
    """One object of every kind in the project (anna, its annotator, was given the pair and labelled it)."""
    article = factories.make_article(project, "Bees", {"adv": [["Bees make honey.", "They live in hives."]],
                                                        "ele": [["Bees make honey."]]})
    complex_doc, simple_doc = article.documents.order_by("rank")
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.FAILED, error="boom")
    pair = factories.make_pair(run, article=article, complex_document=complex_doc, simple_document=simple_doc,
                               complex_key=indices_key([0]), simple_key=indices_key([0]), score=0.9,
                               predicted_label="aligned")
    Assignment.objects.create(pair=pair, annotator=users["anna"])
    label = Label.objects.create(pair=pair, annotator=users["anna"], value="aligned")
    job = Job.objects.create(project=project, kind="corpus-stats", status=Status.SUCCEEDED)
    return {
        "project": project.pk, "article": article.pk, "document": complex_doc.pk, "run": run.pk, "pair": pair.pk,
        "label": label.pk, "job": job.pk,
        "membership": Membership.objects.get(project=project, user=users["anna"]).pk,
        "export": Export.objects.create(project=project, kind=Export.GOLD).pk,
        "version": ModelVersion.objects.create(project=project, name="v1", kind="crf", path="/nowhere").pk,
        "proposal": ParagraphProposal.objects.create(article=article, complex_document=complex_doc,
                                                     simple_document=simple_doc, proposed_by=users["anna"]).pk,
    }


def _url(pattern: str, arguments: dict[str, int]) -> str:
    """A route pattern (path() or the router's regex) with its arguments filled in."""
    import re

    url = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: str(arguments[m.group(1)]), pattern)
    url = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(arguments[m.group(1)]), url)
    return "/" + url.replace("^", "").replace("$", "")


def _scoped_urls(world: dict[str, int], *, missing: bool = False) -> dict[str, str]:
    """key → URL of every project-scoped route; the key is the route's name, ``api:<name>`` for the
    API route where a page shares the name (``project-detail``, ``article-detail``)."""
    routes = [r for r in _routes() if r[0] not in NOT_PROJECT_SCOPED]
    shared = {name for name, _, _ in routes if sum(n == name for n, _, _ in routes) > 1}
    urls = {}
    for name, pattern, names in routes:
        kinds = SCOPED[name]
        key = f"api:{name}" if name in shared and pattern.startswith("api/") else name
        urls[key] = _url(pattern, {arg: MISSING if missing else world[kinds[arg]] for arg in names})
    return urls


def _client(user) -> APIClient:
    client = APIClient()
    client.force_login(user)  # a browser's session: pages and the API alike
    return client


@pytest.mark.parametrize("outsider", ["olga", "ursula"])
def test_an_outsider_gets_404_for_everything_in_the_project(users, world, outsider):
    client = _client(users[outsider])
    real, missing = _scoped_urls(world), _scoped_urls(world, missing=True)
    wrong = []
    for name, url in real.items():
        for method in METHODS:
            got = getattr(client, method)(url, {}, format="json").status_code
            # the same answer as for an id that does not exist: 404, or 405 for a method the route lacks
            expected = getattr(client, method)(missing[name], {}, format="json").status_code
            if got != expected or got not in (404, 405):
                wrong.append(f"{method.upper()} {url} ({name}): {got}, for a missing id {expected}")
    assert not wrong, "\n".join(wrong)
    assert Membership.objects.filter(pk=world["membership"]).exists()  # nothing an outsider sent changed anything


# (route name, method) that only the project's researchers may use: its annotator gets 403, not 404
RESEARCHER_ONLY = [
    ("project-adjudicate", "get"), ("project-dashboard", "get"), ("review-adjudication", "get"),
    ("review-decided", "get"), ("review-pair", "get"), ("review-gold", "get"), ("review-agreement", "get"),
    ("review-dashboard", "get"), ("review-score-distribution", "get"), ("review-calibrate", "post"),
    ("project-paragraph-job", "post"), ("paragraph-proposal-accept", "post"), ("paragraph-proposal-reject", "post"),
    ("project-export", "get"), ("export-splits", "get"), ("export-splits-unlock", "post"), ("export-list", "get"),
    ("export-preview", "post"), ("export-detail", "get"), ("export-download", "get"), ("export-gold-rows", "get"),
    ("project-settings", "get"), ("project-settings-general", "post"), ("project-settings-add-member", "post"),
    ("project-settings-member-remove", "post"), ("project-models", "get"), ("project-run-compare", "get"),
    ("project-train", "post"), ("project-review-changes", "post"), ("project-model-versions", "get"),
    ("model-version-promote", "post"), ("model-version-download", "get"),
    ("api:project-detail", "patch"), ("project-score", "post"), ("project-stats", "post"),
    ("run-retry", "post"), ("run-cancel", "post"), ("job-detail", "get"), ("job-cancel", "post"),
    ("project-members", "get"), ("project-member", "delete"), ("project-import", "post"),
    ("project-import-page", "get"), ("project-start-run", "post"),
    ("article-curate", "get"), ("article-curation-api", "get"), ("article-curation-api", "post"),
    # blind annotation: the run's pairs are the model's predictions
    ("run-detail", "get"), ("run-page", "get"), ("project-run-page", "get"),
]


def test_an_annotator_of_the_project_gets_403_where_researchers_only_may_go(users, world):
    client = _client(users["anna"])
    urls = _scoped_urls(world)
    wrong = []
    for name, method in RESEARCHER_ONLY:
        got = getattr(client, method)(urls[name], {}, format="json").status_code
        if got != 403:
            wrong.append(f"{method.upper()} {urls[name]} ({name}): {got}")
    assert not wrong, "\n".join(wrong)


def test_the_method_list_answers_404_outside_and_403_to_annotators(users, world):
    url = f"/api/methods/?project={world['project']}"
    assert _client(users["olga"]).get(url).status_code == 404
    assert _client(users["anna"]).get(url).status_code == 403
    assert _client(users["rita"]).get(url).status_code == 200


def test_a_project_or_pair_named_in_the_body_is_not_found_outside_the_project(users, world):
    olga = _client(users["olga"])
    for body in ({"project": world["project"], "method": "jaccard"}, {"project": MISSING, "method": "jaccard"}):
        response = olga.post("/api/runs/", body, format="json")
        assert response.status_code == 404 and "not found" in str(response.json())
    for pair in (world["pair"], MISSING):
        response = olga.post("/api/labels/", {"pair": pair, "value": "aligned"}, format="json")
        assert response.status_code == 404 and "not found" in str(response.json())
    assert not AlignmentRun.objects.exclude(pk=world["run"]).exists()
    assert Label.objects.count() == 1
