"""Pseudonymous exports name nobody (issue 30 item 7): with ``annotator_names`` off, no file of any
format, under any label policy, holds an annotator's or reviewer's user name — not in votes, not in
the reviewer field and not in adjudication notes (the curation's own, an older one that still names
people, or one a reviewer typed). With names on, the names are there."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.models import Adjudication
from annotation.services.editing import article_alignment as aa
from annotation.services.editing import curation
from annotation.services.export.options import LABEL_POLICIES
from annotation.services.projects.pseudonyms import pseudonym, scrub_names
from tests import factories
from tests.annotation.services.export.helpers import run

NAMES = ("quillonby", "mirabeaux", "thessalyn")  # two annotators and the reviewer: words no export holds otherwise


@pytest.fixture
def curated(db):
    a, b, reviewer = (factories.make_user(n, researcher=(n == "thessalyn")) for n in NAMES)
    project = factories.make_project("Pseudonyms", quillonby="annotator", mirabeaux="annotator", thessalyn="researcher")
    project.config = {"qc": {"min_seconds": 0, "test_every": 0}}
    project.save()
    article = factories.make_article(project, "Flood", {"adv": [["The river flooded the town.", "Residents left."]],
                                                        "int": [["The river flooded.", "People left."]]})
    docs = aa.resolve_documents(article, None, None)
    aa.save_links(a, article, *docs, None, [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1}])
    aa.save_links(b, article, *docs, None, [{"complex": 0, "simple": 0}, {"complex": 1, "simple": 1, "label": "partial"}])
    curation.decide_links(article, *docs, a, b, [{"complex": 0, "simple": 0, "decision": "a"},
                                                 {"complex": 1, "simple": 1, "decision": "b"}], reviewer,
                          note="asked mirabeaux, who agreed")
    # a note stored before curation wrote pseudonyms
    Adjudication.objects.filter(note__contains="accepted B").update(
        note="curation of quillonby (A) and mirabeaux (B): accepted B (mirabeaux)")
    return project, (a, b, reviewer)


def exported_text(root: Path) -> dict[str, str]:
    """Every exported file as text (parquet and arrow read back as their rows)."""
    import pyarrow.parquet as pq

    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            out[str(path)] = json.dumps(pq.read_table(path).to_pylist(), default=str)
        elif path.suffix == ".arrow":
            import pyarrow as pa

            with pa.memory_map(str(path)) as source:
                out[str(path)] = json.dumps(pa.ipc.open_stream(source).read_all().to_pylist(), default=str)
        else:
            out[str(path)] = path.read_bytes().decode("utf-8", "replace")
    return out


@pytest.mark.parametrize("policy", LABEL_POLICIES)
def test_a_pseudonymous_export_of_every_format_names_nobody(curated, settings, tmp_path, policy):
    project, people = curated
    _, root = run(project, settings, tmp_path, label_policy=policy)
    files = exported_text(root)
    assert {Path(f).parent.name for f in files} >= {"jsonl", "hf", "parquet"}
    leaks = [(Path(f).relative_to(root), name) for f, text in files.items() for name in NAMES if name in text]
    assert leaks == []
    everything = "".join(files.values())
    assert pseudonym(people[0].pk) in everything and pseudonym(people[2].pk) in everything


def test_the_curation_note_names_annotators_by_their_export_pseudonyms(curated):
    project, (a, b, _) = curated
    notes = set(Adjudication.objects.filter(pair__article__project=project).values_list("note", flat=True))
    assert f"curation of {pseudonym(a.pk)} (A) and {pseudonym(b.pk)} (B): accepted A ({pseudonym(a.pk)}). " \
           "asked mirabeaux, who agreed" in notes


def test_with_names_asked_for_the_export_keeps_them(curated, settings, tmp_path):
    project, _ = curated
    _, root = run(project, settings, tmp_path, annotator_names=True, formats=["jsonl"])
    text = "".join(exported_text(root).values())
    assert all(name in text for name in NAMES)


def test_scrubbing_replaces_whole_user_names_only():
    ids = {"ann": 3, "ann.b": 4}
    assert scrub_names("ann, ann.b and anna; ann.", ids) == "a3, a4 and anna; a3."
