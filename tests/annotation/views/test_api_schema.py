"""The published OpenAPI schema: served to signed-in users, generated without a warning, covering
every API route (the fuzz test, ``tests/annotation/test_api_fuzz.py``, reaches only what it lists)."""
from __future__ import annotations

import re

from django.urls import URLPattern, URLResolver, get_resolver


def _api_routes(patterns, prefix: str = "") -> set[str]:
    """Every ``/api/...`` route of the URLconf, with its parameters as ``{}``."""
    out: set[str] = set()
    for p in patterns:
        route = prefix + str(p.pattern)
        if isinstance(p, URLResolver):
            out |= _api_routes(p.url_patterns, route)
        elif isinstance(p, URLPattern) and route.startswith("api/"):
            cleaned = re.sub(r"<(?:\w+:)?\w+>|\(\?P<\w+>[^)]*\)", "{}", route).replace("^", "").replace("$", "")
            if "\\.(?P" not in route and "format" not in route:
                out.add("/" + cleaned.rstrip("/") + "/")
    return out


def test_the_schema_is_for_signed_in_users(api, users):
    assert api().get("/api/schema/").status_code == 401
    response = api(users["anna"]).get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200 and response.json()["openapi"].startswith("3.")


def test_the_schema_is_generated_without_warnings_and_lists_every_api_route(db):
    from drf_spectacular.drainage import GENERATOR_STATS
    from drf_spectacular.generators import SchemaGenerator

    GENERATOR_STATS.reset()
    schema = SchemaGenerator().get_schema(request=None, public=True)
    assert not GENERATOR_STATS, f"warnings {dict(GENERATOR_STATS._warn_cache)} errors {dict(GENERATOR_STATS._error_cache)}"
    documented = {re.sub(r"\{\w+\}", "{}", path) for path in schema["paths"]}
    missing = _api_routes(get_resolver().url_patterns) - documented - {"/api/", "/api/schema/"}
    assert not missing, f"API routes missing from the schema: {sorted(missing)}"


def test_ids_in_paths_are_integers_and_bodies_are_described(db):
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path":
                    assert parameter["schema"]["type"] == "integer", (path, parameter)
            if method in ("put", "patch"):
                assert "requestBody" in operation, (path, method)


def test_a_runs_queue_is_in_its_request_schema_so_the_fuzz_sends_it(db):
    """Issue 36 item 1: ``queue`` was read from the body past the serializer (a list answered 500) and,
    read-only in the schema, never fuzzed; now it is a choice of the request body."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    body = schema["paths"]["/api/runs/"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    fields = schema["components"]["schemas"][body.rsplit("/", 1)[-1]]["properties"]
    queue = fields["queue"]
    if "$ref" in queue or "allOf" in queue:
        ref = queue.get("$ref") or queue["allOf"][0]["$ref"]
        queue = schema["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    assert sorted(queue["enum"]) == ["cpu", "gpu"]


def test_every_operation_that_may_answer_computing_documents_its_202(db):
    """Issue 37: on a big project these operations answer ``202`` (``errors.BeingComputed``) until a job has kept
    their figures; the schema says so, with the job and ``retry_after``, for a client generator to handle it."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    computing = {("/api/projects/{project_pk}/agreement/", "get"), ("/api/projects/{project_pk}/dashboard/", "get"),
                 ("/api/projects/{project_pk}/score-distribution/", "get"), ("/api/runs/compare/", "get"),
                 ("/api/runs/{id}/", "get"), ("/api/projects/{project_pk}/exports/preview/", "post")}
    for path, method in computing:
        responses = schema["paths"][path][method]["responses"]
        assert {"200", "202"} <= set(responses), (path, method, sorted(responses))
        body = responses["202"]["content"]["application/json"]["schema"]
        assert body == {"$ref": "#/components/schemas/BeingComputed"}, body
    fields = schema["components"]["schemas"]["BeingComputed"]["properties"]
    assert {"status", "detail", "job", "retry_after"} <= set(fields)
