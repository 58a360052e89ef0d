"""Sign-in limiting that cannot lock out a real user (issue 19 item 7): failures counted per username and
per client address separately and atomically, an increasing wait instead of a lock-out, the configured
proxy header, and an audit entry when a limit is reached."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.cache import caches
from django.test import RequestFactory

from annotation.models import AuditEvent
from annotation.services.projects import accounts


@pytest.fixture(autouse=True)
def _limits(settings, db):
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 5
    settings.LOGIN_FAILURE_WINDOW_MINUTES = 15
    settings.LOGIN_DELAY_SECONDS = 10
    settings.LOGIN_DELAY_MAX_SECONDS = 40
    settings.LOGIN_CLIENT_ADDRESS_HEADER = ""
    _clear_caches()
    yield
    _clear_caches()


@pytest.fixture
def clock(monkeypatch):
    """The limiter's clock, moved by hand."""
    now = [1_000_000.0]
    monkeypatch.setattr(accounts, "_now", lambda: now[0])
    return now


def login(client, username, password, address="10.0.0.1"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_parallel_attempts_get_no_extra_tries(monkeypatch, clock, transactional_db):
    """40 attempts at once on one username (from 40 addresses): exactly the limit get to try a password."""
    recorded = []
    monkeypatch.setattr(accounts, "record_limit", lambda tier, **kw: recorded.append(tier))
    barrier = threading.Barrier(40)

    def attempt(i):
        barrier.wait(timeout=30)
        wait = accounts.begin_sign_in(f"10.1.0.{i}", "anna")
        if not wait:
            accounts.login_failed(f"10.1.0.{i}", "anna")
        return wait

    with ThreadPoolExecutor(max_workers=40) as pool:
        waits = list(pool.map(attempt, range(40)))
    assert waits.count(0) == 3, waits
    assert all(w > 0 for w in waits if w)
    assert recorded == ["username"]
    # after the wait, again one attempt at a time
    clock[0] += 10
    with ThreadPoolExecutor(max_workers=20) as pool:
        waits = list(pool.map(lambda i: accounts.begin_sign_in(f"10.2.0.{i}", "anna"), range(20)))
    assert waits.count(0) == 1


def test_parallel_attempts_from_one_address_get_no_extra_tries(monkeypatch, clock, transactional_db):
    monkeypatch.setattr(accounts, "record_limit", lambda tier, **kw: None)
    barrier = threading.Barrier(30)

    def attempt(i):
        barrier.wait(timeout=30)
        wait = accounts.begin_sign_in("10.9.9.9", f"user{i}")
        if not wait:
            accounts.login_failed("10.9.9.9", f"user{i}")
        return wait

    with ThreadPoolExecutor(max_workers=30) as pool:
        waits = list(pool.map(attempt, range(30)))
    assert waits.count(0) == 5


def test_another_address_is_limited_by_the_username_counter(client, users, clock):
    for i in range(3):
        assert login(client, "anna", "wrong", address=f"10.0.0.{i}").status_code == 200
    blocked = login(client, "anna", "pw-anna", address="192.168.7.7")
    assert blocked.status_code == 429 and "try again in 10 seconds" in blocked.content.decode()
    assert "_auth_user_id" not in client.session
    assert login(client, "rita", "pw-rita", address="192.168.7.7").status_code == 302, "other users are not slowed"


def test_the_right_password_works_after_the_wait_and_the_wait_doubles(client, users, clock, settings):
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 50
    for _ in range(3):
        login(client, "anna", "wrong")
    assert login(client, "anna", "pw-anna").status_code == 429
    clock[0] += 10
    assert login(client, "anna", "wrong").status_code == 200  # the slot after 10 s, used with a wrong password
    clock[0] += 10
    blocked = login(client, "anna", "pw-anna")
    assert blocked.status_code == 429 and "try again in 10 seconds" in blocked.content.decode()  # now 20 s
    clock[0] += 10
    assert login(client, "anna", "pw-anna").status_code == 302
    client.logout()
    # a success resets the username's count
    assert login(client, "anna", "wrong").status_code == 200
    assert login(client, "anna", "pw-anna").status_code == 302


def test_the_api_applies_the_same_wait(users, clock):
    from rest_framework.test import APIClient

    client = APIClient()
    for _ in range(3):
        assert client.post("/api/token/", {"username": "anna", "password": "bad"}, format="json").status_code == 400
    blocked = client.post("/api/token/", {"username": "anna", "password": "pw-anna"}, format="json")
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) == 10
    clock[0] += 10
    assert client.post("/api/token/", {"username": "anna", "password": "pw-anna"}, format="json").status_code == 200


def test_reaching_a_limit_is_recorded_in_the_audit_log(client, users, clock):
    for _ in range(3):
        login(client, "anna", "wrong", address="10.3.3.3")
    event = AuditEvent.objects.get(action="login.limit")
    assert event.target == "anna" and event.actor is None
    assert event.details["counter"] == "username" and event.details["address"] == "10.3.3.3"
    assert event.details["failures"] == 3 and event.details["delay_seconds"] == 10
    for name in ("x1", "x2"):
        login(client, name, "wrong", address="10.3.3.3")
    assert AuditEvent.objects.filter(action="login.limit", details__counter="address").count() == 1


def test_the_client_address_honours_the_configured_proxy_header_only(settings):
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="1.2.3.4, 5.6.7.8")
    assert accounts.client_address(request) == "10.0.0.1", "off by default: any client can send the header"
    settings.LOGIN_CLIENT_ADDRESS_HEADER = "HTTP_X_FORWARDED_FOR"
    assert accounts.client_address(request) == "5.6.7.8", "the address the proxy saw"
    assert accounts.client_address(RequestFactory().get("/", REMOTE_ADDR="10.0.0.1")) == "10.0.0.1"


def test_behind_a_proxy_each_client_has_its_own_address_counter(client, users, clock, settings):
    settings.LOGIN_CLIENT_ADDRESS_HEADER = "HTTP_X_FORWARDED_FOR"
    for i in range(5):
        client.post("/login/", {"username": f"nobody{i}", "password": "x"}, REMOTE_ADDR="10.0.0.1",
                    HTTP_X_FORWARDED_FOR="6.6.6.6")
    assert client.post("/login/", {"username": "rita", "password": "pw-rita"}, REMOTE_ADDR="10.0.0.1",
                       HTTP_X_FORWARDED_FOR="6.6.6.6").status_code == 429
    assert client.post("/login/", {"username": "rita", "password": "pw-rita"}, REMOTE_ADDR="10.0.0.1",
                       HTTP_X_FORWARDED_FOR="7.7.7.7").status_code == 302


def test_the_request_header_setting_is_read_from_the_environment(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from alignapp.env import env_request_header

    monkeypatch.setenv("X_HEADER", "X-Forwarded-For")
    assert env_request_header("X_HEADER") == "HTTP_X_FORWARDED_FOR"
    monkeypatch.setenv("X_HEADER", "X-Forwarded-For=1")
    with pytest.raises(ImproperlyConfigured):
        env_request_header("X_HEADER")
    monkeypatch.delenv("X_HEADER")
    assert env_request_header("X_HEADER") == ""


def _clear_caches() -> None:
    for each in caches.all():  # the sign-in counters ("limits": a table without Redis) and throttle histories
        each.clear()
