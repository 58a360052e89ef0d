"""The example notebook and every ``python`` block of the READMEs' client parts, run against a live
server and a real worker (issue 28: what a researcher copies must work)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.contrib.auth.models import Group

from annotation.models import CandidatePair
from annotation.permissions import RESEARCHERS_GROUP
from tests import factories

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "client" / "examples" / "notebook.py"
DEMO = ROOT / "annotation" / "fixtures" / "demo_corpus"
URL = "http://127.0.0.1:8000"


def python_blocks(path: Path, section: str | None = None) -> str:
    """The ``python`` code blocks of a Markdown file (of one ``## section`` of it), in order."""
    text = path.read_text(encoding="utf-8")
    if section is not None:
        text = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return "\n".join(re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL))


@pytest.mark.services  # about 15 s with its worker: under the ~30 s the issue allows without the slow marker
def test_the_example_notebook_runs_on_a_project_of_more_than_500_pairs(server, tmp_path):
    url, token, log = server
    env = {**os.environ, "ALIGNAPP_URL": url, "ALIGNAPP_TOKEN": token, "ALIGNAPP_WORK": str(tmp_path / "work")}
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(NOTEBOOK)], capture_output=True, text=True, env=env, timeout=120,
                          cwd=str(tmp_path))
    out = done.stdout
    assert done.returncode == 0, out + done.stderr + log.read_text(errors="replace")[-3000:]
    assert "13 articles, 26 documents, 1040 sentences, 520 pairs (jsonl)" in out, out
    assert CandidatePair.objects.count() > 500 and f"{CandidatePair.objects.count()} pairs; predicted" in out, out
    assert re.search(r"task1 \{'precision': 1\.0, 'recall': 0\.\d+, 'f1': 0\.\d+\} over 13 articles", out), out
    assert "task2 {'precision'" in out and "520 gold pairs: DatasetDict" in out, out
    assert "run #" in done.stderr and "100%" in done.stderr  # the progress bar of wait()
    assert len(list((tmp_path / "work" / "exports").glob("export-*.zip"))) == 1
    print(f"notebook: {time.monotonic() - started:.1f} s\n{out}")


@pytest.mark.services
@pytest.mark.parametrize("readme, section", [("client/README.md", None), ("README.md", "Python client (notebooks and scripts)")])
def test_the_readme_examples_run(server, tmp_path, monkeypatch, readme, section):
    url, token, log = server
    user = factories.make_user("researcher")
    user.set_password("researcher")
    user.save()
    user.groups.add(Group.objects.get_or_create(name=RESEARCHERS_GROUP)[0])
    shutil.copytree(DEMO, tmp_path / "articles")
    monkeypatch.chdir(tmp_path)
    code = python_blocks(ROOT / readme, section)
    assert URL in code and "import_file" in code
    exec(compile(code.replace(URL, url), readme, "exec"), {"__name__": "readme"})  # noqa: S102 - the README's own code
    assert len(list((tmp_path / "exports").glob("export-*.zip"))) == 1
