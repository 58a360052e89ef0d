"""Who is labelling: an :class:`Annotator` context (the user in a project, their role, their quality
control exclusion and the project's parsed QC settings), loaded once per request by :func:`load`
(or :func:`of` when the project is at hand) and passed to the gate and the queue.

The queue API, ``POST /api/labels/``, the labelling page and the article editor all build it here,
so they apply the same rules from the same data.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import F, FilteredRelation, Q, Subquery

from annotation.errors import DomainError
from annotation.models import CandidatePair, LabelScheme, Membership, Project
from annotation.services.review import qc, queue_compiled
from annotation.services.review.queue_compiled import PAIR, PROJECT, USER, compiled, compiled_parts, compiled_values, converted
from annotation.services.review.queue_serving import Mine, mine_of, my_counts_column


class NotMember(DomainError, ValueError):
    """The user is not (any more) a member of the project whose label they would write."""

    status, code = 404, "not_found"


@dataclass(frozen=True)
class Annotator:
    """``user`` acting in ``project``.

    Attributes:
        role: ``admin`` (staff), ``researcher``, ``annotator``, or None for a non-member.
        exclusion: why quality control removed them from the project; None: they may label.
        newest_pair: the newest pair id when it was loaded with the project (the queue-size cache key).
        mine: the annotator's queue counts, read with the project when asked (``load(..., counts=True)``).
    """

    user: object
    project: Project
    role: str | None
    exclusion: str | None
    newest_pair: int | None = None
    mine: Mine | None = None

    @cached_property
    def qc_config(self) -> qc.QcConfig:
        """The project's QC settings, parsed once per context."""
        return qc.qc_config(self.project)

    @property
    def reveal(self) -> bool:
        """Whether hidden facts (test questions, predictions) may be shown: not to annotators."""
        return self.role != "annotator"

    def ensure_member(self) -> None:
        """Raise :class:`NotMember` unless they are still in the project (or an admin): every label write
        checks it, so a member removed (or whose account is gone) writes nothing through a context built
        earlier or from a label of theirs."""
        if self.role is None or not getattr(self.user, "is_active", False):
            raise NotMember("you are not a member of this project")

    def ensure_may_label(self) -> None:
        """Raise ``qc.AnnotatorExcluded`` if quality control removed them from the project."""
        if self.exclusion is not None:
            raise qc.AnnotatorExcluded(self.exclusion)


def _role(user, member_role: str | None) -> str | None:
    return "admin" if user.is_staff else member_role


_PROJECT_FIELDS = [f.name for f in Project._meta.concrete_fields]
_SCHEME_FIELDS = [f.name for f in LabelScheme._meta.concrete_fields]
_SEAT = ("my_role", "my_excluded_at", "my_exclusion_reason", "newest_pair")


def _seat_query(counts: bool, with_pair: bool):
    """The seat's query with stand-ins for the ids (``queue_compiled.compiled_values``)."""
    mine = FilteredRelation("memberships", condition=Q(memberships__user=USER))
    extra = {"my_counts": my_counts_column(USER, PAIR if with_pair else None)} if counts else {}
    return (Project.objects.filter(pk=PROJECT)
            .annotate(mine=mine, my_role=F("mine__role"), my_excluded_at=F("mine__excluded_at"),
                      my_exclusion_reason=F("mine__exclusion_reason"),
                      newest_pair=Subquery(CandidatePair.objects.order_by("-id").values("id")[:1]), **extra)
            .values_list(*_PROJECT_FIELDS, *(f"label_scheme__{name}" for name in _SCHEME_FIELDS), *_SEAT, *extra))


def load(user, project_pk: int, *, counts: bool = False, pair_id: int | None = None) -> Annotator | None:
    """The context for ``user`` in project ``project_pk`` in one query (the project, its scheme, their
    membership and the newest pair id); None when they may not see it (no member, not staff).

    ``counts``: their queue counts come in the same query (``mine``; with ``pair_id`` their assignment of
    that pair too: what a queue submit reads first, issue 37). The query is compiled once per process
    (``queue_compiled.compiled_values``: building it with the ORM cost more than running it)."""
    with_pair = counts and pair_id is not None
    rows = compiled_values(("seat", counts, with_pair), lambda: _seat_query(counts, with_pair),
                           user=user.pk, pair=pair_id if with_pair else None, project=project_pk)
    return _seat(user, rows[0] if rows else None, counts, pair_id)


def _seat(user, row: dict | None, counts: bool, pair_id: int | None) -> Annotator | None:
    """The context from the seat query's row (None: no such project, or not theirs to see)."""
    if row is None or row["id"] is None:
        return None
    role = _role(user, row["my_role"])
    if role is None:
        return None
    project = Project.from_db(None, [f.attname for f in Project._meta.concrete_fields],
                              [row[name] for name in _PROJECT_FIELDS])
    project.label_scheme = LabelScheme.from_db(None, [f.attname for f in LabelScheme._meta.concrete_fields],
                                               [row[f"label_scheme__{name}"] for name in _SCHEME_FIELDS])
    return Annotator(user, project, role, qc.exclusion_message(row["my_excluded_at"], row["my_exclusion_reason"]),
                     row["newest_pair"], mine_of(row["my_counts"], user, pair_id) if counts else None)


def _token_seat_parts(counts: bool, with_pair: bool) -> tuple[str, list, tuple]:
    """The seat's query inside one that finds the API token and its user (PostgreSQL: ``LATERAL``): the seat's
    user id is the token's, so its stand-in placeholders become ``tok.user_id``. Rows: the token's key and
    time, the user's columns, then the seat's (all NULL when the project is not there)."""
    from rest_framework.authtoken.models import Token

    sql, params, (names, converters) = compiled_parts(_seat_query(counts, with_pair))
    pieces = sql.split("%s")
    assert len(pieces) == len(params) + 1, "a literal %s in the seat's SQL"
    out, kept = [pieces[0]], []
    for param, piece in zip(params, pieces[1:], strict=True):
        if isinstance(param, int) and param == USER:
            out.append("tok.user_id")
        else:
            out.append("%s")
            kept.append(param)
        out.append(piece)
    q = connection.ops.quote_name
    user_model = get_user_model()
    user_columns = ", ".join(f"u.{q(f.column)}" for f in user_model._meta.concrete_fields)
    token_key, token_created = (q(Token._meta.get_field(name).column) for name in ("key", "created"))
    sql = (f"SELECT tok.{token_key}, tok.{token_created}, {user_columns}, seat.* FROM {q(Token._meta.db_table)} tok "
           f"JOIN {q(user_model._meta.db_table)} u ON u.{q(user_model._meta.pk.column)} = tok.user_id "
           f"LEFT JOIN LATERAL ({''.join(out)}) seat ON TRUE WHERE tok.{token_key} = %s")
    return sql, [*kept, _KEY], (names, converters)


_KEY = object()  # the token's key, filled in at each use


def load_with_token(key: str, project_pk: int, *, counts: bool = False, pair_id: int | None = None
                    ) -> tuple[object, object, Annotator | None] | None:
    """An API token's user and the token, and their context in ``project_pk`` (:func:`load`), in one statement
    (PostgreSQL only: the caller falls back to the token's look-up then :func:`load` elsewhere). None when no
    token has that key; the context is None when they may not see the project. The caller checks that the
    user is active and the token not expired, as the token authentication does (issue 37: the labelling
    loop's token look-up was a statement of its own)."""
    from rest_framework.authtoken.models import Token

    with_pair = counts and pair_id is not None
    sql, params, (names, converters) = compiled(("token-seat", counts, with_pair),
                                             lambda: _token_seat_parts(counts, with_pair),
                                             pair=pair_id if with_pair else None, project=project_pk)
    with queue_compiled.cursor() as cursor:  # prepared on PostgreSQL
        cursor.execute(sql, [key if p is _KEY else p for p in params])
        row = cursor.fetchone()
    if row is None:
        return None
    user_model = get_user_model()
    fields = user_model._meta.concrete_fields
    user = user_model.from_db(connection.alias, [f.attname for f in fields], row[2:2 + len(fields)])
    token = Token.from_db(connection.alias, ["key", "user_id", "created"], [row[0], user.pk, row[1]])
    token.user = user
    seat = converted([row[2 + len(fields):]], names, converters)[0]
    return user, token, _seat(user, seat, counts, pair_id)


def of(user, project: Project) -> Annotator:
    """The context for ``user`` in a ``project`` loaded already (one query: their membership)."""
    row = Membership.objects.filter(project=project, user=user).values_list(
        "role", "excluded_at", "exclusion_reason").first()
    role, excluded_at, reason = row or (None, None, "")
    return Annotator(user, project, _role(user, role), qc.exclusion_message(excluded_at, reason))
