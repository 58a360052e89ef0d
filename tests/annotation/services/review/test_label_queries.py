"""What one label costs the database: a label submitted through the gate (``labelling.submit_label``,
the path of ``POST /api/labels/``), counted from the pair the request names to the stored label,
the annotator context and the validated input included.

Before issue 29 the gate took 9 queries: the project (through the article) and the scheme loaded
piecemeal, the exclusion looked up twice and the QC settings parsed on every check. Now the context
(project, scheme, membership: role and exclusion) is one query and nothing is looked up twice."""
from __future__ import annotations

import uuid

from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import CandidatePair, Label
from annotation.services.review import annotator, labelling
from annotation.services.review.label_input import LabelInput
from tests import labels
from tests.annotation.services.review.test_queue import build_queue, set_qc

BUDGET = 6  # the article (as the request's serializer reaches the project), the context, the client token,
# the assignment (served?), the INSERT and the assignment marked done (issue 37: on PostgreSQL the last two are
# one statement, ``labelling._insert_and_close``: 5)


def statements(queries: CaptureQueriesContext) -> list[str]:
    """The SQL a request runs (a test's atomic blocks are savepoints, which a real request does not issue)."""
    return [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]


def test_one_submitted_label_takes_six_queries_with_its_context(users, project):
    set_qc(project, min_seconds=1)  # the minimum-time check reads the QC settings
    build_queue(project, 3)
    served = labels.next_item(users["anna"], project)
    pair = CandidatePair.objects.get(pk=served.pk)  # as the request's serializer loads it
    with CaptureQueriesContext(connection) as queries:
        actor = annotator.load(users["anna"], pair.article.project_id)
        label_input = LabelInput.parse(actor.project.label_scheme, value="aligned", seconds=3.0,
                                       client_token=uuid.uuid4())
        label, created = labelling.submit_label(actor, pair, label_input)
    assert created and Label.objects.get(pk=label.pk).value == "aligned"
    assert len(statements(queries)) <= (BUDGET - 1 if connection.vendor == "postgresql" else BUDGET), \
        "\n".join(statements(queries))
