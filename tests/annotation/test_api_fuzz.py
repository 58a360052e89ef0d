"""Every API operation, fuzzed from the published OpenAPI schema, as each role: no answer is a 500.

schemathesis reads ``GET /api/schema/`` and generates requests for every operation (valid ones and,
in negative mode, ones that break the schema: wrong types, huge integers, odd strings, missing
fields), sent to the real Django WSGI app over a real database. Each operation is tried with
generated path ids and with the ids of real objects of the project (so bodies reach the
validation behind the lookups), and with one hostile value planted in an otherwise generated request
(what schemathesis never sends: a lone surrogate, a key with one, an integer past 64 bits, a NUL in a
query). The only check is that nothing answers 5xx; the test lists every
server error by operation with the exception and a curl command to reproduce it.

Bounded and deterministic (``derandomize``): ~1,400 requests per signed-in role, about 2½ minutes for
the four roles on two cores (SQLite; PostgreSQL takes about twice as long).
"""
from __future__ import annotations

import datetime
import re
from collections import defaultdict
from itertools import chain

import pytest
from django.core.signals import got_request_exception, request_finished, request_started
from django.db import close_old_connections
from django.utils import timezone

from annotation.models import (
    AlignmentRun,
    Assignment,
    Export,
    Job,
    Label,
    LabelScheme,
    ModelVersion,
    ParagraphProposal,
    Status,
    indices_key,
)
from annotation.services.alignment.run_saving import link_sentences
from tests import factories
from tests.worker_process import app_broker

pytestmark = pytest.mark.slow

ROLES = ("admin", "rita", "anna", "anonymous")
#: examples per (operation, kind of case): with the ids of real objects (the cases that reach the
#: validation behind the lookups), with generated ids (mostly 404s), and for an anonymous caller (401s)
EXAMPLES = 4
GENERATED_ID_EXAMPLES = 2
ANONYMOUS_EXAMPLES = 1
#: what an attacker plants in one place of a generated request (schemathesis itself never sends lone
#: surrogates, and seldom integers past 64 bits): the server must answer 4xx, never 500
HOSTILE_BODY_VALUES = ("\ud800", "x\udfffy", "nul\x00byte", 2**63, -(2**63) - 1, 10**40, ["\ud83d"], {"\udc00": 1})
HOSTILE_QUERY_VALUES = ("9" * 25, "-" + "9" * 20, "a\x00b", "1e999")


@pytest.fixture
def world(transactional_db, project, users, tmp_path):
    """The project with an article, a run, a pair served to and labelled by anna, a job, an export,
    a model version and a paragraph proposal; task messages go to a broker folder under tmp_path."""
    article = factories.make_article(project, "Bees", {
        "adv": [["Bee populations have declined sharply.", "Pesticides are blamed."], ["Farmers worry."]],
        "ele": [["There are fewer bees."], ["Farmers are worried."]],
    })
    complex_doc, simple_doc = article.documents.order_by("rank")
    run = AlignmentRun.objects.create(project=project, method="jaccard", status=Status.SUCCEEDED)
    pair = factories.make_pair(run, article=article, complex_document=complex_doc, simple_document=simple_doc,
                               complex_key=indices_key([0]), simple_key=indices_key([0]), score=0.8,
                               predicted_label="aligned")
    link_sentences([pair])
    served = timezone.now() - datetime.timedelta(seconds=60)
    for name in ("anna", "rita", "admin"):
        Assignment.objects.create(pair=pair, annotator=users[name], assigned_at=served)
    label = Label.objects.create(pair=pair, annotator=users["anna"], value="aligned", seconds=9)
    job = Job.objects.create(project=project, kind="corpus-stats", status=Status.SUCCEEDED)
    export = Export.objects.create(project=project, kind=Export.GOLD, options={})
    version = ModelVersion.objects.create(project=project, name="v1", kind="crf", path=str(tmp_path / "v1"))
    proposal = ParagraphProposal.objects.create(article=article, complex_document=complex_doc,
                                                simple_document=simple_doc, proposed_by=users["anna"], links=[])
    ids = {"projects": project.pk, "articles": article.pk, "documents": complex_doc.pk, "runs": run.pk,
           "jobs": job.pk, "pairs": pair.pk, "labels": label.pk, "exports": export.pk, "model-versions": version.pk,
           "paragraph-proposals": proposal.pk, "members": project.memberships.get(user__username="anna").pk,
           "label-schemes": LabelScheme.objects.get(slug="aligned-partial-not").pk,
           "splits": article.pk, "adjudication": pair.pk, "context": pair.pk}
    with app_broker("filesystem://", tmp_path / "broker"):
        yield ids


def real_ids(path: str, ids: dict[str, int]) -> dict[str, int]:
    """The ids of real objects for the path's parameters: each is named after the segment before it."""
    out = {}
    segments = path.strip("/").split("/")
    for before, segment in zip(segments, segments[1:], strict=False):
        match = re.fullmatch(r"\{(\w+)\}", segment)
        if match and before in ids:
            out[match.group(1)] = ids[before]
    return out


def _places(body, path=()):
    """Every (container, key) of a JSON body, a leaf or not, where a value can be planted."""
    if isinstance(body, dict):
        yield body, None
        for key, value in body.items():
            yield body, key
            yield from _places(value, (*path, key))
    elif isinstance(body, list):
        for index, value in enumerate(body):
            yield body, index
            yield from _places(value, (*path, index))


def plant(args) -> tuple:
    """(case, extra ``case.call`` arguments) that send the case with one hostile value planted in its
    JSON body or its query string (``choice`` picks where)."""
    import copy
    import json

    case, choice, body_value, query_value = args
    if case.media_type == "application/json" and isinstance(case.body, (dict, list)):
        body = copy.deepcopy(case.body)
        places = list(_places(body))
        container, key = places[choice % len(places)] if places else (None, None)
        if container is None:
            body = [body_value]
        elif key is None:
            container["planted" if choice % 2 else "\ud800"] = body_value
        else:
            container[key] = body_value
        return case, {"data": json.dumps(body).encode(), "headers": {"Content-Type": "application/json"}}
    if case.query:
        return case, {"params": {sorted(case.query)[choice % len(case.query)]: query_value}}
    return case, {}


def hostile(strategy):
    """``strategy``'s cases, each to be sent with one hostile value planted."""
    from hypothesis import strategies as st

    return st.tuples(strategy, st.integers(0, 1000), st.sampled_from(HOSTILE_BODY_VALUES),
                     st.sampled_from(HOSTILE_QUERY_VALUES)).map(plant)


@pytest.fixture
def server_errors():
    """Requests answered 500 (the exception each raised), recorded as Django reports them."""
    seen: list[str] = []

    def record(sender, request=None, **kwargs) -> None:
        import sys

        exc = sys.exc_info()[1]
        seen.append(f"{type(exc).__name__}: {str(exc)[:200]}" if exc else "?")

    got_request_exception.connect(record)
    # like Django's test client: keep the test's connection across requests
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield seen
    finally:
        got_request_exception.disconnect(record)
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


class Fuzzer:
    """Sends generated cases as one role and keeps every 5xx answer, by operation."""

    def __init__(self, headers: dict[str, str], server_errors: list[str]) -> None:
        self.headers, self.server_errors = headers, server_errors
        self.failures: dict[str, list[str]] = defaultdict(list)
        self.sent = 0

    def send(self, case, extra: dict) -> None:
        before = len(self.server_errors)
        response = case.call(**{**extra, "headers": {**self.headers, **extra.get("headers", {})}})
        self.sent += 1
        if response.status_code >= 500:
            cause = self.server_errors[before] if len(self.server_errors) > before else f"HTTP {response.status_code}"
            body = extra.get("data", b"").decode() or "(as generated)"
            self.failures[case.operation.label].append(
                f"{cause}\n    {case.as_curl_command(headers=self.headers)[:500]}\n    body: {body[:300]}"
                f" query: {extra.get('params', '')}")

    def run(self, strategy, examples: int) -> None:
        """``examples`` cases of ``strategy`` (pairs of a case and extra ``call`` arguments), reproducibly."""
        from hypothesis import HealthCheck, Phase, given, settings

        @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
        @given(planted=strategy)
        def check(planted) -> None:
            self.send(*planted)

        check()


def nothing_to_break(operation, pinned: dict | None) -> bool:
    """No body, no query, cookie or header parameter (but the credentials, which schemathesis leaves
    alone), and every path parameter pinned to a real id: a negative case has nothing to break, and
    schemathesis would reject every draw until hypothesis gives up (~3 s an operation, 28 a role)."""
    parameters = chain(operation.query, operation.cookies, operation.headers)
    if operation.body or any(not p.definition.get("x-original-security-type") for p in parameters):
        return False
    return {p.name for p in operation.path_parameters} <= set(pinned or {})


def fuzz(role: str, users: dict, ids: dict[str, int], server_errors: list[str]) -> Fuzzer:
    """Fuzz every operation as ``role`` (positive, negative and hostile cases, with generated and
    with real path ids); the token endpoints and then the project's deletion come last."""
    import schemathesis
    from hypothesis.errors import Unsatisfiable
    from rest_framework.authtoken.models import Token
    from schemathesis import GenerationMode

    from alignapp.wsgi import application

    def token(user) -> dict[str, str]:
        return {"Authorization": f"Token {Token.objects.get_or_create(user=user)[0].key}"}

    anonymous = role == "anonymous"
    schema = schemathesis.openapi.from_wsgi("/api/schema/", application, headers=token(users["admin" if anonymous else role]))
    fuzzer = Fuzzer({} if anonymous else token(users[role]), server_errors)
    # Last: the token endpoints (rotating or revoking kills this role's token for what follows), then deletions.
    operations = sorted((result.ok() for result in schema.get_all_operations()),
                        key=lambda op: (op.path.startswith("/api/token/"), op.method.upper() == "DELETE"))
    for operation in operations:
        pinned = real_ids(operation.path, ids)
        runs = [(None, ANONYMOUS_EXAMPLES if anonymous else GENERATED_ID_EXAMPLES if pinned else EXAMPLES)]
        if pinned and not anonymous:
            runs.append((pinned, EXAMPLES))
        for path_parameters, examples in runs:
            fuzzer.run(operation.as_strategy(path_parameters=path_parameters).map(lambda case: (case, {})), examples)
            fuzzer.run(hostile(operation.as_strategy(path_parameters=path_parameters)), examples)
            if nothing_to_break(operation, path_parameters):
                continue  # hypothesis would look ~1,000 times for a broken case before Unsatisfiable
            try:
                fuzzer.run(operation.as_strategy(generation_mode=GenerationMode.NEGATIVE, path_parameters=path_parameters)
                           .map(lambda case: (case, {})), examples)
            except Unsatisfiable:  # nothing left to break that the check above did not see
                pass
    return fuzzer


@pytest.mark.parametrize("role", ROLES)
def test_no_operation_answers_a_server_error(role, world, users, server_errors):
    fuzzer = fuzz(role, users, world, server_errors)
    failures = fuzzer.failures
    assert fuzzer.sent > (150 if role == "anonymous" else 700)  # every operation, several times
    report = "\n".join(f"{label}: {len(found)}\n  " + "\n  ".join(found[:2]) for label, found in sorted(failures.items()))
    assert not failures, f"{sum(map(len, failures.values()))} server errors as {role}:\n{report}"
