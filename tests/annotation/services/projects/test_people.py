"""Accounts created, invited, deactivated and found in the app (services.people)."""
from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model

from annotation.permissions import can_create_projects
from annotation.services.projects import people

User = get_user_model()


def test_a_weak_password_is_refused_with_the_validators_messages(db):
    with pytest.raises(people.PeopleError) as refused:
        people.create_user("bob", "123")
    text = " ".join(refused.value.messages)
    assert "too short" in text and "too common" in text and "entirely numeric" in text
    assert not User.objects.filter(username="bob").exists()


def test_a_password_like_the_username_is_refused(db):
    with pytest.raises(people.PeopleError, match="too similar"):
        people.create_user("marguerite", "marguerite1", email="m@example.org")


def test_a_new_user_can_log_in_and_researchers_may_create_projects(db, client):
    user = people.create_user("bob", "a long enough pass phrase", researcher=True)
    assert client.login(username="bob", password="a long enough pass phrase")
    assert can_create_projects(user)
    assert not can_create_projects(people.create_user("carl", "another long pass phrase"))


def test_usernames_are_unique_whatever_the_case(users):
    with pytest.raises(people.PeopleError, match="exists already"):
        people.create_user("Anna", "a long enough pass phrase")
    with pytest.raises(people.PeopleError, match="Enter a username"):
        people.invite_user("  ")


def test_an_invitation_works_once(db, client):
    user, token = people.invite_user("ines")
    assert not user.has_usable_password()
    assert people.invitation_user(token) == user
    people.accept_invitation(token, "my own pass phrase")
    assert client.login(username="ines", password="my own pass phrase")
    with pytest.raises(people.PeopleError, match="used already"):
        people.invitation_user(token)
    with pytest.raises(people.PeopleError, match="used already"):
        people.accept_invitation(token, "another pass phrase")


def test_an_invitation_expires(db, monkeypatch):
    _, token = people.invite_user("ines")
    later = time.time() + people.INVITATION_MAX_AGE + 60
    monkeypatch.setattr("django.core.signing.time.time", lambda: later)
    with pytest.raises(people.PeopleError, match="expired"):
        people.invitation_user(token)


def test_a_changed_invitation_link_is_refused(db):
    _, token = people.invite_user("ines")
    with pytest.raises(people.PeopleError, match="not valid"):
        people.invitation_user(token[:-2] + ("AA" if not token.endswith("AA") else "BB"))


def test_accepting_an_invitation_checks_the_password(db):
    _, token = people.invite_user("ines")
    with pytest.raises(people.PeopleError, match="too short"):
        people.accept_invitation(token, "abc")
    assert people.invitation_user(token).username == "ines"  # still usable after a refused password


def test_an_invitation_of_a_deactivated_user_no_longer_works(users):
    user, token = people.invite_user("ines")
    people.set_active(user, False, by=users["admin"])
    with pytest.raises(people.PeopleError, match="deactivated"):
        people.invitation_user(token)


def test_admins_cannot_deactivate_themselves(users):
    with pytest.raises(people.PeopleError, match="your own account"):
        people.set_active(users["admin"], False, by=users["admin"])


def test_user_search_finds_active_users_by_prefix_capped(users):
    for i in range(15):
        User.objects.create_user(f"annotator{i:02d}", password="x")
    people.set_active(users["anna"], False, by=users["admin"])
    assert [u.username for u in people.search_users("AN")][:1] == ["annotator00"]
    assert len(people.search_users("an")) == people.SEARCH_LIMIT
    assert "anna" not in [u.username for u in people.search_users("ann")]
    assert people.search_users("  ") == []


def test_only_researchers_and_admins_may_search_users(users, project):
    assert people.can_search_users(users["admin"]) and people.can_search_users(users["rita"])
    assert not people.can_search_users(users["anna"])
