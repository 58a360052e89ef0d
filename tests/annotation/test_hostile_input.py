"""Hostile input answers 4xx, stores nothing, and leaves every list working (the probe's findings).

Each case sends one thing an attacker would: a lone surrogate or a NUL in a label, a project's
config, a run's params or an import; an integer past 64 bits in a path, a query or a body; a body
that is not a JSON object; ``1e999``/``NaN``; a member added twice; a zip whose header lies about
its size. The database must be exactly as before, and ``GET /api/labels/``, ``/api/projects/`` and
``/api/runs/`` must still answer 200 for everyone. The same cases run on PostgreSQL (marker
``services``): the probe found different 500s there (NUL refused by the database itself).
"""
from __future__ import annotations

import io
import struct
import zipfile

import pytest

from annotation.models import AlignmentRun, Article, Job, Label, Membership, Project, Status
from tests import factories, labels
from tests.annotation.services.review.test_queue import build_queue, set_qc

HUGE = 2**63  # one past the largest signed 64-bit integer
RATINGS = '"simplicity": "4", "adequacy": "3", "fluency": "5"'


@pytest.fixture
def world(users, project):
    """``project`` (categorical) with a run, and a Likert project whose first pair is served to anna."""
    set_qc(project)
    build_queue(project, 2)
    likert = factories.make_project("Human evaluation", scheme="likert-human-eval", rita="researcher", anna="annotator")
    set_qc(likert)
    build_queue(likert, 2)
    pair = labels.next_item(users["anna"], likert)
    return {"p": project.pk, "l": likert.pk, "pair": pair.pk, "run": project.runs.first().pk}


def _jobs_other_than_refused_imports() -> int:
    """Every import is a recorded job, so a refused one leaves a failed ``import`` job (the record of the
    attempt, holding its error); anything else a request left would count."""
    return Job.objects.exclude(kind="import", status=Status.FAILED).count()


def snapshot() -> tuple:
    """Everything a hostile request could have written."""
    return (list(Label.objects.values_list("pk", "value", "ratings", "comment").order_by("pk")),
            list(Project.objects.values_list("pk", "name", "config", "label_scheme_id").order_by("pk")),
            AlignmentRun.objects.count(), _jobs_other_than_refused_imports(), Article.objects.count(),
            list(Membership.objects.values_list("pk", "role").order_by("pk")))


def assert_lists_still_answer(api, users) -> None:
    for name in ("admin", "rita", "anna"):
        client = api(users[name])
        for url in ("/api/labels/", "/api/projects/", "/api/runs/", "/api/pairs/"):
            response = client.get(url)
            assert response.status_code == 200, (name, url, response.content[:300])
            response.content.decode("utf-8")  # the answer is valid UTF-8


# (name, user, method, url, JSON text, status, words the answer must hold). The text is sent as
# is: ``\\ud800`` in it is JSON's escape of a lone surrogate, which no UTF-8 text can hold.
JSON_CASES = [
    ("surrogate in a rating", "anna", "post", "/api/labels/",
     '{"pair": {pair}, "ratings": {"simplicity": "\\ud800", "adequacy": "3", "fluency": "5"}, "seconds": 9}',
     400, ["ratings.simplicity", "surrogate"]),
    ("surrogate in a rating's key (queue)", "anna", "post", "/api/projects/{l}/queue/submit/",
     '{"pair": {pair}, "ratings": {"\\udc00": "4"}, "seconds": 9}', 400, ["ratings", "surrogate"]),
    ("NUL in a comment", "anna", "post", "/api/labels/",
     '{"pair": {pair}, "ratings": {' + RATINGS + '}, "comment": "a\\u0000b", "seconds": 9}', 400, ["comment", "NUL"]),
    ("1e999 seconds", "anna", "post", "/api/labels/",
     '{"pair": {pair}, "ratings": {' + RATINGS + '}, "seconds": 1e999}', 400, ["not finite"]),
    ("NaN seconds", "anna", "post", "/api/labels/",
     '{"pair": {pair}, "ratings": {' + RATINGS + '}, "seconds": NaN}', 400, ["NaN"]),
    ("a pair id past 64 bits", "anna", "post", "/api/labels/",
     '{"pair": 9223372036854775808, "ratings": {' + RATINGS + '}}', 400, ["out of range"]),
    ("a pair id past 64 bits (skip)", "anna", "post", "/api/projects/{l}/queue/skip/",
     '{"pair": 9223372036854775808}', 400, ["out of range"]),
    ("a label that is an array", "anna", "post", "/api/labels/", '[{"pair": {pair}}]', 400, ["JSON object"]),
    ("a label that is a string", "anna", "post", "/api/labels/", '"aligned"', 400, ["JSON object"]),
    ("surrogate key in a project's config", "rita", "patch", "/api/projects/{p}/",
     '{"config": {"\\ud800": true}}', 400, ["surrogate"]),
    ("surrogate in the guidelines", "rita", "patch", "/api/projects/{p}/",
     '{"config": {"guidelines": "x\\udfff"}}', 400, ["config.guidelines", "surrogate"]),
    ("NUL in a project's name", "rita", "patch", "/api/projects/{p}/", '{"name": "a\\u0000"}', 400, ["NUL"]),
    ("1e999 in the QC config", "rita", "patch", "/api/projects/{p}/",
     '{"config": {"qc": {"min_seconds": 1e999}}}', 400, ["not finite"]),
    ("a project that is null", "rita", "patch", "/api/projects/{p}/", "null", 400, ["JSON object"]),
    ("surrogate key in a run's params", "rita", "post", "/api/runs/",
     '{"project": {p}, "method": "jaccard", "params": {"\\ud800": 0.5}}', 400, ["params", "surrogate"]),
    ("NUL in a run's params", "rita", "post", "/api/runs/",
     '{"project": {p}, "method": "jaccard", "params": {"tokenizer": "\\u0000"}}', 400, ["NUL"]),
    ("a project id past 64 bits (run)", "rita", "post", "/api/runs/",
     '{"project": 9223372036854775808, "method": "jaccard"}', 400, ["out of range"]),
    ("a run's queue that is a list", "rita", "post", "/api/runs/", '{"project": {p}, "method": "jaccard", "queue": []}',
     400, ["queue"]),
    ("a run's queue that is an object", "rita", "post", "/api/runs/",
     '{"project": {p}, "method": "jaccard", "queue": {}}', 400, ["queue"]),
    ("an unknown queue", "rita", "post", "/api/runs/", '{"project": {p}, "method": "jaccard", "queue": "tpu"}', 400,
     ["queue", "tpu"]),
    ("scoring params that are a string", "rita", "post", "/api/projects/{p}/score/", '"access-attributes"', 400,
     ["JSON object"]),
    ("JSON nested 100000 deep", "rita", "patch", "/api/projects/{p}/",
     '{"config": ' + "[" * 100_000 + "]" * 100_000 + "}", 400, ["nested"]),
    ("an integer of 5000 digits", "rita", "patch", "/api/projects/{p}/", '{"config": {"queue_run": ' + "9" * 5000 + "}}",
     400, ["JSON parse error"]),
]


def send(api, users, world, case):
    _, who, method, url, text, *_ = case
    for key, value in world.items():
        url, text = url.replace(f"{{{key}}}", str(value)), text.replace(f"{{{key}}}", str(value))
    return getattr(api(users[who]), method)(url, text, content_type="application/json")


def check_json_case(api, users, world, case) -> None:
    before = snapshot()
    response = send(api, users, world, case)
    status, words = case[5], case[6]
    assert response.status_code == status, response.content[:500]
    body = response.content.decode("utf-8")
    assert all(word in body for word in words), body[:500]
    assert snapshot() == before
    assert_lists_still_answer(api, users)


@pytest.mark.parametrize("case", JSON_CASES, ids=[c[0] for c in JSON_CASES])
def test_a_hostile_json_body_is_refused_and_nothing_is_stored(api, users, world, case):
    check_json_case(api, users, world, case)


@pytest.mark.services
@pytest.mark.parametrize("case", JSON_CASES, ids=[c[0] for c in JSON_CASES])
def test_on_postgresql_a_hostile_json_body_is_refused_and_nothing_is_stored(postgres_db, api, users, world, case):
    check_json_case(api, users, world, case)


# (name, user, method, url, status): ids and text in the path and the query string
URL_CASES = [
    ("project id past 64 bits", "rita", "get", f"/api/projects/{HUGE}/", 404),
    ("negative id past 64 bits", "rita", "get", f"/api/runs/-{HUGE}/", 404),
    ("pair id past 64 bits (queue context)", "anna", "get", f"/api/projects/{{l}}/queue/context/{HUGE}/", 404),
    ("member id past 64 bits", "rita", "delete", f"/api/projects/{{p}}/members/{HUGE}/", 404),
    ("an id of 30 digits", "rita", "get", "/api/articles/" + "9" * 30 + "/", 404),
    ("?run= past 64 bits", "rita", "get", f"/api/pairs/?run={HUGE}", 400),
    ("?project= past 64 bits", "rita", "get", f"/api/runs/?project={HUGE}", 400),
    ("?project= of 30 digits", "anna", "get", "/api/articles/?project=" + "9" * 30, 400),
    ("?complex= past 64 bits", "rita", "get", f"/api/projects/{{p}}/paragraph-proposals/?complex=-{HUGE + 1}", 400),
    ("NUL in ?q=", "anna", "get", "/api/labels/?q=a%00b", 400),
    ("NUL in a user search", "rita", "get", "/api/users/?q=%00", 400),
    ("NUL in ?status=", "rita", "get", "/api/projects/{p}/paragraph-proposals/?status=%00", 400),
    ("a page with an id past 64 bits", "rita", "page", f"/projects/{HUGE}/", 404),
    ("a run page with an id past 64 bits", "rita", "page", f"/projects/{{p}}/runs/{HUGE}/", 404),
]


def check_url_case(api, client, users, world, case) -> None:
    _, who, method, url, status = case
    for key, value in world.items():
        url = url.replace(f"{{{key}}}", str(value))
    before = snapshot()
    if method == "page":
        client.force_login(users[who])
        response = client.get(url)
    else:
        response = getattr(api(users[who]), method)(url)
    assert response.status_code == status, response.content[:500]
    assert snapshot() == before
    assert_lists_still_answer(api, users)


@pytest.mark.parametrize("case", URL_CASES, ids=[c[0] for c in URL_CASES])
def test_a_hostile_path_or_query_is_a_404_or_400(api, client, users, world, case):
    check_url_case(api, client, users, world, case)


@pytest.mark.services
@pytest.mark.parametrize("case", URL_CASES, ids=[c[0] for c in URL_CASES])
def test_on_postgresql_a_hostile_path_or_query_is_a_404_or_400(postgres_db, api, client, users, world, case):
    check_url_case(api, client, users, world, case)


def test_a_form_post_with_an_id_past_64_bits_or_a_nul_is_refused(api, users, world):
    before = snapshot()
    anna = api(users["anna"])
    response = anna.post(f"/api/projects/{world['l']}/queue/skip/", {"pair": str(HUGE)})  # multipart
    assert response.status_code == 400 and "pair" in response.json()
    response = anna.post(f"/api/projects/{world['l']}/queue/submit/", f"pair={world['pair']}&comment=a%00b",
                         content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400 and "NUL" in response.json()["comment"]
    response = api(users["rita"]).post(f"/api/projects/{world['p']}/members/", {"username": "olga\x00", "role": "annotator"})
    assert response.status_code == 400 and "NUL" in response.json()["username"]
    assert snapshot() == before
    assert_lists_still_answer(api, users)


def test_the_settings_page_refuses_a_nul_and_saves_nothing(api, client, users, world):
    client.force_login(users["rita"])
    before = snapshot()
    response = client.post(f"/projects/{world['p']}/settings/general/",
                           {"description": "x\x00y", "language": "en", "adjudicate": "all"})
    assert response.status_code == 400 and "NUL" in response.content.decode()
    assert snapshot() == before


@pytest.mark.parametrize("params,words", [
    ('{"\\ud800": 1}', "surrogate"), ('{"aligned_threshold": 1e999}', "not finite"), ("[1]", "JSON object"),
    ('{"aligned_threshold": NaN}', "NaN"),
])
def test_the_run_form_refuses_hostile_params_with_a_message(api, client, users, world, params, words):
    client.force_login(users["rita"])
    before = snapshot()
    response = client.post(f"/projects/{world['p']}/runs/", {"method": "jaccard", "params": params}, follow=True)
    assert response.status_code == 200 and "Run not started" in response.content.decode()
    assert words in response.content.decode()
    assert snapshot() == before
    assert_lists_still_answer(api, users)


def test_a_member_added_twice_is_a_400_and_stays_one_membership(api, users, world):
    rita = api(users["rita"])
    url = f"/api/projects/{world['p']}/members/"
    first = rita.post(url, {"username": "olga", "role": "annotator"}, format="json")
    assert first.status_code == 201
    before = snapshot()
    again = rita.post(url, {"username": "olga", "role": "researcher"}, format="json")
    assert again.status_code == 400 and "already a member" in again.json()["detail"]
    assert snapshot() == before
    assert Membership.objects.filter(project_id=world["p"], user__username="olga").count() == 1


# --- Imports ------------------------------------------------------------------------------------

def _jsonl(line: str) -> bytes:
    return (line + "\n").encode("ascii")


def _record(text: str) -> str:
    return ('{"id": "a1", "complex": {"paragraphs": [["Bees are in decline everywhere.", "' + text + '"]]},'
            ' "simple": {"paragraphs": [["There are fewer bees."]]}}')


def lying_zip() -> bytes:
    """A zip whose headers declare its member 10 bytes long; the member holds 3 KB (deflated)."""
    text = ("The quick brown fox jumps over the lazy dog. " * 70).encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("Fox-adv.txt", text)
    data = bytearray(buffer.getvalue())
    local = data.find(b"PK\x03\x04")
    struct.pack_into("<I", data, local + 22, 10)  # the local header's uncompressed size
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 10)  # the central directory's uncompressed size
    return bytes(data)


IMPORT_CASES = [
    ("a lone surrogate in a JSONL sentence", "corpus.jsonl", _jsonl(_record("Stings \\ud800 hurt.")), "surrogate"),
    ("a NUL in a JSONL sentence", "corpus.jsonl", _jsonl(_record("Stings \\u0000 hurt.")), "NUL"),
    ("a surrogate key in a JSONL record", "corpus.jsonl", _jsonl('{"\\udc00": 1, ' + _record("x")[1:]), "surrogate"),
    ("NaN in a JSONL record", "corpus.jsonl", _jsonl(_record("Stings hurt.")[:-1] + ', "meta": {"x": NaN}}'), "finite"),
    ("a raw NUL byte in a text file", "Fox-adv.txt", b"The fox\x00 jumps.", "NUL"),
    ("a zip whose header understates its member", "corpus.zip", lying_zip(), "zip"),
]


def check_import_case(api, users, world, case) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    _, name, content, words = case
    before = snapshot()
    response = api(users["rita"]).post(f"/api/projects/{world['p']}/import/",
                                       {"files": [SimpleUploadedFile(name, content)], "format": "auto"})
    assert response.status_code == 400, response.content[:500]
    assert words in " ".join(response.json()["problems"]), response.json()
    assert snapshot() == before
    assert_lists_still_answer(api, users)


def test_the_same_record_without_the_hostile_value_imports(api, users, world):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("corpus.jsonl", _jsonl(_record("Stings hurt.")))
    response = api(users["rita"]).post(f"/api/projects/{world['p']}/import/", {"files": [upload], "format": "auto"})
    assert response.status_code == 201, response.content[:300]
    assert Article.objects.filter(project_id=world["p"], title="a1").exists()


@pytest.mark.parametrize("case", IMPORT_CASES, ids=[c[0] for c in IMPORT_CASES])
def test_a_hostile_import_is_refused_and_nothing_is_imported(api, users, world, case):
    check_import_case(api, users, world, case)


@pytest.mark.services
@pytest.mark.parametrize("case", IMPORT_CASES, ids=[c[0] for c in IMPORT_CASES])
def test_on_postgresql_a_hostile_import_is_refused_and_nothing_is_imported(postgres_db, api, users, world, case):
    check_import_case(api, users, world, case)
