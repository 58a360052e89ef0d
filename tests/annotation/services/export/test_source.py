"""The exported pairs' source (``export.source``), its label classes: the scheme's aligned / partial / not, a tie as
undecided, the model's own labels in an auto export, and the refusal of a gold export without classes."""
from __future__ import annotations

import pytest

from annotation.label_schemes import value_classes
from annotation.models import LabelScheme
from annotation.services.export import source
from annotation.services.export.options import ExportError
from annotation.services.review.gold_rule import UNDECIDED
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_gold_value_counts_as_its_scheme_class_a_tie_as_undecided(project):
    counts_as = value_classes(project.label_scheme)
    assert counts_as["not-aligned"] == "not" and counts_as["partial"] == "partial"
    assert source.class_of("aligned", counts_as) == "aligned"
    assert source.class_of(UNDECIDED, counts_as) == UNDECIDED
    assert source.class_of("something-else", counts_as) == "not"


def test_an_auto_export_keeps_the_models_aligned_and_partial(project):
    counts_as = value_classes(project.label_scheme)
    assert [source.auto_class(v, counts_as) for v in ("partial", "not-aligned", "aligned", "other")] == [
        "partial", "not", "aligned", "not"]
    assert source.auto_class("partial", {}) == "partial"
    assert source.class_values(project, "auto") == {c: c for c in source.CLASS_NAMES}
    assert source.class_values(project, "gold")["not"] == "not-aligned"


def test_a_gold_export_of_a_scheme_without_classes_is_refused(users):
    likert = factories.make_project("Likert", scheme="likert-human-eval", rita="researcher")
    assert LabelScheme.objects.get(slug="likert-human-eval") == likert.label_scheme
    with pytest.raises(ExportError, match="gold export needs a categorical label scheme"):
        source.check_scheme(likert, "gold")
    source.check_scheme(likert, "auto")  # the model's labels need no classes


# --- issue 37: read per chunk of articles, written the same ------------------------------------------------

def _written(folder) -> dict[str, bytes]:
    """Every data file of an export folder (not its manifest and README, which carry its id and timings, nor
    the HF datasets' ``state.json``, whose ``_fingerprint`` is new at every save)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name not in ("manifest.json", "README.txt", "state.json") and p.suffix != ".zip"}


@pytest.fixture
def imported_and_labelled(auto_run, settings, tmp_path):
    """The newsela corpus (votes, gold, a run) and a wiki-manual file imported beside it (kept sentence ids,
    GLEU cells and row order: ``identity.py``)."""
    from annotation.services.corpus.importing import import_path

    from .test_round_trip_matrix import wiki_manual

    settings.IMPORT_DIR = tmp_path / "imports"
    import_path(auto_run["project"], wiki_manual(tmp_path), "auto")
    return auto_run


@pytest.mark.parametrize("kind", ["gold", "auto"])
def test_every_format_writes_the_same_bytes_whether_articles_are_read_one_or_many_at_a_time(
        imported_and_labelled, settings, tmp_path, monkeypatch, kind):
    """A chunk's rows (pairs, predictions bounded by the chunk's pair ids, the imports' kept identity) are read
    once for many articles: the files are the ones a chunk of one article gives, byte for byte."""
    from annotation.services import export

    from .helpers import run

    project = imported_and_labelled["project"]
    options = {"kind": kind, "formats": list(export.format_names())}
    if kind == "auto":
        options.update(runs=[imported_and_labelled["run"].pk], derived=False)
    written = {}
    for chunk in (1, source.ARTICLE_CHUNK):
        monkeypatch.setitem(source.PairSource.__init__.__kwdefaults__, "chunk", chunk)
        done, folder = run(project, settings, tmp_path / f"chunk-{chunk}", **options)
        written[chunk] = _written(folder)
        assert done.pair_count > 0
    assert written[1].keys() == written[source.ARTICLE_CHUNK].keys() and len(written[1]) >= 5
    for name, data in written[1].items():
        assert data == written[source.ARTICLE_CHUNK][name], name


def test_the_imports_kept_identity_is_read_per_chunk_not_per_article_and_format(imported_and_labelled, settings,
                                                                                tmp_path):
    """The tsv, articles and hf writers each read an article's kept ids and cells: two queries per article and
    format before issue 37, now two per chunk of articles, read by the source."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from .helpers import run

    project = imported_and_labelled["project"]
    assert project.articles.count() >= 4
    with CaptureQueriesContext(connection) as queries:
        run(project, settings, tmp_path, kind="gold", formats=["tsv", "articles", "hf"])
    kept = [q["sql"] for q in queries.captured_queries if "wiki_manual_ids" in q["sql"]]
    assert len(kept) == 1, kept  # one chunk of articles


def test_the_kept_identity_of_a_chunk_equals_the_one_an_article_reads_itself(imported_and_labelled):
    from dataclasses import replace

    from annotation.services.export.identity import source_identity
    from annotation.services.export.options import ExportOptions

    reader = source.PairSource(imported_and_labelled["project"], ExportOptions.parse({"kind": "gold"}),
                               planned={a: "train" for a in imported_and_labelled["project"].articles.values_list("pk", flat=True)})
    batches = list(reader.batches())
    kept = [source_identity(b) for b in batches]
    assert any(k.ids and k.gleu and k.order for k in kept)  # the wiki-manual articles kept theirs
    assert kept == [source_identity(replace(b, kept=None)) for b in batches]


def test_articles_without_anything_that_gives_gold_are_exported_without_reading_them(imported_and_labelled, settings,
                                                                                      tmp_path, monkeypatch):
    """Issue 37: a gold export asks per chunk whether anything could give its articles gold (a label, a stored
    value, a completion, an import's meaning) and reads nothing more for a chunk without; the files are the
    ones a full reading writes — an article completed without a label still has its complete document pair
    written, every sentence pair not aligned — and every article counts as exported."""
    from django.contrib.auth import get_user_model

    from annotation.models import ArticleCompletion
    from annotation.services import export

    from .helpers import run

    project = imported_and_labelled["project"]
    factories.make_article(project, "Nothing here", {"0": [["A lone sentence."]], "1": [["Alone."]]})
    completed = factories.make_article(project, "Completed", {"0": [["Owls hoot.", "Owls fly."]], "1": [["Owls hoot."]]})
    c_doc, s_doc = completed.documents.order_by("rank")
    ArticleCompletion.objects.create(article=completed, complex_document=c_doc, simple_document=s_doc,
                                     annotator=get_user_model().objects.get(username="anna"))
    options = {"kind": "gold", "formats": list(export.format_names())}
    monkeypatch.setitem(source.PairSource.__init__.__kwdefaults__, "chunk", 1)
    asked = []
    checked = source.PairSource._may_have_gold
    monkeypatch.setattr(source.PairSource, "_may_have_gold", lambda self, ids: asked.append(ids) or checked(self, ids))
    done, skipping = run(project, settings, tmp_path / "skipping", **options)
    assert [completed.pk] in asked and not checked(source.PairSource(project, export.ExportOptions.parse(options)),
                                                   [project.articles.get(title="Nothing here").pk])
    monkeypatch.setattr(source.PairSource, "_may_have_gold", lambda self, ids: True)
    again, reading_all = run(project, settings, tmp_path / "reading-all", **options)
    assert _written(skipping) == _written(reading_all)
    assert "Owls fly." in (skipping / "articles" / "train.jsonl").read_text() + (skipping / "articles" / "test.jsonl").read_text()
    counted = done.manifest["counts"]["splits"]
    assert sum(s["articles"] for s in counted.values()) == project.articles.count() == sum(
        s["articles"] for s in again.manifest["counts"]["splits"].values())


@pytest.mark.parametrize("policy", ["majority-or-single", "majority", "stored"])
def test_the_exports_one_policy_reads_each_pair_as_the_every_policy_reading_does(imported_and_labelled, policy):
    """Issue 37: an export reads its one gold policy without building every policy's answer per pair; its records
    (label, provenance, reviewer, class) and its left-out counts by reason are the ones the reading of every
    policy (the preview's) gives for that policy."""
    from annotation.models import ArticleCompletion, Label
    from annotation.services.export.options import LABEL_POLICIES, ExportOptions

    project = imported_and_labelled["project"]
    label = Label.objects.filter(pair__article__project=project).first()
    ArticleCompletion.objects.create(article=label.pair.article, complex_document=label.pair.complex_document,
                                     simple_document=label.pair.simple_document, annotator=label.annotator)
    options = ExportOptions.parse({"kind": "gold", "label_policy": policy})
    planned = {a: "train" for a in project.articles.values_list("pk", flat=True)}

    def read(**kwargs):
        reader = source.PairSource(project, options, planned=planned, **kwargs)
        records = [(r.pair_id, r.label, r.provenance, r.reviewer, r.counts_as, r.stored_gold)
                   for b in reader.batches() for r in b.records if r.provenance != source.LEFT_OUT]  # what it writes
        return records, reader.left_out

    one, every = read(), read(policies=tuple(LABEL_POLICIES))
    assert one[0] and one == every
