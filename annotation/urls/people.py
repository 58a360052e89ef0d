"""Routes of the people page (site admins), invitations, the user search API and one's own account page.

Included from annotation/urls/__init__.py.
"""
from django.urls import path

from ..views import accounts, api_users, people

urlpatterns: list = [
    path("people/", people.people_page, name="people"),
    path("people/create/", people.create_user, name="people-create"),
    path("people/invite/", people.invite_user, name="people-invite"),
    path("people/<int:pk>/active/", people.set_active, name="people-set-active"),
    path("invitation/<str:token>/", people.accept_invitation, name="accept-invitation"),
    path("api/users/", api_users.UserSearchView.as_view(), name="user-search"),
    path("account/", accounts.account_page, name="account"),
    path("account/token/rotate/", accounts.rotate_token, name="account-token-rotate"),
    path("account/token/revoke/", accounts.revoke_token, name="account-token-revoke"),
    path("account/password/", accounts.change_password, name="account-password"),
]
