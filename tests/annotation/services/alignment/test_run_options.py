"""What a run may be given (``alignment/run_options.py``): the methods, the app's own options beside the engine's,
a mining run's request parsed once, and the refusals of a model path, a bad option or an unusable model version."""
from __future__ import annotations

import pytest

from annotation.errors import DomainError
from annotation.models import ModelVersion
from annotation.requests import BadOptions
from annotation.services.alignment import run_options
from tests import factories

pytestmark = pytest.mark.django_db

REFUSED = (ValueError, DomainError)  # a refusal the API answers with a 400
# a bad option: run_options.RunOptionsError, a BadOptions (each option under its name, listing the valid ones)


def test_the_methods_are_the_engines_aligners_and_mining():
    methods = run_options.available_methods()
    assert methods[-1] == "muss-corpus" and {"jaccard", "crf", "sbert"} <= set(methods)
    assert run_options.facts("muss-corpus").model_kinds == ("bi-encoder",)
    assert run_options.facts("jaccard").model_kinds == ()


def test_the_apps_own_options_never_reach_the_engine():
    params = {"threshold": 0.4, "skip_articles": [3], "access_attributes": False, "keep_files": True}
    assert run_options.engine_params("jaccard", params) == {"threshold": 0.4, "keep_files": True}
    assert run_options.engine_params("muss-corpus", params) == {"threshold": 0.4}  # keep_files is mining's own
    assert run_options.engine_params("jaccard", None) == {}
    assert [o.name for o in run_options.app_options("jaccard")] == ["access_attributes", "skip_articles"]


@pytest.mark.parametrize("value", [["3"], [True], [1.5]])
def test_skip_articles_must_be_article_ids(project, value):
    with pytest.raises(BadOptions, match="skip_articles: must be a list of article ids"):
        run_options.check(project, "jaccard", {"skip_articles": value}, None)
    run_options.check(project, "jaccard", {"skip_articles": [1, 2]}, None)  # accepted


def test_a_mining_request_is_parsed_once_with_the_apps_defaults():
    request = run_options.MiningRequest.parse({"k": 3})
    assert request.config.k == 3 and request.access_attributes and not request.keep_files
    request = run_options.MiningRequest.parse({"access_attributes": False, "keep_files": True})
    assert not request.access_attributes and request.keep_files
    with pytest.raises(BadOptions, match="keep_files"):
        run_options.MiningRequest.parse({"keep_files": "yes"})


def test_a_model_path_a_worker_file_or_an_unknown_option_is_refused_listing_the_valid_ones(project):
    with pytest.raises(BadOptions, match="never a path") as info:
        run_options.check(project, "sbert", {"model": "/models/x"}, None)
    assert "skip_articles" in str(info.value)  # the valid options are listed, the app's too
    with pytest.raises(BadOptions, match="filter: a file path on the worker is not accepted"):
        run_options.check(project, "sum4simp", {"filter": "/srv/filter.json"}, None)
    with pytest.raises(BadOptions, match="treshold"):
        run_options.check(project, "jaccard", {"treshold": 0.5}, None)
    with pytest.raises(BadOptions, match="treshold"):
        run_options.check(project, "muss-corpus", {"treshold": 0.5}, None)


def test_a_model_version_of_another_project_or_kind_is_refused(project, users):
    other = factories.make_project("Elsewhere")
    theirs = ModelVersion.objects.create(project=other, name="theirs", kind="bi-encoder", path="/m/theirs")
    crf = ModelVersion.objects.create(project=project, name="crf-v1", kind="crf", path="/m/crf")
    encoder = ModelVersion.objects.create(project=project, name="enc", kind="bi-encoder", path="/m/enc")
    with pytest.raises(REFUSED, match="not a model version of this project"):
        run_options.check(project, "sbert", {}, theirs)
    with pytest.raises(REFUSED, match="'crf-v1' is a crf model; sbert runs use bi-encoder models"):
        run_options.check(project, "sbert", {}, crf)
    with pytest.raises(REFUSED, match="jaccard runs use no model"):
        run_options.check(project, "jaccard", {}, encoder)
    run_options.check(project, "sbert", {}, encoder)
    assert list(run_options.model_versions(project, "sbert")) == [encoder]
    assert set(run_options.model_versions(project)) == {crf, encoder}


def test_the_default_version_is_the_promoted_crf_version_only(project):
    assert run_options.default_version(project) is None
    crf = ModelVersion.objects.create(project=project, name="crf-v1", kind="crf", path="/m/crf")
    encoder = ModelVersion.objects.create(project=project, name="enc", kind="bi-encoder", path="/m/enc")
    project.config = {"default_model_version": encoder.pk}
    assert run_options.default_version(project) is None  # not a crf version
    project.config = {"default_model_version": crf.pk}
    assert run_options.default_version(project) == crf


def test_the_schemas_list_every_method_with_its_options_and_model_kinds():
    schemas = {s["name"]: s for s in run_options.schemas()}
    assert list(schemas) == run_options.available_methods()
    assert schemas["crf"]["model_kinds"] == ["crf", "cross-encoder", "bi-encoder"]
    assert {o["name"] for o in schemas["jaccard"]["app_options"]} == {"access_attributes", "skip_articles"}
    assert "k" in {o["name"] for o in schemas["muss-corpus"]["options"]}
