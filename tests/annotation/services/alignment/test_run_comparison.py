"""What changed between two runs, the review queue of those pairs, and the queue's order."""
from __future__ import annotations

import pytest

from annotation.models import AlignmentRun, CandidatePair, Status, indices_key
from annotation.services.alignment import run_comparison, run_saving
from tests import factories, labels
from tests.annotation.services.review.test_queue import set_qc


@pytest.fixture
def two_runs(project):
    article = factories.make_article(project, "Bees", {
        "adv": [[f"Complex sentence number {i} about bees and their decline." for i in range(5)]],
        "ele": [[f"Simple sentence {i} on bees." for i in range(5)]],
    })
    c, s = article.documents.order_by("rank")
    old = AlignmentRun.objects.create(project=project, method="crf", status=Status.SUCCEEDED)
    new = AlignmentRun.objects.create(project=project, method="crf", status=Status.SUCCEEDED)

    def pair(run, i, j, label, score=0.8):
        return factories.make_pair(run, article=article, complex_document=c, simple_document=s, complex_key=indices_key([i]),
                                   simple_key=indices_key([j]), predicted_label=label, score=score)

    same = pair(old, 0, 0, "aligned"), pair(new, 0, 0, "aligned")
    relabelled = pair(old, 1, 1, "aligned"), pair(new, 1, 1, "partial")
    removed = pair(old, 2, 2, "partial")
    added = pair(new, 3, 3, "aligned")
    unlinked = pair(old, 4, 4, "not-aligned"), pair(new, 4, 4, "not-aligned")
    run_saving.link_sentences(CandidatePair.objects.filter(article=article))
    return {"old": old, "new": new, "same": same[0], "relabelled": relabelled[0], "removed": removed, "added": added,
            "unlinked": unlinked[0], "article": article}


def test_changes_are_added_removed_and_relabelled_links_only(two_runs):
    found = {(c.pair_id, c.kind, c.old_label, c.new_label) for c in run_comparison.changes(two_runs["old"], two_runs["new"])}
    assert found == {(two_runs["relabelled"].pk, "label_changed", "aligned", "partial"),
                     (two_runs["removed"].pk, "removed", "partial", ""),
                     (two_runs["added"].pk, "added", "", "aligned")}


def test_the_summary_counts_per_kind_and_article_and_the_agreement(two_runs):
    summary = run_comparison.summary(two_runs["old"], two_runs["new"])
    assert summary["counts"] == {"added": 1, "removed": 1, "label_changed": 1, "unchanged": 1}
    assert summary["per_article"] == [{"article": two_runs["article"].pk, "title": "Bees", "added": 1, "removed": 1,
                                       "label_changed": 1}]
    assert summary["agreement"]["both"] == 2 and summary["agreement"]["sentence_pairs"] == 25


def test_kappa_is_over_every_sentence_pair_both_runs_aligned_against_a_hand_computed_value(two_runs):
    """Issue 27 item 5. By hand, over the 5 × 5 = 25 sentence pairs of the one document pair: (0,0)
    aligned/aligned, (1,1) aligned/partial, (2,2) partial/not, (3,3) not/aligned, 21 not/not.
    Observed 22/25 = 0.88; each run: aligned 2, partial 1, not 22, so chance = (4 + 1 + 484)/625 = 0.7824;
    κ = (0.88 − 0.7824) / (1 − 0.7824) = 0.4485."""
    found = run_comparison.agreement(two_runs["old"], two_runs["new"])
    assert found["kappa"] == pytest.approx(0.4485, abs=1e-4) and found["observed"] == 0.88
    assert (found["sentence_pairs"], found["document_pairs"], found["document_pairs_left_out"]) == (25, 1, 0)


def test_two_runs_sharing_nearly_every_link_agree_highly_and_a_pair_one_run_aligned_is_left_out(project):
    """Issue 27 item 5: two runs sharing 1,040 of 1,100 links showed κ −0.0279 (κ over the links alone).
    Here 9 of 10 links shared in a 10 × 10 document pair: observed 98/100, chance 0.82 (each run links 10),
    κ = 0.16 / 0.18 = 0.8889. Another article only the old run aligned does not count."""
    article = factories.make_article(project, "Owls", {"adv": [[f"Complex owl sentence {i}." for i in range(10)]],
                                                       "ele": [[f"Owl {i}." for i in range(10)]]})
    other = factories.make_article(project, "Bats", {"adv": [["A complex bat."]], "ele": [["A bat."]]})
    old, new = (AlignmentRun.objects.create(project=project, method="crf", status=Status.SUCCEEDED) for _ in range(2))
    c, s = article.documents.order_by("rank")
    links = {old: [(i, i) for i in range(10)], new: [(i, i) for i in range(9)] + [(9, 8)]}
    for run, pairs in links.items():
        for i, j in pairs:
            factories.make_pair(run, article=article, complex_document=c, simple_document=s, complex_key=str(i),
                                simple_key=str(j), predicted_label="aligned", score=0.9)
    oc, os_ = other.documents.order_by("rank")
    factories.make_pair(old, article=other, complex_document=oc, simple_document=os_, complex_key="0", simple_key="0",
                        predicted_label="aligned", score=0.9)
    found = run_comparison.summary(old, new)["agreement"]
    assert found["kappa"] == pytest.approx(0.16 / 0.18, abs=1e-4) and found["document_pairs_left_out"] == 1
    assert (found["both"], found["only_old"], found["only_new"], found["sentence_pairs"]) == (9, 2, 1, 100)
    assert "sentence pair" in found["over"]


def test_runs_of_different_projects_or_the_same_run_cannot_be_compared(two_runs, users):
    other = factories.make_project("Elsewhere")
    foreign = AlignmentRun.objects.create(project=other, method="crf")
    with pytest.raises(run_comparison.ComparisonError):
        run_comparison.changes(two_runs["old"], foreign)
    with pytest.raises(run_comparison.ComparisonError):
        run_comparison.changes(two_runs["old"], two_runs["old"])


def test_the_what_changed_queue_serves_exactly_the_differing_pairs(project, users, two_runs):
    set_qc(project)
    project.config = {**project.config, "queue_changes": {"old": two_runs["old"].pk, "new": two_runs["new"].pk}}
    project.save()
    served = set()
    while (pair := labels.next_item(users["anna"], project)) is not None:
        served.add(pair.pk)
        labels.submit(users["anna"], project, pair.pk, value="aligned", seconds=1)
    assert served == {two_runs["relabelled"].pk, two_runs["removed"].pk, two_runs["added"].pk}


def test_the_api_compares_runs_for_researchers_only(api, users, two_runs):
    url = f"/api/runs/compare/?old={two_runs['old'].pk}&new={two_runs['new'].pk}&pairs=1"
    answer = api(users["rita"]).get(url)
    assert answer.status_code == 200 and len(answer.json()["changes"]) == 3
    assert api(users["anna"]).get(url).status_code == 403
    assert api(users["olga"]).get(url).status_code == 404
    assert api(users["rita"]).get(f"/api/runs/compare/?old={two_runs['old'].pk}").status_code == 400


def test_review_changes_narrows_and_clears_the_queue_scope(api, users, project, two_runs):
    url = f"/api/projects/{project.pk}/review-changes/"
    body = {"old": two_runs["old"].pk, "new": two_runs["new"].pk}
    assert api(users["anna"]).post(url, body, format="json").status_code == 403
    assert api(users["rita"]).post(url, body, format="json").json() == {"queue_changes": body}
    assert api(users["rita"]).post(url, {"old": 999999, "new": 1}, format="json").status_code == 400
    assert api(users["rita"]).post(url, {"clear": True}, format="json").json() == {"queue_changes": None}


@pytest.mark.parametrize("order", ["corpus", "random", "uncertainty"])
def test_the_queue_order_setting(project, users, order):
    set_qc(project)
    article = factories.make_article(project, "Owls", {"adv": [[f"Complex owl sentence {i} is long." for i in range(6)]],
                                                       "ele": [[f"Owl {i}." for i in range(6)]]})
    c, s = article.documents.order_by("rank")
    run = AlignmentRun.objects.create(project=project, method="crf", status=Status.SUCCEEDED)
    uncertainty = [0.1, 0.9, None, 0.5, 0.7, 0.2]
    pairs = []
    for i, u in enumerate(uncertainty):
        pair = factories.make_pair(run, article=article, complex_document=c, simple_document=s, complex_key=str(i),
                                   simple_key=str(i), predicted_label="aligned", score=0.5)
        CandidatePair.objects.filter(pk=pair.pk).update(uncertainty=u)
        pairs.append(pair)
    run_saving.link_sentences(pairs)
    project.config = {**project.config, "queue_order": order}
    project.save()
    served = []
    while (pair := labels.next_item(users["anna"], project)) is not None:
        served.append(pair.pk)
        labels.submit(users["anna"], project, pair.pk, value="aligned", seconds=1)
    ids = [p.pk for p in pairs]
    assert sorted(served) == sorted(ids)
    if order == "corpus":
        assert served == ids
    elif order == "uncertainty":
        assert served == [ids[1], ids[4], ids[3], ids[5], ids[0], ids[2]]  # most uncertain first, unknown last
    else:
        assert served != ids  # a fixed permutation, not the corpus order


def test_an_unknown_queue_order_is_refused_with_the_valid_ones(project, users):
    project.config = {"queue_order": "smallest-first"}
    project.save()
    with pytest.raises(ValueError, match="corpus, random, uncertainty"):
        labels.next_item(users["anna"], project)


def test_researchers_see_why_an_item_was_served_and_blind_annotators_see_nothing(api, users, project, two_runs):
    set_qc(project)
    project.config = {**project.config, "queue_changes": {"old": two_runs["old"].pk, "new": two_runs["new"].pk},
                      "queue_order": "uncertainty"}
    project.save()
    rita = api(users["rita"]).get(f"/api/projects/{project.pk}/queue/next/").json()["item"]
    assert rita["why"]["order"] == "uncertainty" and rita["why"]["change"]["new_run"] == two_runs["new"].pk
    assert {p["run"] for p in rita["why"]["predictions"]} <= {two_runs["old"].pk, two_runs["new"].pk}
    anna = api(users["anna"]).get(f"/api/projects/{project.pk}/queue/next/").json()["item"]
    assert "why" not in anna and "prediction" not in anna


def test_the_api_lists_the_changed_pairs_a_page_at_a_time(api, users, two_runs, monkeypatch):
    url = f"/api/runs/compare/?old={two_runs['old'].pk}&new={two_runs['new'].pk}&pairs=1"
    client = api(users["rita"])
    first = client.get(url + "&limit=2").json()
    assert [c["title"] for c in first["changes"]] == ["Bees", "Bees"]
    assert (first["changes_total"], first["changes_offset"], first["changes_next_offset"]) == (3, 0, 2)
    rest = client.get(url + "&offset=2&limit=2").json()
    assert len(rest["changes"]) == 1 and rest["changes_next_offset"] is None
    assert {c["pair"] for c in first["changes"] + rest["changes"]} == {
        two_runs[k].pk for k in ("relabelled", "removed", "added")}
    assert rest["counts"] == first["counts"]  # the summary is the whole comparison's on every page
    answer = client.get(url + "&offset=-1")
    assert answer.status_code == 400 and "offset must be 0 or more" in answer.json()["detail"]
    monkeypatch.setattr(run_comparison, "CHANGES_PAGE", 2)
    capped = client.get(url + "&limit=1000000").json()
    assert len(capped["changes"]) == 2 and capped["changes_next_offset"] == 2


def test_the_summary_lists_the_first_articles_and_counts_them_all(project, two_runs):
    old, new = two_runs["old"], two_runs["new"]
    for title in ("Wasps", "Ants"):
        article = factories.make_article(project, title, {"adv": [["A complex one."]], "ele": [["A simple one."]]})
        c, s = article.documents.order_by("rank")
        factories.make_pair(new, article=article, complex_document=c, simple_document=s, complex_key=indices_key([0]),
                            simple_key=indices_key([0]), predicted_label="aligned", score=0.9)
    summary = run_comparison.summary(old, new, articles=2)
    assert [a["title"] for a in summary["per_article"]] == ["Bees", "Wasps"] and summary["per_article_total"] == 3
    assert summary["counts"]["added"] == 3


def test_review_of_changes_serves_only_changed_pairs_no_test_questions_and_counts_them_left(project, users, two_runs):
    """issue 18 item 7: unchanged hidden test questions were served ("run #1: aligned → run #2: aligned"),
    researchers reviewing there were scored on them, and "left" counted 428 items for 351 changes."""
    from annotation.models import Adjudication, Assignment, Label
    from annotation.services.review import qc
    from annotation.services.review.queue_progress import progress

    set_qc(project, test_every=1)  # a test question in every slot, were they allowed
    Adjudication.objects.create(pair=two_runs["same"], value="aligned", provenance=Adjudication.ADJUDICATED)
    # from the whole queue before: an item skipped, unchanged between the runs
    Assignment.objects.create(pair=two_runs["unlinked"], annotator=users["rita"], status=Assignment.SKIPPED)
    project.config = {**project.config, "queue_changes": {"old": two_runs["old"].pk, "new": two_runs["new"].pk}}
    project.save()
    changed = {two_runs["relabelled"].pk, two_runs["removed"].pk, two_runs["added"].pk}
    start = progress(users["rita"], project)
    assert (start.done, start.remaining) == (0, len(changed))
    served, left = [], []
    while (pair := labels.next_item(users["rita"], project)) is not None:
        served.append(pair.pk)
        labels.submit(users["rita"], project, pair.pk, value="aligned", seconds=1)
        left.append(progress(users["rita"], project).remaining)
    assert set(served) == changed and len(served) == len(changed)
    assert left == [2, 1, 0]
    assert not Label.objects.filter(is_test_question=True).exists()
    assert not Assignment.objects.filter(is_test=True).exists()
    assert qc.test_accuracy(project, users["rita"]) == {}
    # the skipped unchanged item waits for the whole queue
    assert Assignment.objects.get(pair=two_runs["unlinked"], annotator=users["rita"]).status == Assignment.SKIPPED


def test_leaving_review_of_changes_brings_test_questions_back(project, users, two_runs):
    from annotation.models import Adjudication
    from annotation.services.review.queue_serving import tests_apply

    set_qc(project, test_every=2)
    Adjudication.objects.create(pair=two_runs["same"], value="aligned", provenance=Adjudication.ADJUDICATED)
    project.config = {**project.config, "queue_changes": {"old": two_runs["old"].pk, "new": two_runs["new"].pk}}
    project.save()
    from annotation.services.review import qc
    assert not tests_apply(project, qc.qc_config(project))
    project.config = {k: v for k, v in project.config.items() if k != "queue_changes"}
    project.save()
    assert tests_apply(project, qc.qc_config(project))


def test_back_to_the_whole_queue_is_a_secondary_button(client, users, project, two_runs):
    """issue 18 item 9: it looked like the page's primary action."""
    project.config = {**project.config, "queue_changes": {"old": two_runs["old"].pk, "new": two_runs["new"].pk}}
    project.save()
    client.force_login(users["rita"])
    page = client.get(f"/projects/{project.pk}/runs/compare/").content.decode()
    assert 'id="clear-review" class="button secondary"' in page


def test_a_document_pair_a_run_aligned_without_finding_a_link_counts_as_not_aligned_there(two_runs, project):
    """A run's finished chunks say which document pairs it aligned, links or not (issue 27 item 5)."""
    from annotation.models import RunChunk

    other = factories.make_article(project, "Bats", {"adv": [["A complex bat."]], "ele": [["A bat."]]})
    c, s = other.documents.order_by("rank")
    factories.make_pair(two_runs["old"], article=other, complex_document=c, simple_document=s, complex_key="0",
                        simple_key="0", predicted_label="aligned", score=0.9)
    assert run_comparison.agreement(two_runs["old"], two_runs["new"])["document_pairs_left_out"] == 1
    RunChunk.objects.create(run=two_runs["new"], index=0, work=[[other.pk, c.pk, s.pk]], status=Status.SUCCEEDED)
    found = run_comparison.agreement(two_runs["old"], two_runs["new"])
    # by hand: 26 sentence pairs, 22 agree; old aligned 3, partial 1, not 22; new aligned 2, partial 1, not 23
    expected = (3 * 2 + 1 * 1 + 22 * 23) / 26 ** 2
    assert (found["sentence_pairs"], found["document_pairs_left_out"]) == (26, 0)
    assert found["kappa"] == pytest.approx((22 / 26 - expected) / (1 - expected), abs=1e-4)


@pytest.fixture
def every_kind(project, two_runs):
    """``two_runs`` plus every other case the SQL comparison must read as the Python one does: a second
    article (changes on two articles), a split (1:2 pair) one run links over a 1:1 link of the other, a
    fusion (2:1) both link with different labels, an empty-key pair, a document pair only one run
    predicted in, and one aligned by a run's finished chunk without a link."""
    from annotation.models import RunChunk

    old, new = two_runs["old"], two_runs["new"]
    owls = factories.make_article(project, "Owls", {"adv": [[f"Complex owl sentence {i}." for i in range(4)]],
                                                    "ele": [[f"Owl {i}." for i in range(3)]]})
    c, s = owls.documents.order_by("rank")

    def pair(run, ci, si, label, score=0.7):
        return factories.make_pair(run, article=owls, complex_document=c, simple_document=s, complex_key=indices_key(ci),
                                   simple_key=indices_key(si), predicted_label=label, score=score)

    pair(old, [0], [0, 1], "partial")  # a split the old run links ...
    pair(new, [0], [0], "aligned")  # ... where the new one links one of its cells
    pair(old, [1, 2], [2], "aligned"), pair(new, [1, 2], [2], "partial")  # a fusion, relabelled
    pair(old, [3], [1], "not-aligned"), pair(new, [3], [1], "aligned")  # added over a non-link prediction
    pair(new, [3], [2], "partial", score=None)  # added, no score
    bats = factories.make_article(project, "Bats", {"adv": [["A complex bat.", "Another."]], "ele": [["A bat."]]})
    bc, bs = bats.documents.order_by("rank")
    factories.make_pair(old, article=bats, complex_document=bc, simple_document=bs, complex_key="0", simple_key="0",
                        predicted_label="aligned", score=0.9)  # only the old run predicted in Bats (left out)
    moles = factories.make_article(project, "Moles", {"adv": [["A complex mole."]], "ele": [["A mole."]]})
    mc, ms = moles.documents.order_by("rank")
    factories.make_pair(old, article=moles, complex_document=mc, simple_document=ms, complex_key="0", simple_key="0",
                        predicted_label="aligned", score=0.5)
    RunChunk.objects.create(run=new, index=0, work=[[moles.pk, mc.pk, ms.pk]], status=Status.SUCCEEDED)
    return two_runs


def fresh(old, new, *, offset=0, limit=run_comparison.CHANGES_PAGE) -> dict:
    """The comparison read in Python, pair by pair (the code before issue 37's SQL)."""
    return run_comparison._compare(old, new, pairs=True, offset=offset, limit=limit)


def test_the_sql_comparison_equals_the_python_one_for_every_kind_of_change_and_page(every_kind):
    """Issue 37: the comparison in SQL (one join of the two runs' predictions, grouped) answers exactly
    what reading both runs' links pair by pair answers: counts, per article, agreement, every page."""
    old, new = every_kind["old"], every_kind["new"]
    expected = fresh(old, new)
    assert expected["counts"] == {"added": 4, "removed": 4, "label_changed": 2, "unchanged": 1}
    assert expected["agreement"]["document_pairs_left_out"] == 1 and expected["agreement"]["document_pairs"] == 3
    assert run_comparison.compare(old, new, pairs=True) == expected
    assert run_comparison.compare(old, new) == run_comparison.summary(old, new)
    for offset in range(0, 9):
        for limit in (1, 2, 3, 5):
            assert run_comparison.compare(old, new, pairs=True, offset=offset, limit=limit) == fresh(
                old, new, offset=offset, limit=limit), (offset, limit)
    assert run_comparison.compare(new, old, pairs=True) == fresh(new, old)
    with pytest.raises(run_comparison.ComparisonError):
        run_comparison.compare(old, new, pairs=True, offset=-1)


def test_a_comparison_of_finished_runs_is_stored_and_equals_a_fresh_one_after_a_change(
        every_kind, django_assert_max_num_queries):
    """Issue 37: comparing two runs of a million predictions took 25 s per call; finished runs do not
    change, so the answer is stored (it survives a restart) per their marks, and a new prediction or a
    run re-opened moves them."""
    from annotation.models import RunComparison

    old, new = every_kind["old"], every_kind["new"]
    first = run_comparison.compare(old, new, pairs=True)
    assert RunComparison.objects.filter(old=old, new=new).count() == 1
    with django_assert_max_num_queries(8):  # the marks, the stored row, the page's articles: no run read whole
        assert run_comparison.compare(old, new, pairs=True) == first
    c, s = every_kind["article"].documents.order_by("rank")
    factories.make_pair(new, article=every_kind["article"], complex_document=c, simple_document=s,
                        complex_key=indices_key([4]), simple_key=indices_key([3]), predicted_label="aligned")
    changed = run_comparison.compare(old, new, pairs=True)
    assert changed["counts"]["added"] == first["counts"]["added"] + 1
    assert changed == fresh(old, new)
    assert RunComparison.objects.filter(old=old, new=new).count() == 1  # replaced, not added
    AlignmentRun.objects.filter(pk=new.pk).update(status=Status.RUNNING)
    assert run_comparison.finished_state(old, new) is None
    factories.make_pair(new, article=every_kind["article"], complex_document=c, simple_document=s,
                        complex_key=indices_key([4]), simple_key=indices_key([2]), predicted_label="aligned")
    assert run_comparison.compare(old, new, pairs=True) == fresh(old, new)  # a running run: computed afresh


def test_a_stored_comparison_reads_neither_runs_predictions_whole(every_kind):
    """The stored answer's page reads only the page's articles' predictions (no run-wide join)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    old, new = every_kind["old"], every_kind["new"]
    run_comparison.compare(old, new, pairs=True)
    with CaptureQueriesContext(connection) as done:
        run_comparison.compare(old, new, pairs=True, offset=1, limit=1)
    reads = [q["sql"] for q in done.captured_queries if 'FROM "annotation_prediction"' in q["sql"] and "MAX(" not in q["sql"]]
    assert len(reads) == 1 and '"article_id" IN' in reads[0]  # the page's one article, not either run whole
    assert not any("FULL JOIN" in q["sql"] for q in done.captured_queries)
