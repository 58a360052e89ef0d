"""Training across its surfaces: the training API, one reading of labels as links for training, completion and
export, and the training set built once for the request, the worker and the models page. The training set's
own rules are in ``test_dataset.py``, starting, cancelling and promoting in ``test_versions.py``."""
from __future__ import annotations

from annotation.models import ArticleCompletion, Job, Label
from annotation.services.training import dataset
from annotation.services.training import versions as training
from tests import factories


def test_the_training_api_is_for_researchers(api, users, project, completed):
    url = f"/api/projects/{project.pk}/train/"
    assert api(users["anna"]).post(url, {}, format="json").status_code == 403
    assert api(users["olga"]).post(url, {}, format="json").status_code == 404
    bad = api(users["rita"]).post(url, {"config": {"epochs": "many"}}, format="json")
    assert bad.status_code == 400 and "epochs" in bad.json()["detail"]
    ok = api(users["rita"]).post(url, {"config": {"epochs": 1}, "seed": 3}, format="json")
    assert ok.status_code == 202 and Job.objects.get(pk=ok.json()["id"]).params["seed"] == 3
    assert api(users["rita"]).post(f"/api/jobs/{ok.json()['id']}/cancel/").json()["status"] == "cancelled"


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
