"""Every path that writes a label goes through the one gate (``services.review.labelling``) and
fires the same after-commit effects: the same second vote on a pair, stored through the queue, the
queue API, the labels API, the whole-article view, "My labels" or undo + resubmit, leaves the same
labels, gold, gold history and counts.

The pair starts with automatic gold from one vote (anna: not aligned; provenance ``single``, or
``majority`` where bob's first vote is part of the story). Bob's vote (aligned) makes it a tie:
refreshing the pair's automatic gold removes it. Before the gate was the only writer, the queue
stored the vote without that refresh and the stale gold stayed.
"""
from __future__ import annotations

from annotation.models import Adjudication, AdjudicationChange, Label, LabelChange
from annotation.services.editing import article_alignment
from annotation.services.review import adjudication, dashboard, labelling
from tests import factories, labels
from tests.annotation.services.review.test_queue import build_queue, set_qc

NOT, ALIGNED = "not-aligned", "aligned"


def make_world(name: str, anna, bob, committed) -> dict:
    """A project of its own where anna and bob were both served the first pair, and anna's vote (not
    aligned) is stored."""
    project = factories.make_project(name, anna="annotator", bob="annotator")
    set_qc(project, overlap=2)
    work, _ = build_queue(project, 2)
    assert labels.next_item(anna, project) == work[0] and labels.next_item(bob, project) == work[0]
    committed(lambda: labels.submit(anna, project, work[0].pk, value=NOT, seconds=2.0))
    return {"project": project, "pair": work[0], "anna": anna, "bob": bob}


def snapshot(project, pair) -> dict:
    """What the paths must agree on: the labels, the gold and its history, the label history, the
    counts (pair ids left out: each path has a project of its own)."""
    mine = {"pair__article__project": project}
    return {
        "labels": sorted(Label.objects.filter(**mine).values_list("annotator__username", "value", "is_test_question")),
        "gold": sorted(Adjudication.objects.filter(**mine).values_list("value", "provenance")),
        "gold_history": list(AdjudicationChange.objects.filter(**mine).order_by("id")
                             .values_list("old_value", "new_value")),
        "label_history": list(LabelChange.objects.filter(**mine).order_by("id")
                              .values_list("annotator__username", "old_value", "new_value", "source")),
        "label_counts": dashboard.label_counts(project),
        "progress": dashboard.project_progress(project),
        "stale_gold": adjudication.auto_gold_preview(project, "single")["removed"],
    }


def by_queue(w, api):
    labels.submit(w["bob"], w["project"], w["pair"].pk, value=ALIGNED, seconds=2.0)


def by_queue_api(w, api):
    response = api(w["bob"]).post(f"/api/projects/{w['project'].pk}/queue/submit/",
                                  {"pair": w["pair"].pk, "value": ALIGNED, "seconds": 2.0}, format="json")
    assert response.status_code == 201, response.json()


def by_labels_api(w, api):
    response = api(w["bob"]).post("/api/labels/", {"pair": w["pair"].pk, "value": ALIGNED, "seconds": 2.0},
                                  format="json")
    assert response.status_code == 201, response.json()


def by_article_view(w, api):
    pair = w["pair"]
    saved = article_alignment.save_links(
        w["bob"], pair.article, pair.complex_document, pair.simple_document, None,
        [{"complex": pair.complex_indices, "simple": pair.simple_indices, "label": "aligned"}], seconds=2.0)
    assert saved["labels_written"] == 1 and saved["pairs_created"] == 0


# path → (how bob's vote is stored, what the label history holds besides; None: a new vote)
NEW_VOTE = {"queue": by_queue, "queue API": by_queue_api, "labels API": by_labels_api, "article view": by_article_view}


def run_path(path: str, w: dict, api, committed) -> None:
    project, pair, bob = w["project"], w["pair"], w["bob"]
    if path in NEW_VOTE:  # anna's vote becomes single gold; then bob's vote
        committed(lambda: adjudication.auto_gold(project, "single"))
        committed(lambda: NEW_VOTE[path](w, api))
    elif path == "my labels edit":  # bob agreed first (majority gold), then changes his label
        committed(lambda: labels.submit(bob, project, pair.pk, value=NOT, seconds=2.0))
        committed(lambda: adjudication.auto_gold(project, "majority"))
        label = Label.objects.get(pair=pair, annotator=bob)
        response = committed(lambda: api(bob).patch(f"/api/labels/{label.pk}/", {"value": ALIGNED}, format="json"))
        assert response.status_code == 200, response.json()
    elif path == "undo + resubmit":  # bob's vote, undone and given again, all through the queue
        committed(lambda: adjudication.auto_gold(project, "single"))
        committed(lambda: by_queue(w, api))
        assert committed(lambda: labels.undo(bob, project)) == pair
        committed(lambda: by_queue(w, api))
    else:
        raise AssertionError(path)


OWN_HISTORY = {"my labels edit": [("bob", NOT, ALIGNED, labelling.MY_LABELS)], "undo + resubmit": [("bob", ALIGNED, "", labelling.UNDO)]}


def test_the_same_second_vote_through_every_path_leaves_the_same_gold_history_and_counts(
        users, api, django_capture_on_commit_callbacks):
    def committed(write):
        """Run one write as its own request would: its after-commit effects run at its end."""
        with django_capture_on_commit_callbacks(execute=True):
            return write()

    anna, bob = users["anna"], factories.make_user("bob")
    states = {}
    for n, path in enumerate([*NEW_VOTE, *OWN_HISTORY]):
        w = make_world(f"Paths {n}", anna, bob, committed)
        run_path(path, w, api, committed)
        state = snapshot(w["project"], w["pair"])
        assert state.pop("label_history") == OWN_HISTORY.get(path, []), path
        states[path] = state
    expected = states["labels API"]
    assert expected["labels"] == [("anna", NOT, False), ("bob", ALIGNED, False)]
    assert expected["gold"] == [] and expected["stale_gold"] == 0
    assert expected["gold_history"] == [("", NOT), (NOT, "")]  # anna's vote became gold; bob's made it a tie
    for path, state in states.items():
        assert state == expected, path
