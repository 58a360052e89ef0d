"""What every scoring kind shares (``scoring/common.py``): the pairs a job scores, replacing one prefix's feature
keys, batches, a reference corpus's texts and simplifications, saving a fit as a model version, annotated classes."""
from __future__ import annotations

import pytest

from annotation.models import Adjudication, AlignmentRun, CandidatePair, Label, ModelVersion
from annotation.services.alignment import run_saving
from annotation.services.scoring import common
from tests import factories
from tests.annotation.services.scoring.helpers import alignment, features, parallel, run_job, start

pytestmark = pytest.mark.django_db


def test_rerunning_access_attributes_overwrites_its_keys_and_keeps_the_others(project):
    (pair,) = parallel(project, "p", [("The cat sat on the mat.", "A cat sat.")])
    CandidatePair.objects.filter(pk=pair.pk).update(features={"crf_sim": 0.5, "access_char_ratio": 9.0, "access_stale": 1.0})
    run_job(project, "access-attributes", parser=None)
    first = features(pair)
    run_job(project, "access-attributes", parser=None)
    assert features(pair) == first
    assert first["crf_sim"] == 0.5 and "access_stale" not in first
    assert first["access_char_ratio"] == pytest.approx(10 / 23)


def test_a_job_scores_only_the_pairs_of_the_given_run(project):
    imported, predicted = parallel(project, "p", [("The cat sat on the mat.", "A cat sat."),
                                                  ("The dog barked at the postman.", "A dog barked.")])[:2]
    run = AlignmentRun.objects.create(project=project, method="jaccard")
    run_saving.save_alignment(run, imported.article, imported.complex_document, imported.simple_document,
                                  alignment([(1, 1)]), )
    run_job(project, "access-attributes", parser=None, run=run.pk)
    assert CandidatePair.objects.get(predictions__run=run).pk == predicted.pk  # the run predicted an existing pair
    assert "access_char_ratio" in features(predicted)
    assert "access_char_ratio" not in features(imported)


def test_write_features_replaces_only_the_keys_of_its_prefix_and_stores_floats(project):
    a, b = parallel(project, "p", [("The cat sat on the mat.", "A cat sat."), ("The dog barked.", "A dog barked.")])
    CandidatePair.objects.filter(pk=a.pk).update(features={"x_old": 2.0, "y_kept": 3.0})
    common.write_features({a.pk: {"x_new": 1, "x_flag": True}, b.pk: {}}, "x_")
    assert features(a) == {"y_kept": 3.0, "x_new": 1.0, "x_flag": 1.0}
    assert all(type(v) is float for v in features(a).values())
    assert features(b) == {}


def test_target_pairs_narrow_to_one_origin_and_leave_other_projects_out(project, users):
    imported = parallel(project, "p", [("The cat sat on the mat.", "A cat sat.")])
    other = factories.make_project("Elsewhere")
    parallel(other, "q", [("The dog barked.", "A dog barked.")])
    assert list(common.target_pairs(project, {})) == imported
    assert list(common.target_pairs(project, {"origin": "import"})) == imported
    assert not common.target_pairs(project, {"origin": "predicted"}).exists()


def test_batches_cut_a_list_in_order_and_an_empty_list_gives_none():
    assert list(common.batches([1, 2, 3, 4, 5], size=2)) == [[1, 2], [3, 4], [5]]
    assert list(common.batches([], size=2)) == []


def test_a_reference_corpus_gives_its_imported_pairs_and_their_simplifications_by_normalised_source(project, users):
    pairs = [("The cat sat on the mat.", "A cat sat."), ("THE CAT SAT ON THE MAT.", "The cat sat."),
             ("The dog barked.", "A dog barked.")]
    parallel(project, "refs", pairs)
    assert common.reference_texts(project.pk) == pairs
    refs = common.reference_simplifications(project.pk)
    assert refs[common.reference_key("the cat sat on the mat.")] == ["A cat sat.", "The cat sat."]
    assert common.reference_key("The cat sat.") != common.reference_key("The cat sat")  # punctuation counts
    assert common.reference_simplifications(None) == {}


def test_a_fit_saved_twice_by_one_job_is_one_model_version(project, settings):
    job = start(project, "access-attributes", {"parser": None})
    path = common.model_dir("sum4simp-filter", job)
    assert path.parent.is_dir() and path.name == f"project-{project.pk}-job-{job.pk}"
    first = common.save_model_version(job, "sum4simp-filter", path, {"pairs": 1}, {"f1": 0.5})
    second = common.save_model_version(job, "sum4simp-filter", path, {"pairs": 2}, {"f1": 0.7})
    assert first.pk == second.pk and ModelVersion.objects.count() == 1
    assert ModelVersion.objects.get().training_snapshot == {"pairs": 2} and second.name == f"sum4simp-filter (job #{job.pk})"


def test_majority_labels_count_when_there_is_no_gold_and_ties_do_not(wivico_project, users):
    Adjudication.objects.all().delete()
    first, second = CandidatePair.objects.order_by("complex_key")[:2]
    for annotator, (a, b) in zip(["rita", "anna", "olga"], [("valid", "valid"), ("valid", "non-valid"), ("non-valid", None)]):
        Label.objects.create(pair=first, annotator=users[annotator], value=a)
        if b:
            Label.objects.create(pair=second, annotator=users[annotator], value=b)
    classes = common.annotated_classes(wivico_project, CandidatePair.objects.all())
    assert classes == {first.pk: "aligned"}  # 2 of 3 valid; the second pair is a 1–1 tie
