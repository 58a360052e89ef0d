"""Scoring jobs called directly (no worker) on hand-made pairs whose right answers are known."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from annotation.models import Adjudication, AlignmentRun, CandidatePair, Job, Label, ModelVersion, Status
from annotation.services.alignment import run_saving, run_setup
from annotation.services.corpus.importing import import_files
from annotation.services.scoring import common
from annotation.services.scoring import jobs as scoring
from tests import factories
from workers.engine.types import AlignedPair, Alignment

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _model_root(settings, tmp_path):
    settings.MODEL_ROOT = tmp_path / "models"


def parallel(project, stem: str, pairs: list[tuple[str, str]]) -> list[CandidatePair]:
    """Import ``pairs`` as line-aligned ``stem.src``/``stem.dst`` files (imported 1:1 pairs)."""
    src = "\n".join(c for c, _ in pairs).encode()
    dst = "\n".join(s for _, s in pairs).encode()
    import_files(project, [(f"{stem}.src", src), (f"{stem}.dst", dst)], "parallel")
    return list(CandidatePair.objects.filter(article__project=project, article__title=stem).order_by("id"))


def start(project, kind: str, params: dict) -> Job:
    """A scoring job of ``kind`` parsed as the API and the command parse it, not queued."""
    return scoring.start_scoring(project, scoring.parse_request(project, kind, params), enqueue=False)


def run_job(project, kind: str, **params) -> Job:
    job = start(project, kind, params)
    scoring.run_scoring_job(job.pk)
    job.refresh_from_db()
    return job


def features(pair: CandidatePair) -> dict:
    pair.refresh_from_db()
    return pair.features


# A reference simplification corpus: complex-vocabulary passives → short sentences with common words.
ADJ_C = ["comprehensive", "substantial", "unprecedented", "controversial", "preliminary"]
NOUN_C = ["legislation", "infrastructure", "regulations", "negotiations", "expenditure"]
VERB_C = ["ratified", "promulgated", "scrutinized", "authorized", "postponed"]
ADJ_S = ["big", "new", "first", "hard", "early"]
NOUN_S = ["law", "roads", "rules", "talks", "costs"]
VERB_S = ["passed", "made", "checked", "allowed", "delayed"]
TAILS = ["", " following protracted deliberations", " despite considerable opposition from residents"]
REFERENCE = [
    (f"The {ADJ_C[i % 5]} {NOUN_C[(i // 5) % 5]} was {VERB_C[(2 * i) % 5]} by the municipal committee{TAILS[i % 3]}.",
     f"The city {VERB_S[(2 * i) % 5]} the {ADJ_S[i % 5] + ' ' if i % 2 else ''}{NOUN_S[(i // 5) % 5]}.")
    for i in range(30)
]
SIMPLIFICATION = ("The controversial legislation was ratified by the municipal committee following protracted deliberations.",
                  "The city passed the law.")


@pytest.fixture
def reference(users):
    ref = factories.make_project("WikiLarge sample", rita="researcher")
    parallel(ref, "wikilarge.train", REFERENCE)
    return ref


# --- ACCESS ------------------------------------------------------------------------------------

def test_a_pair_with_identical_sides_gets_access_ratios_of_one(project):
    same, shorter = parallel(project, "p", [("The cat sat on the mat.", "The cat sat on the mat."),
                                            ("The cat sat on the mat.", "A cat sat.")])
    job = run_job(project, "access-attributes", parser=None)
    assert job.status == Status.SUCCEEDED, job.error
    f = features(same)
    assert (f["access_char_ratio"], f["access_lev_sim"], f["access_word_rank_ratio"]) == (1.0, 1.0, 1.0)
    assert features(shorter)["access_char_ratio"] == pytest.approx(10 / 23)
    assert "access_dep_depth_ratio" not in f and "access_dep_depth_ratio" in job.result["skipped"]
    assert job.result["pairs"] == 2


def test_access_attributes_use_the_projects_pipeline_and_list_what_it_could_not_compute(project):
    from annotation.services.settings.project_settings import update_language_tools

    parallel(project, "p", [("The cat sat on the mat.", "A cat sat.")])
    update_language_tools(project, encoder="", spacy_pipeline="fr_core_news_sm")
    # a pipeline this worker lacks (saved where it was installed): the job finishes and says what it left out
    project.config = {**project.config, "spacy_pipeline": "xx_no_such_pipeline"}
    project.save(update_fields=["config"])
    job = run_job(project, "access-attributes")
    assert job.status == Status.SUCCEEDED, job.error
    assert "'xx_no_such_pipeline' is not installed" in job.result["parser"]
    assert "'xx_no_such_pipeline' is not installed" in job.result["missing_features"]["access_dep_depth_ratio"]


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
                                  _alignment([(1, 1)]), )
    run_job(project, "access-attributes", parser=None, run=run.pk)
    assert CandidatePair.objects.get(predictions__run=run).pk == predicted.pk  # the run predicted an existing pair
    assert "access_char_ratio" in features(predicted)
    assert "access_char_ratio" not in features(imported)


def _alignment(links):
    from workers.engine.types import AlignedPair, Alignment

    return Alignment("a", [AlignedPair(complex=(c,), simple=(s,), label="aligned", score=0.9) for c, s in links])


def test_a_finished_job_is_not_run_again(project):
    parallel(project, "p", [("The cat sat on the mat.", "A cat sat.")])
    job = run_job(project, "access-attributes", parser=None)
    finished = job.finished_at
    scoring.run_scoring_job(job.pk)
    job.refresh_from_db()
    assert job.finished_at == finished and job.attempts == 1


# --- pivot selectors ---------------------------------------------------------------------------

def test_the_pivot_selector_keeps_exactly_the_simpler_paraphrase(project):
    kept, same, unrelated, not_simpler = parallel(project, "pivot", [
        ("The feline reposed upon the rug.", "The cat lay on the rug."),  # BLEU ok, FRES gain 42 → kept
        ("The cat lay on the rug.", "The cat lay on the rug."),  # identical → dropped
        ("The feline reposed upon the rug.", "Stock markets fell sharply in Asia."),  # BLEU ≈ 0
        ("The cat lay on the rug all day.", "The cat lay on the rug."),  # BLEU 75, FRES gain 2 < 10
    ])
    job = run_job(project, "pivot-select")
    assert job.result["counts"] == {"kept": 1, "identical": 1, "low_bleu": 1, "low_fres_gain": 1}
    assert job.result["dropped"] == 3 and job.result["pass_rate"] == 0.25
    assert [features(p)["pivot_keep"] for p in (kept, same, unrelated, not_simpler)] == [1.0, 0.0, 0.0, 0.0]
    f = features(kept)
    assert f["pivot_bleu"] >= 15 and f["pivot_fres_gain"] == pytest.approx(42.3, abs=0.1) and f["pivot_swapped"] == 0.0
    assert f["pivot_fres_gain"] == pytest.approx(f["pivot_fres_simple"] - f["pivot_fres_complex"])


def test_the_pivot_selector_orients_a_pair_whose_source_is_the_simpler_side(project):
    (pair,) = parallel(project, "pivot", [("The cat lay on the rug.", "The feline reposed upon the rug.")])
    job = run_job(project, "pivot-select")
    assert features(pair)["pivot_swapped"] == 1.0 and features(pair)["pivot_keep"] == 1.0
    strict = run_job(project, "pivot-select", orient=False)
    assert strict.result["counts"]["low_fres_gain"] == 1 and features(pair)["pivot_keep"] == 0.0
    assert job.result["counts"]["kept"] == 1


def test_pivot_thresholds_are_parameters(project):
    (pair,) = parallel(project, "pivot", [("The feline reposed upon the rug.", "The cat lay on the rug.")])
    job = run_job(project, "pivot-select", h_fres=50)
    assert job.result["counts"] == {"kept": 0, "identical": 0, "low_bleu": 0, "low_fres_gain": 1}


# --- Sum4Simp ------------------------------------------------------------------------------------

def test_sum4simp_keeps_a_simplification_and_drops_its_reverse(project, reference):
    # shorter, simpler words and more complex-corpus-typical source words than the average reference pair
    simplification, reverse = parallel(project, "target", [SIMPLIFICATION, SIMPLIFICATION[::-1]])
    job = run_job(project, "sum4simp-filter", reference_project=reference.name)
    assert job.status == Status.SUCCEEDED, job.error
    good, bad = features(simplification), features(reverse)
    assert good["sum4simp_keep"] == 1.0 and bad["sum4simp_keep"] == 0.0
    assert good["sum4simp_T"] == 1.0 and bad["sum4simp_T"] < 0.01 and job.result["threshold"] == 0.875
    assert good["sum4simp_len"] == pytest.approx(5 / 12) and bad["sum4simp_len"] == pytest.approx(12 / 5)
    assert job.result["kept"] == 1 and job.result["keep_rate"] == 0.5
    assert job.result["attributes"] == ["comp", "freq", "len"] and job.result["sari"].startswith("left out")


def test_the_sum4simp_fit_is_saved_as_a_model_version_and_can_be_reused(project, reference):
    parallel(project, "target", [("The provincial authorities promulgated ordinances.", "The state made rules.")])
    job = run_job(project, "sum4simp-filter", reference_project=reference.pk)
    mv = ModelVersion.objects.get(pk=job.result["model_version"])
    assert mv.kind == "sum4simp-filter" and mv.project == project
    saved = json.loads(Path(mv.path).read_text())
    assert saved["kind"] == "sum4simp_filter" and set(saved["fits"]) == {"len", "comp", "freq"}
    assert mv.training_snapshot["pairs"] == len(REFERENCE)
    assert saved["fits"]["len"]["mu"] == pytest.approx(np.mean([len(s.split()) / len(c.split()) for c, s in REFERENCE]))
    first = CandidatePair.objects.get(article__title="target").features
    again = run_job(project, "sum4simp-filter", model_version=mv.pk)
    assert again.result["model_version"] == mv.pk and ModelVersion.objects.count() == 1
    assert CandidatePair.objects.get(article__title="target").features == first


def test_sari_uses_reference_simplifications_from_a_refs_project(project, reference, users):
    from workers.engine.simplicity import sentence_sari

    complex_text, simple_text = SIMPLIFICATION
    (pair,) = parallel(project, "target", [SIMPLIFICATION])
    refs = factories.make_project("ACCESS outputs", rita="researcher")  # system outputs used as references
    outputs = [(c, f"The city {VERB_S[i % 5]} it.") for i, (c, _) in enumerate(REFERENCE)]
    parallel(refs, "outputs", outputs + [(complex_text.upper(), "The city passed a law.")])  # matched case-insensitively
    job = run_job(project, "sum4simp-filter", reference_project=reference.pk, refs_project=refs.pk)
    assert job.result["sari"] == "used" and "sari" in job.result["attributes"]
    expected = sentence_sari(complex_text, simple_text, ["The city passed a law."])["sari"]
    assert features(pair)["sum4simp_sari"] == pytest.approx(expected)
    mv = ModelVersion.objects.get(pk=job.result["model_version"])
    assert mv.training_snapshot["pairs_with_refs"] == len(REFERENCE)


# --- gain classifier -----------------------------------------------------------------------------

def test_the_gain_classifier_prefers_a_simplification_to_its_reverse(project, reference):
    simplification, reverse = parallel(project, "target", [
        ("The regional council formally approved the extensive fisheries legislation after lengthy negotiations.",
         "The council passed fishing laws."),
        ("The council passed fishing laws.",
         "The regional council formally approved the extensive fisheries legislation after lengthy negotiations."),
    ])  # unseen words: the classifier must generalise from the gains (length, words, CEFR), not the vocabulary
    job = run_job(project, "gain-classifier", reference_project=reference.pk, epochs=30, parser=None)
    assert job.status == Status.SUCCEEDED, job.error
    assert features(simplification)["gain_prob"] > 0.5 > features(reverse)["gain_prob"]
    counts = job.result["cutoff_counts"]
    assert set(counts["all"]) == {"0.5", "0.6", "0.7", "0.8", "0.9"} and counts["all"]["0.5"] == 1
    assert counts["groups"]["1:1"] == counts["all"]
    mv = ModelVersion.objects.get(pk=job.result["model_version"])
    assert mv.kind == "gain-classifier" and (Path(mv.path) / "model.pt").exists()
    assert mv.metrics["n_pairs"] == len(REFERENCE)
    # without a parser, WIVICO's syntactic gain features are listed as missing, not silently dropped
    assert "gain_classifier:mdt" in job.result["missing_features"]
    assert "no dependency parser" in job.result["missing_features"]["gain_classifier:mdt"]


# --- WIVICO thresholds ---------------------------------------------------------------------------

class TableEncoder:
    """Known unit vectors for known texts; anything else gets a fixed far-away vector."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = {k: np.array(v, dtype=np.float32) / np.linalg.norm(v) for k, v in table.items()}

    def encode(self, texts):
        other = np.array([0.0, 0.0, 1.0], dtype=np.float32)
        return np.stack([self.table.get(t, other) for t in texts]) if texts else np.zeros((0, 3), dtype=np.float32)


@pytest.fixture
def wivico_project(users, monkeypatch):
    project = factories.make_project("WIVICO", scheme="wivico-validity", rita="researcher", anna="annotator")
    factories.make_article(project, "Doc", {
        "complex": [["A1.", "A2.", "A3.", "A4."]],
        "simple": [["B1.", "B2.", "B3.", "B4."]],
    })
    table = {"A1.": [1, 0, 0], "B1.": [1, 0, 0],  # cosine 1.0
             "A2.": [1, 0, 0], "B2.": [0.6, 0.8, 0],  # cosine 0.6
             "A3.": [0, 1, 0], "B3.": [0.8, 0.6, 0],  # cosine 0.6
             "A4.": [1, 0, 0], "B4.": [0, 1, 0]}  # cosine 0.0
    monkeypatch.setattr("workers.engine.simplicity.embedding.default_encoder", lambda model=None, device=None: TableEncoder(table))
    run = AlignmentRun.objects.create(project=project, method="wivico", status=Status.SUCCEEDED)
    article = project.articles.get()
    c, s = article.documents.order_by("rank")
    run_saving.save_alignment(run, article, c, s, _alignment([(0, 0), (1, 1), (2, 2), (3, 3)]))
    pairs = list(CandidatePair.objects.filter(predictions__run=run).order_by("complex_key"))
    for pair, gold in zip(pairs, ["valid", "valid", "partially-valid", "non-valid"]):
        Adjudication.objects.create(pair=pair, value=gold, provenance=Adjudication.ADJUDICATED)
    return project


def _more_documents(project, n: int) -> None:
    for k in range(n):
        factories.make_article(project, f"Doc {k + 2}", {"complex": [["A2.", "A4.", "A3."]], "simple": [["B3.", "B2."]]})


def test_the_one_to_one_threshold_is_the_mean_score_of_the_valid_pairs(wivico_project):
    job = run_job(wivico_project, "wivico-thresholds")
    assert job.status == Status.SUCCEEDED, job.error
    assert job.result["threshold"] == pytest.approx(0.8)  # mean of 1.0 and 0.6
    assert job.result["partial_threshold"] == pytest.approx(0.6)
    assert job.result["derived_from"]["valid_pairs"] == 2 and job.result["derived_from"]["partial_pairs"] == 1
    thresholds = job.result["thresholds"]
    assert thresholds["1:1"] == pytest.approx(0.8) and len(thresholds) == 9 and "3:3" in thresholds


def test_propagated_thresholds_follow_the_papers_decreasing_shift(wivico_project):
    from workers.engine.simplicity.wivico_thresholds import propagate_thresholds

    job = run_job(wivico_project, "wivico-thresholds")
    means = {tuple(int(x) for x in k.split(":")): v for k, v in job.result["derived_from"]["config_means"].items()}
    expected = propagate_thresholds(means, 0.8, "paper")
    assert job.result["thresholds"] == {f"{n}:{m}": pytest.approx(v) for (n, m), v in expected.items()}


def test_derived_thresholds_are_stored_for_later_wivico_runs(wivico_project):
    job = run_job(wivico_project, "wivico-thresholds")
    wivico_project.refresh_from_db()
    stored = wivico_project.config["wivico"]
    assert stored["thresholds"] == job.result["thresholds"] and stored["threshold"] == pytest.approx(0.8)
    assert len(stored["thresholds"]) == len(stored["partial_thresholds"]) == 9  # every propagated cut-off
    assert stored["partial_thresholds"]["1:1"] == pytest.approx(0.6)
    assert all(stored["partial_thresholds"][k] <= v for k, v in stored["thresholds"].items())
    defaults = run_setup.project_method_defaults(wivico_project, "wivico", {})
    assert set(defaults) == {"threshold", "partial_threshold", "thresholds", "partial_thresholds", "propagation"}
    from workers.engine.methods.wivico import WivicoAligner

    WivicoAligner(defaults)  # accepted as a run configuration
    assert run_setup.project_method_defaults(wivico_project, "wivico", {"threshold": 0.7}) == {}
    assert run_setup.project_method_defaults(wivico_project, "crf", {}) == {}


def test_the_window_means_cover_every_document_pair_of_the_run_not_the_first_200(wivico_project, monkeypatch):
    _more_documents(wivico_project, 3)
    job = run_job(wivico_project, "wivico-thresholds")
    assert job.result["derived_from"]["document_pairs"] == 4 and not job.result["derived_from"]["capped"]
    # 4 complex × 4 simple 1:1 windows in the first document pair, 3 × 2 in each of the other three
    assert job.result["derived_from"]["windows"]["1:1"] == 16 + 3 * 6
    capped = run_job(wivico_project, "wivico-thresholds", max_document_pairs=1)
    assert capped.result["derived_from"]["document_pairs"] == 1 and capped.result["derived_from"]["capped"]
    assert capped.result["derived_from"]["config_means"] != job.result["derived_from"]["config_means"]


def test_only_annotated_one_to_one_pairs_of_a_wivico_run_set_the_cut_off(wivico_project, users):
    # a 2:1 pair of the wivico run, and a 1:1 pair proposed only by another method, both labelled valid
    wivico_run = wivico_project.runs.get()
    article = wivico_project.articles.get()
    c, s = article.documents.order_by("rank")
    run_saving.save_alignment(wivico_run, article, c, s, Alignment("a", [AlignedPair((2, 3), (3,), "aligned", 0.5)]))
    sbert = AlignmentRun.objects.create(project=wivico_project, method="sbert", status=Status.SUCCEEDED)
    run_saving.save_alignment(sbert, article, c, s, _alignment([(3, 0)]))
    for pair in CandidatePair.objects.filter(complex_key__in=["2,3", "3"], simple_key__in=["3", "0"]).exclude(
            complex_key="3", simple_key="3"):
        Adjudication.objects.create(pair=pair, value="valid", provenance=Adjudication.ADJUDICATED)
    job = run_job(wivico_project, "wivico-thresholds")
    assert job.result["threshold"] == pytest.approx(0.8)  # still the mean of A1–B1 (1.0) and A2–B2 (0.6)
    assert job.result["derived_from"]["source_run"] == wivico_run.pk
    with pytest.raises(ValueError, match="is a sbert run"):
        start(wivico_project, "wivico-thresholds", {"run": sbert.pk})


def test_labelled_pairs_of_other_methods_alone_do_not_make_a_wivico_cut_off(wivico_project):
    wivico_project.runs.update(method="jaccard")
    job = start(wivico_project, "wivico-thresholds", {})
    with pytest.raises(ValueError, match="of a wivico run counts as valid"):
        scoring.run_scoring_job(job.pk)


def test_majority_labels_count_when_there_is_no_gold_and_ties_do_not(wivico_project, users):
    Adjudication.objects.all().delete()
    first, second = CandidatePair.objects.order_by("complex_key")[:2]
    for annotator, (a, b) in zip(["rita", "anna", "olga"], [("valid", "valid"), ("valid", "non-valid"), ("non-valid", None)]):
        Label.objects.create(pair=first, annotator=users[annotator], value=a)
        if b:
            Label.objects.create(pair=second, annotator=users[annotator], value=b)
    classes = common.annotated_classes(wivico_project, CandidatePair.objects.all())
    assert classes == {first.pk: "aligned"}  # 2 of 3 valid; the second pair is a 1–1 tie


def test_without_annotated_valid_pairs_the_job_fails_with_a_reason(wivico_project):
    Adjudication.objects.all().delete()
    job = start(wivico_project, "wivico-thresholds", {})
    with pytest.raises(ValueError):
        scoring.run_scoring_job(job.pk)
    job.refresh_from_db()
    assert job.status == Status.FAILED and "of a wivico run counts as valid" in job.error


# --- validation ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,params,message", [
    ("magic", {}, "unknown scoring kind 'magic'"),
    ("access-attributes", {"colour": 1}, "colour: unknown option"),
    ("sum4simp-filter", {}, "needs reference_project"),
    ("sum4simp-filter", {"reference_project": "Nope"}, "reference project 'Nope' not found"),
    ("pivot-select", {"h_bleu": "high"}, "h_bleu: must be a float, got 'high'"),
    ("pivot-select", {"h_bleu": 101}, "h_bleu: must be <= 100, got 101"),
    ("pivot-select", {"orient": "yes"}, "orient: must be a bool"),
    ("wivico-thresholds", {"propagation": "up"}, "propagation: unknown propagation 'up'; choose one of: paper, offset"),
    ("access-attributes", {"run": 999999}, "run 999999 is not a run of project"),
    ("gain-classifier", {"model_version": 12345}, "is not a gain-classifier of project"),
])
def test_bad_requests_are_refused_before_a_job_is_created(project, kind, params, message):
    with pytest.raises(scoring.ScoringRefused) as info:  # a DomainError: its status and code reach the client
        start(project, kind, params)
    assert message in str(info.value) and Job.objects.count() == 0
    assert info.value.status == 400 and info.value.code


def test_a_reference_project_must_hold_imported_pairs(project, users):
    empty = factories.make_project("Empty", rita="researcher")
    with pytest.raises(scoring.ScoringRefused, match="has no imported pairs"):
        start(project, "gain-classifier", {"reference_project": empty.pk})


def test_pivot_selection_needs_fres_coefficients_for_the_language(users):
    italian = factories.make_project("Italiano", language="it")
    with pytest.raises(scoring.ScoringRefused, match="no FRES coefficients"):
        start(italian, "pivot-select", {})
