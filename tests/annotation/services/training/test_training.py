"""Training data from the app's annotations, starting and cancelling training jobs, the registry API."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, ArticleCompletion, Job, Label, ModelVersion, Split, Status, indices_key
from annotation.services.alignment import alignment_runs, run_options, run_saving
from annotation.services.review import qc
from annotation.services.training import dataset
from annotation.services.training import versions as training
from annotation.services.training.request import TrainRequest
from tests import factories


@pytest.fixture
def completed(project, users):
    """An article whose adv→int pair anna declared complete, with her links C0→S0 (aligned) and
    C1+C2→S1 (partial), a pair she judged not aligned, and an article split into train."""
    article = factories.make_article(project, "Bees", {
        "adv": [["Bees are dying.", "Pesticides are blamed.", "Farmers disagree."]],
        "int": [["Bees die.", "Pesticides are blamed, but farmers disagree."]],
    })
    c, s = article.documents.order_by("rank")

    def labelled(ci, si, value, who="anna"):
        pair = factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key=indices_key(ci),
                                   simple_key=indices_key(si), origin="manual")
        run_saving.link_sentences([pair])
        Label.objects.create(pair=pair, annotator=users[who], value=value, seconds=20, source="article")
        return pair

    pairs = {"aligned": labelled([0], [0], "aligned"), "partial": labelled([1, 2], [1], "partial"),
             "not": labelled([2], [0], "not-aligned")}
    ArticleCompletion.objects.create(article=article, complex_document=c, simple_document=s, annotator=users["anna"])
    Split.objects.create(article=article, name="train")
    return {"article": article, "docs": (c, s), "pairs": pairs}


def test_a_completed_article_pair_is_exhaustive_training_data_with_its_links(project, completed):
    data = dataset.training_set(project)
    [pair] = data.exhaustive["train"]
    assert dict(zip(pair.gold, pair.gold_labels)) == {(0, 0): "aligned", (1, 1): "partial", (2, 1): "partial"}
    assert data.snapshot["exhaustive_sources"] == {"completed": 1} and data.snapshot["exhaustive_links"]["train"] == 3
    assert data.pair_examples == []  # its pairs are in the exhaustive article pair already


def test_adjudicated_gold_overrides_the_annotators_link(project, users, completed):
    Adjudication.objects.create(pair=completed["pairs"]["aligned"], value="not-aligned", provenance=Adjudication.ADJUDICATED)
    [pair] = dataset.training_set(project).exhaustive["train"]
    assert (0, 0) not in pair.gold


def test_a_completers_label_refines_imported_sparse_gold_and_a_tie_takes_the_stronger_link(project, users, completed):
    # issue 27 §1: imported "aligned-or-partial" gold never beats the annotator who decided
    Adjudication.objects.create(pair=completed["pairs"]["partial"], value="aligned-or-partial",
                                provenance=Adjudication.IMPORTED)
    [pair] = dataset.training_set(project).exhaustive["train"]
    assert dict(zip(pair.gold, pair.gold_labels))[(1, 1)] == "partial"
    assert dataset.stronger(["partial", "aligned"]) == "aligned" and dataset.stronger(["not", "partial"]) == "partial"
    # an imported tie ("undecided") is never read as a class: the completer's label decides, else no link
    Adjudication.objects.filter(pair=completed["pairs"]["partial"]).update(value="undecided")
    Label.objects.filter(pair=completed["pairs"]["partial"]).delete()
    [pair] = dataset.training_set(project).exhaustive["train"]
    assert (1, 1) not in pair.gold and (2, 1) not in pair.gold


def test_an_excluded_annotators_completion_does_not_train(project, users, completed):
    qc.exclude(users["anna"], project, "failed the test questions")
    assert dataset.training_set(project).exhaustive["train"] == []


def test_labelled_pairs_outside_complete_article_pairs_train_the_pair_model(project, users, completed):
    ArticleCompletion.objects.all().delete()
    data = dataset.training_set(project)
    assert data.exhaustive["train"] == []
    assert sorted(v for _, _, v in data.pair_examples) == ["aligned", "not", "partial"]
    assert ("Pesticides are blamed. Farmers disagree.", "Pesticides are blamed, but farmers disagree.", "partial") in data.pair_examples


def test_training_refuses_to_start_without_data_or_with_a_bad_option(project, users, completed):
    with pytest.raises(training.TrainingError, match="config: epochs: must be >= 1, got 0"):
        TrainRequest.parse({"config": {"epochs": 0}})
    with pytest.raises(training.TrainingError, match="unknown"):
        TrainRequest.parse({"config": {"learning_rate": 1}})
    with pytest.raises(training.TrainingError, match="seed: must be >= 0"):
        TrainRequest.parse({"seed": -1})
    with pytest.raises(training.TrainingError, match="base_version: not a model version of this project"):
        training.start_training(project, TrainRequest(base_version=99999))
    ArticleCompletion.objects.all().delete()
    with pytest.raises(training.TrainingError, match="exhaustively annotated"):
        training.start_training(project)
    Label.objects.all().delete()
    with pytest.raises(training.TrainingError, match="nothing to train on"):
        training.start_training(project)


def test_a_cancelled_job_is_not_trained(project, completed):
    job = training.start_training(project, enqueue=False)
    assert training.cancel(job)
    training.run_training_job(job.pk)  # a worker picking it up afterwards does nothing
    job.refresh_from_db()
    assert job.status == Status.CANCELLED and not ModelVersion.objects.exists()
    assert not training.cancel(job)  # finished: nothing to cancel


def test_the_training_api_is_for_researchers(api, users, project, completed):
    url = f"/api/projects/{project.pk}/train/"
    assert api(users["anna"]).post(url, {}, format="json").status_code == 403
    assert api(users["olga"]).post(url, {}, format="json").status_code == 404
    bad = api(users["rita"]).post(url, {"config": {"epochs": "many"}}, format="json")
    assert bad.status_code == 400 and "epochs" in bad.json()["detail"]
    ok = api(users["rita"]).post(url, {"config": {"epochs": 1}, "seed": 3}, format="json")
    assert ok.status_code == 202 and Job.objects.get(pk=ok.json()["id"]).params["seed"] == 3
    assert api(users["rita"]).post(f"/api/jobs/{ok.json()['id']}/cancel/").json()["status"] == "cancelled"


def test_versions_are_promoted_and_realign_only_unlabelled_articles(api, users, project, completed, tmp_path):
    version = ModelVersion.objects.create(project=project, name="crf-v1", kind="crf", path=str(tmp_path))
    other = factories.make_article(project, "Owls", {"adv": [["Owls hunt at night."]], "int": [["Owls hunt."]]})
    rita = api(users["rita"])
    assert rita.post(f"/api/model-versions/{version.pk}/promote/").json()["default"] is True
    project.refresh_from_db()
    assert run_options.default_version(project) == version
    run = rita.post(f"/api/model-versions/{version.pk}/realign/", {"scope": "unlabelled"}, format="json").json()
    assert run["model_version"] == version.pk and run["params"]["skip_articles"] == [completed["article"].pk]
    assert other.pk not in run["params"]["skip_articles"]
    assert rita.post(f"/api/model-versions/{version.pk}/realign/", {"scope": "some"}, format="json").status_code == 400
    # a crf run started without a model uses the promoted version
    assert alignment_runs.start_run(project, "crf", enqueue=False).model_version == version
    assert api(users["anna"]).post(f"/api/model-versions/{version.pk}/promote/").status_code == 403


def test_training_completion_and_export_read_a_1to1_not_aligned_over_a_queue_label_on_an_n_to_m_pair(
        project, users, completed, settings, tmp_path):
    """One reading of labels as links (``links.links_from``) everywhere: anna's 1:1 "not aligned" on
    C2→S1 removes that link from her n:m label C1+C2→S1 (partial) for training, completion and export."""
    from annotation.services.editing import completion
    from tests.annotation.services.export.helpers import jsonl
    from tests.annotation.services.export.helpers import run as export

    c, s = completed["docs"]
    pair = factories.make_pair(article=completed["article"], complex_document=c, simple_document=s,
                               complex_key="2", simple_key="1", origin="manual")
    Label.objects.create(pair=pair, annotator=users["anna"], value="not-aligned", seconds=20, source="article")
    wanted = {(0, 0): "aligned", (1, 1): "partial"}
    [trained] = dataset.training_set(project).exhaustive["train"]
    assert dict(zip(trained.gold, trained.gold_labels)) == wanted
    [done] = completion.complete_article_pairs(project)
    assert {link.key: link.label for link in done.links} == wanted
    _, root = export(project, settings, tmp_path, derived=False, label_policy="majority-or-single",
                     formats=["articles", "jsonl"], splits=["train"])
    [line] = jsonl(root / "articles" / "train.jsonl")
    assert dict(zip(map(tuple, line["gold"]), line["gold_labels"])) == wanted
    assert [(g["kind"], g["complex"], g["simple"]) for g in line["groups"]] == [("1:1", [0], [0]), ("1:1", [1], [1])]
    groups = {(tuple(r["complex_ids"]), tuple(r["simple_ids"])): r["group"] for r in jsonl(root / "jsonl" / "train.jsonl")}
    assert groups[((2,), (1,))] is None and groups[((2,), (0,))] is None  # not aligned: no link, no group
    assert groups[((1, 2), (1,))]["kind"] == "1:1" and groups[((1, 2), (1,))]["simple"] == [1]


def test_the_training_set_is_built_once_for_the_request_the_worker_and_the_models_page(
        client, users, project, completed, monkeypatch):
    """Issue 29 §4: it was built by the request, again by the worker and on every view of the Models page."""
    import workers.engine

    built, trained_on = [], []
    real = dataset.training_set
    monkeypatch.setattr(dataset, "training_set", lambda p: built.append(p.pk) or real(p))  # counts, then builds

    def cancelled_training(train, out, **kwargs):  # training itself is not what is measured here (and is slow)
        trained_on.extend(p.id for p in train)
        raise workers.engine.TrainingCancelled("stop")

    monkeypatch.setattr(workers.engine, "train_aligner", cancelled_training)
    client.force_login(users["rita"])
    page = f"/projects/{project.pk}/models/"
    shown = client.get(page).content.decode()
    assert 'id="train-refusal"' not in shown
    assert 'id="train-epochs" name="epochs" value="2" data-default="2"' in shown  # as TRAIN_PARAMS declares it
    job = training.start_training(project, enqueue=False)
    training.run_training_job(job.pk)
    assert client.get(page).status_code == 200
    assert built == [project.pk] and trained_on == [f"{completed['article'].pk}:{c.pk}-{s.pk}"
                                                     for c, s in [completed["docs"]]]
    ArticleCompletion.objects.all().delete()  # the data changed: the next reader builds the set again
    assert 'id="train-refusal"' in client.get(page).content.decode() and len(built) == 2
    from django.core.cache import cache

    from annotation.services.training import current
    held = cache.get(f"training-set:{project.pk}")  # one set a project, the newest: not one per state since
    assert held is not None and held[0] == current.data_state(project) and held[1].snapshot == (
        current.training_summary(project).snapshot)


def test_the_training_set_reads_its_documents_in_a_fixed_number_of_queries(project, users, completed):
    """Issue 37: each exhaustive document pair loaded its two documents (3,000 queries at 2,000 pairs)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            dataset.training_set(project)
        return len(captured.captured_queries)

    one = queries()
    for n in range(3):
        article = factories.make_article(project, f"More {n}", {"adv": [["A long one.", "Another."]], "int": [["Short."]]})
        c, s = article.documents.order_by("rank")
        ArticleCompletion.objects.create(article=article, complex_document=c, simple_document=s, annotator=users["anna"])
        Split.objects.create(article=article, name="train")
    data = dataset.training_set(project)
    assert len(data.exhaustive["train"]) == 4 and queries() == one
    assert {p.complex.paragraphs for p in data.exhaustive["train"]} >= {(("A long one.", "Another."),)}
