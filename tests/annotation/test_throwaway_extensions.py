"""Adding an alignment method, a scoring kind, a label-scheme kind, an import format and an export format is
one new file each (issue 38, deliverable 3; README "How to add ..."): a throwaway of each is written as its own
module under ``tmp_path``, put on ``sys.path`` and imported — nothing else in the app changes — and the five
work end to end through the API: a project with the new scheme kind, an upload in the new import format, a run
with the new method, a scoring job of the new kind, labels given through the API, an export in the new format.
Each is removed afterwards and is then unknown everywhere again."""
from __future__ import annotations

import importlib
import json
import sys
import textwrap

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation import label_schemes
from annotation.models import AlignmentRun, CandidatePair, Job, Status
from annotation.services import export
from annotation.services.alignment.alignment_runs import execute_run
from annotation.services.background import registry as background_registry
from annotation.services.corpus.importing import formats as import_formats
from annotation.services.export import formats as export_formats
from annotation.services.export import run_export_job
from annotation.services.scoring import kinds as scoring_kinds
from annotation.services.scoring.jobs import run_scoring_job
from workers.engine import available_methods, methods

pytestmark = pytest.mark.django_db

MODULES = {
    "throwaway_method": '''
        """``diagonal``: sentence i of the complex side ↔ sentence i of the simple side."""
        from workers.engine.methods import register
        from workers.engine.options import Option
        from workers.engine.types import AlignedPair, Alignment

        PARAMS = (Option("score", "float", 0.9, min=0.0, max=1.0, help="the score of every link"),)


        @register("diagonal")
        class DiagonalAligner:
            name = "diagonal"

            def __init__(self, config=None, model=None):
                self.score = float((config or {}).get("score", 0.9))

            def align(self, pairs, progress=None):
                return [Alignment(p.id, [AlignedPair((i,), (i,), "aligned", self.score)
                                         for i in range(min(len(p.complex.sentences), len(p.simple.sentences)))])
                        for p in pairs]
    ''',
    "throwaway_scoring": '''
        """``length-ratio``: the simple side's length over the complex side's, as ``lr_ratio``."""
        from annotation.services.scoring import common
        from annotation.services.scoring.kinds import ScoringKind, register
        from workers.engine import Option


        def run(job, report):
            scale = float(job.params.get("scale", 1.0))
            n = common.score_each(job, report, lambda texts: [{"lr_ratio": scale * len(s) / max(1, len(c))}
                                                              for c, s in texts], "lr_")
            return {"pairs": n}


        register(ScoringKind("length-ratio", "Simple/complex length ratio of every pair.", run, task="length_ratio",
                             prefix="lr_", options=(Option("scale", "float", 1.0, min=0.0, max=10.0, help="factor"),)))
    ''',
    "throwaway_scheme": '''
        """``thumbs``: one value per pair, like categorical, but ``meh`` is never a vote."""
        from annotation.label_schemes import InvalidValue, register
        from annotation.label_schemes.classes import Categorical


        @register
        class Thumbs(Categorical):
            name = "thumbs"
            label = "thumbs"

            def validate(self, scheme, value, ratings):
                if value == "meh":
                    raise InvalidValue("value: 'meh' is no thumb")
                return super().validate(scheme, value, ratings)
    ''',
    "throwaway_import": '''
        """``bars``: one article per ``.bars`` file, ``complex | simple`` per line."""
        from annotation.services.corpus.importing.base import ParsedArticle, ParsedDocument
        from annotation.services.corpus.importing.formats import register


        @register("bars", extensions=("bars",), help="complex | simple per line", example=(("x.bars", "A. | a.\\n"),))
        def parse(files, ctx):
            for f in files:
                rows = [line.split("|") for _, line in ctx.lines(f) if line.strip()]
                yield ParsedArticle(title=f.stem, file=f.name, line=None, documents=[
                    ParsedDocument(level="complex", rank=0, paragraphs=[[c.strip() for c, _ in rows]]),
                    ParsedDocument(level="simple", rank=1, paragraphs=[[s.strip() for _, s in rows]])])
    ''',
    "throwaway_export": '''
        """``pairs-csv``: pair id, label and texts, comma-separated."""
        from annotation.services.export.formats import register
        from annotation.services.export.formats.base import Writer


        @register("pairs-csv", label="pairs as CSV", order=99, readme="pairs-csv/*.csv      pair id, label, texts")
        class PairsCsv(Writer):
            folder = "pairs-csv"

            def write(self, batch, records):
                self._file(f"{batch.split}.csv").writelines(
                    f"{r.pair_id},{r.label},{' '.join(r.complex_sentences)},{' '.join(r.simple_sentences)}\\n"
                    for r in records)
    ''',
}


@pytest.fixture
def throwaways(tmp_path, monkeypatch, settings):
    """The five modules written under ``tmp_path`` and imported (each registers itself), then removed."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    folder = tmp_path / "plugins"
    folder.mkdir()
    for name, source in MODULES.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(folder))
    for name in MODULES:
        importlib.import_module(name)
    yield
    methods.unregister("diagonal")
    scoring_kinds.unregister("length-ratio")
    label_schemes.unregister("thumbs")
    import_formats.unregister("bars")
    export_formats.unregister("pairs-csv")
    for name in MODULES:
        sys.modules.pop(name, None)


def test_a_new_file_of_each_works_end_to_end_through_the_api(throwaways, api, users,
                                                             django_capture_on_commit_callbacks):
    admin, rita, anna = api(users["admin"]), api(users["rita"]), api(users["anna"])
    # a label scheme of the new kind, and a project labelled with it
    thumbs = [{"value": "up", "name": "Up", "key": "1", "counts_as": "aligned"},
              {"value": "meh", "name": "Meh", "key": "2", "counts_as": "partial"},
              {"value": "down", "name": "Down", "key": "3", "counts_as": "not"}]
    response = admin.post("/api/label-schemes/", {"slug": "thumbs", "name": "Thumbs", "kind": "thumbs",
                                                  "values": thumbs}, format="json")
    assert response.status_code == 201, response.content
    response = rita.post("/api/projects/", {"name": "Plugins", "language": "en", "label_scheme": "thumbs",
                                            "config": {"qc": {"min_seconds": 0, "test_every": 0}}}, format="json")
    assert response.status_code == 201, response.content
    pid = response.json()["id"]
    response = rita.post(f"/api/projects/{pid}/members/", {"username": "anna", "role": "annotator"}, format="json")
    assert response.status_code == 201, response.content

    # an upload in the new import format
    upload = SimpleUploadedFile("Tale.bars",
                                b"The cat sat on the mat. | A cat sat.\nIt was very happy. | It was glad.\n")
    response = rita.post(f"/api/projects/{pid}/import/", {"files": [upload], "format": "bars"}, format="multipart")
    assert response.status_code == 201, response.content
    assert (response.json()["format"], response.json()["articles"], response.json()["sentences"]) == ("bars", 1, 4)

    # a run with the new method, its option checked by the method's own schema
    refused = rita.post("/api/runs/", {"project": pid, "method": "diagonal", "params": {"score": 2}}, format="json")
    assert refused.status_code == 400 and refused.json()["params"] == {"score": "must be <= 1, got 2"}
    response = rita.post("/api/runs/", {"project": pid, "method": "diagonal", "params": {"score": 0.8},
                                        "level_pairs": [["complex", "simple"]]}, format="json")
    assert response.status_code == 201, response.content
    execute_run(response.json()["id"])
    run = AlignmentRun.objects.get(pk=response.json()["id"])
    assert run.status == Status.SUCCEEDED, run.error
    pairs = list(CandidatePair.objects.filter(article__project_id=pid).order_by("complex_key"))
    assert [(p.complex_key, p.simple_key) for p in pairs] == [("0", "0"), ("1", "1")]

    # a scoring job of the new kind, its options from its declaration
    refused = rita.post(f"/api/projects/{pid}/score/", {"kind": "length-ratio", "scale": 11}, format="json")
    assert refused.status_code == 400 and refused.json()["params"] == {"scale": "must be <= 10, got 11"}
    response = rita.post(f"/api/projects/{pid}/score/", {"kind": "length-ratio", "scale": 2}, format="json")
    assert response.status_code == 202, response.content
    run_scoring_job(response.json()["id"])
    job = Job.objects.get(pk=response.json()["id"])
    assert job.status == Status.SUCCEEDED and job.result == {"pairs": 2}, job.error
    ratios = [p.features["lr_ratio"] for p in CandidatePair.objects.filter(pk__in=[p.pk for p in pairs]).order_by("pk")]
    assert ratios == pytest.approx([2 * len("A cat sat.") / len("The cat sat on the mat."),
                                    2 * len("It was glad.") / len("It was very happy.")])

    # labels through the queue API, checked by the new kind, the pages told its values
    wanted = {pairs[0].pk: "up", pairs[1].pk: "down"}
    with django_capture_on_commit_callbacks(execute=True):
        for _ in pairs:
            served = anna.get(f"/api/projects/{pid}/queue/next/").json()
            assert served["scheme"]["kind"] == "thumbs"
            assert [v["value"] for v in served["scheme"]["values"]] == ["up", "meh", "down"]
            pair = served["item"]["pair"]
            refused = anna.post(f"/api/projects/{pid}/queue/submit/", {"pair": pair, "value": "meh"}, format="json")
            assert refused.status_code == 400 and "'meh' is no thumb" in json.dumps(refused.json())
            response = anna.post(f"/api/projects/{pid}/queue/submit/", {"pair": pair, "value": wanted[pair]},
                                 format="json")
            assert response.status_code in (200, 201), response.content

    # an export in the new format
    response = rita.post(f"/api/projects/{pid}/exports/", {"formats": ["pairs-csv"]}, format="json")
    assert response.status_code == 202, response.content
    run_export_job(response.json()["job"])
    root = export.export_dir(export.Export.objects.get(pk=response.json()["id"]))
    rows = sorted(line for path in (root / "pairs-csv").glob("*.csv") for line in path.read_text().splitlines())
    assert rows == sorted([f"{pairs[0].pk},up,The cat sat on the mat.,A cat sat.",
                           f"{pairs[1].pk},down,It was very happy.,It was glad."])
    assert "pairs-csv/*.csv      pair id, label, texts" in (root / "README.txt").read_text()


def test_once_removed_each_is_unknown_again(throwaways, api, users, project):
    assert "diagonal" in available_methods() and "length-ratio" in scoring_kinds.names()
    assert "length-ratio" in {kind for kind, _ in background_registry.jobs()}  # its job kind came with it
    methods.unregister("diagonal")
    scoring_kinds.unregister("length-ratio")
    label_schemes.unregister("thumbs")
    import_formats.unregister("bars")
    export_formats.unregister("pairs-csv")
    rita = api(users["rita"])
    refused = api(users["admin"]).post("/api/label-schemes/", {"slug": "thumbs", "name": "Thumbs", "kind": "thumbs",
                                                               "values": [{"value": "up", "name": "Up"}]},
                                       format="json")
    assert refused.status_code == 400 and "kind" in refused.json()
    upload = SimpleUploadedFile("Tale.bars", b"A. | a.\n")
    refused = rita.post(f"/api/projects/{project.pk}/import/", {"files": [upload], "format": "bars"},
                        format="multipart")
    assert refused.status_code == 400 and "bars" in json.dumps(refused.json())
    refused = rita.post("/api/runs/", {"project": project.pk, "method": "diagonal"}, format="json")
    assert refused.status_code == 400 and "diagonal" in json.dumps(refused.json())
    refused = rita.post(f"/api/projects/{project.pk}/score/", {"kind": "length-ratio"}, format="json")
    assert refused.status_code == 400 and refused.json()["code"] == "unknown_scoring_kind"
    refused = rita.post(f"/api/projects/{project.pk}/exports/", {"formats": ["pairs-csv"]}, format="json")
    assert refused.status_code == 400 and "pairs-csv" in json.dumps(refused.json())
    assert "length-ratio" not in {kind for kind, _ in background_registry.jobs()}
