"""How the app names people where their user names are not asked for (issue 30 item 7).

Exports without ``annotator_names`` call every annotator and reviewer ``a<user id>``; notes the app
writes itself (the curation's adjudication notes) use the same pseudonym, so a pseudonymous export
can copy them as they are. Notes stored before that, or typed by a reviewer, may still name people:
:func:`scrub_names` replaces the project's user names in them with the pseudonyms.

Example:
    pseudonym(3)                                         # 'a3'
    scrub_names("accepted A (anna)", {"anna": 3})        # 'accepted A (a3)'
"""
from __future__ import annotations

import re
from collections.abc import Callable

from django.contrib.auth import get_user_model
from django.db.models import Q

from annotation.models import Adjudication, Label, Membership

# a user name's own characters (Django allows letters, digits and @.+-_): a match must not run into them
_EDGE_BEFORE = r"(?<![\w@.+-])"
_EDGE_AFTER = r"(?![\w@+-])"


def pseudonym(user_id: int) -> str:
    """The name exports and app-written notes give user ``user_id`` when names are off."""
    return f"a{user_id}"


def project_user_ids(project) -> dict[str, int]:
    """User name → id of everyone who can appear in a project's notes: members, voters, reviewers."""
    ids = (Q(pk__in=Membership.objects.filter(project=project).values("user_id"))
           | Q(pk__in=Label.objects.filter(pair__article__project=project).values("annotator_id"))
           | Q(pk__in=Adjudication.objects.filter(pair__article__project=project).values("reviewer_id")))
    return dict(get_user_model().objects.filter(ids).values_list("username", "id"))


def name_scrubber(user_ids: dict[str, int]) -> Callable[[str], str]:
    """A function replacing every whole-word user name of ``user_ids`` in a text by its pseudonym
    (the pattern compiled once, for the many notes of an export)."""
    names = sorted((n for n in user_ids if n), key=len, reverse=True)
    if not names:
        return lambda text: text
    pattern = re.compile(_EDGE_BEFORE + "(" + "|".join(map(re.escape, names)) + ")" + _EDGE_AFTER)
    return lambda text: pattern.sub(lambda m: pseudonym(user_ids[m.group(1)]), text) if text else text


def scrub_names(text: str, user_ids: dict[str, int]) -> str:
    """``text`` with every whole-word user name of ``user_ids`` replaced by its pseudonym."""
    return name_scrubber(user_ids)(text)


__all__ = ["name_scrubber", "project_user_ids", "pseudonym", "scrub_names"]
