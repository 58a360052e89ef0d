"""Import benchmark (not a test): time and peak memory of importing a generated engine-JSONL corpus, and
how labelling fares on SQLite while the import runs (issue: hardening item 3).

    .venv/bin/python bench/import_bench.py [--lines 200000] [--sentences 3] [--labeller]
    .venv/bin/python bench/import_bench.py --huge-line 50   # one 50 MB {"text": ...} line (issue 19 item 5)

Each run uses a fresh SQLite database under ``var/bench/`` (WAL, busy timeout and IMMEDIATE
transactions from ``alignapp/settings.py``), migrated once and copied for every size. The corpus is one
article per line (a complex document of ``--sentences`` sentences in two paragraphs, a simple one of
two sentences, one gold link). Each import runs in a fresh child process so its peak RSS
(``ru_maxrss``) is its own; the import is ``import_path`` (the same service the upload page, the API,
the background job and ``manage.py import_corpus`` use). With ``--labeller`` a second thread (its own
database connection) changes one label every 50 ms through ``services.review.labelling.submit_label``
while the import runs, and counts the submits that failed with "database is locked" and the slowest
one. Prints one JSON object on stdout (progress on stderr).

``--layouts [--scale S] [--only WORDS]`` imports, for each layout (Newsela zip, wiki-manual TSV, HF
parquet, HF Arrow, JSONL), an input at the limits and the outside probe's hostile inputs (issue 30: a
metadata naming one text 400 times, a TSV of 37 x the article limit, 2.5 MB strings in a 1 KB zstd
parquet/Arrow file), each in a fresh child process, and prints each one's time, peak RSS and result
(``bench/import_layouts.py`` builds them; the limits are lowered so a run takes minutes, ``--scale``
multiplies them).

``--huge-line MB`` imports a file holding one document line of ``MB`` megabytes instead (with
``MAX_UPLOAD_BYTES`` raised past it, so the per-line limits are what answer): it should be refused
at once (``IMPORT_MAX_LINE_BYTES``) with a peak RSS near the process's start-up size.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / "var" / "bench" / "import"
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "alignapp.settings")

WORDS = ("the city council voted on tuesday to approve a new budget which includes funding for schools roads "
         "parks and libraries scientists say bees communicate where flowers are by dancing in the hive while "
         "owls hunt at night and hear very well people live in many places around world").split()


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))).capitalize() + "."


def generate(path: Path, lines: int, sentences: int) -> int:
    """Write ``lines`` JSONL records; returns the file's size in bytes."""
    rng = random.Random(lines)
    half = max(1, sentences // 2)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(lines):
            complex_sents = [sentence(rng) for _ in range(sentences)]
            record = {"id": f"article-{i}",
                      "complex": {"paragraphs": [complex_sents[:half], complex_sents[half:]] if sentences > 1
                                  else [complex_sents]},
                      "simple": {"paragraphs": [[sentence(rng), sentence(rng)]]},
                      "gold": [[0, 0]]}
            fh.write(json.dumps(record) + "\n")
    return path.stat().st_size


def generate_huge_line(path: Path, megabytes: int) -> int:
    """One ordinary record, then one record whose complex side is a ``megabytes`` MB text."""
    chunk = b"The council met again. Owls hunt at night. " * 1000
    with path.open("wb") as out:
        out.write(b'{"id": "small", "complex": {"paragraphs": [["A sentence."]]}, "simple": {"paragraphs": [["One."]]}}\n')
        out.write(b'{"id": "huge", "complex": {"text": "')
        for _ in range(megabytes * 1024 * 1024 // len(chunk)):
            out.write(chunk)
        out.write(b'"}, "simple": {"paragraphs": [["Short."]]}}\n')
    return path.stat().st_size


def template_db() -> Path:
    """A migrated SQLite database with a label scheme, copied for each run."""
    path = BENCH_DIR / "template.sqlite3"
    if not path.exists():
        log("migrating the template database…")
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{path}"}
        subprocess.run([sys.executable, str(ROOT / "manage.py"), "migrate", "-v", "0"], check=True, env=env, cwd=ROOT)
    return path


def setup(db: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    import django

    django.setup()


def labeller_fixture() -> tuple[int, list[int]]:
    """An annotator and a few pairs of a small project to relabel during the import."""
    from django.contrib.auth import get_user_model

    from annotation.models import CandidatePair, LabelScheme, Project
    from annotation.services.corpus.importing import import_files

    scheme = LabelScheme.objects.get(slug="aligned-partial-not")
    project = Project.objects.create(name="labelling", label_scheme=scheme)
    lines = "".join(json.dumps({"id": f"l{i}", "complex": {"paragraphs": [["A cat sat."]]},
                                "simple": {"paragraphs": [["A cat."]]}, "gold": [[0, 0]]}) + "\n" for i in range(20))
    import_files(project, [("labelling.jsonl", lines.encode())], "jsonl")
    user = get_user_model().objects.create_user("bench-annotator")
    pairs = list(CandidatePair.objects.filter(article__project=project).values_list("pk", flat=True))
    return user.pk, pairs


class Labeller(threading.Thread):
    """Changes a label every ``every`` seconds until stopped; counts lock errors and the slowest submit."""

    def __init__(self, user_id: int, pair_ids: list[int], every: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.user_id, self.pair_ids, self.every = user_id, pair_ids, every
        self.stop = threading.Event()
        self.ok = self.locked = self.other = 0
        self.slowest = 0.0
        self.errors: list[str] = []

    def run(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db import OperationalError, connection

        from annotation.models import CandidatePair
        from annotation.services.review import annotator, labelling
        from annotation.services.review.label_input import LabelInput

        user = get_user_model().objects.get(pk=self.user_id)
        pairs = list(CandidatePair.objects.filter(pk__in=self.pair_ids).select_related("article__project"))
        n = 0
        try:
            while not self.stop.is_set():
                pair = pairs[n % len(pairs)]
                value = ("aligned", "not-aligned")[(n // len(pairs)) % 2]
                started = time.monotonic()
                try:
                    project = pair.article.project
                    labelling.submit_label(annotator.of(user, project), pair, LabelInput.parse(
                        project.label_scheme, value=value, seconds=3.0, change=True), labelling.ARTICLE)
                    self.ok += 1
                except OperationalError as exc:
                    if "locked" in str(exc):
                        self.locked += 1
                    else:
                        self.other += 1
                        self.errors.append(str(exc))
                self.slowest = max(self.slowest, time.monotonic() - started)
                n += 1
                time.sleep(self.every)
        finally:
            connection.close()


def peak_rss_kb() -> int:
    """This process's peak resident memory in KB: ``VmHWM`` (the high-water mark of its own memory,
    which starts afresh at exec), else ``ru_maxrss`` (which Linux carries over from the parent's peak)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def web_path(corpus: Path) -> dict:
    """What an upload of ``corpus`` (one file) does in the web process (``uploads.receive``): refused at
    once by its metadata (413), queued as a background job, or imported in the request (then the
    import's time and peak below are the web process's); and how long deciding took."""
    from annotation.services.corpus.importing import uploads
    from annotation.services.corpus.importing.problems import CorpusImportError

    if not corpus.is_file():
        return {}
    upload = uploads.StagedUpload(corpus.parent, (corpus.name,), corpus.stat().st_size)
    started = time.monotonic()
    try:
        getattr(uploads, "precheck", lambda u: None)(upload)
        where = "background job" if uploads.runs_in_background(upload) else "in the web request"
    except CorpusImportError as exc:
        where = f"{exc.status} at once: {str(exc)[:160]}"
    return {"web": where, "web_decision_s": round(time.monotonic() - started, 3)}


def import_once(db: Path, corpus: Path, labeller: bool, fmt: str = "jsonl") -> dict:
    """Run in a child process: one import; its time, peak RSS and (optionally) the labeller's counts."""
    setup(db)
    from annotation.models import LabelScheme, Project
    from annotation.services.corpus.importing import import_path

    project = Project.objects.create(name="bench", label_scheme=LabelScheme.objects.get(slug="aligned-partial-not"))
    worker = None
    if labeller:
        worker = Labeller(*labeller_fixture())
        worker.start()
        time.sleep(0.5)
    web = web_path(corpus)
    rss_before = peak_rss_kb()
    started = time.monotonic()
    error = ""
    try:
        result = import_path(project, corpus, fmt)
        summary = result.describe()
    except Exception as exc:  # noqa: BLE001 - reported in the JSON
        summary, error = "", f"{type(exc).__name__}: {str(exc)[:300]}"
    seconds = time.monotonic() - started
    out = {"seconds": round(seconds, 1), "peak_rss_mb": round(peak_rss_kb() / 1024, 1),
           "rss_before_mb": round(rss_before / 1024, 1), "result": summary, **web}
    if error:
        out["error"] = error
    if worker is not None:
        time.sleep(0.5)
        worker.stop.set()
        worker.join()
        out["labelling"] = {"submits_ok": worker.ok, "database_is_locked": worker.locked, "other_errors": worker.other,
                            "slowest_submit_s": round(worker.slowest, 2), "first_errors": worker.errors[:3]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[200_000])
    parser.add_argument("--sentences", type=int, default=3, help="complex sentences per record")
    parser.add_argument("--labeller", action="store_true", help="relabel pairs in another thread during the import")
    parser.add_argument("--keep", action="store_true", help="keep the generated corpora and databases")
    parser.add_argument("--huge-line", type=int, metavar="MB", help="import one document line of MB megabytes instead")
    parser.add_argument("--layouts", action="store_true", help="each layout at the limits and the probe's hostile inputs")
    parser.add_argument("--scale", type=float, default=1.0, help="--layouts: multiply the limits and inputs")
    parser.add_argument("--only", nargs="+", default=(), help="--layouts: the cases whose name holds one of these")
    parser.add_argument("--timeout", type=float, help="--layouts: stop a case's import after this many seconds")
    parser.add_argument("--fmt", default="jsonl", help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(import_once(Path(args.child[0]), Path(args.child[1]), args.labeller, args.fmt)))
        return
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    template = template_db()
    if args.layouts:
        layouts(template, args.scale, args.only, args.keep, args.timeout)
        return
    results = []
    env = dict(os.environ)
    if args.huge_line:
        args.lines = [2]
        env["MAX_UPLOAD_BYTES"] = str(max(int(env.get("MAX_UPLOAD_BYTES", 0) or 0), (args.huge_line + 10) * 1024 * 1024))
        env["IMPORT_MAX_BYTES"] = str(max(int(env.get("IMPORT_MAX_BYTES", 0) or 0), (args.huge_line + 10) * 4 * 1024 * 1024))
    for lines in args.lines:
        corpus = BENCH_DIR / (f"huge-line-{args.huge_line}mb.jsonl" if args.huge_line else f"corpus-{lines}.jsonl")
        if corpus.exists():
            size = corpus.stat().st_size
        else:
            size = generate_huge_line(corpus, args.huge_line) if args.huge_line else generate(corpus, lines, args.sentences)
        db = BENCH_DIR / f"run-{lines}.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        shutil.copy(template, db)
        log(f"importing {lines} lines ({size / 1e6:.1f} MB)…")
        cmd = [sys.executable, __file__, "--child", str(db), str(corpus)] + (["--labeller"] if args.labeller else [])
        child = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
        if child.returncode:
            log(child.stderr[-3000:])
            results.append({"lines": lines, "error": f"child exited {child.returncode}"})
        else:
            results.append({"lines": lines, "bytes": size, **({"huge_line_mb": args.huge_line} if args.huge_line else {}),
                            **json.loads(child.stdout.strip().splitlines()[-1])})
        log(json.dumps(results[-1]))
        if not args.keep:
            for path in (corpus, db, Path(f"{db}-wal"), Path(f"{db}-shm")):
                path.unlink(missing_ok=True)
    print(json.dumps({"benchmark": "import", "database": "sqlite", "cpus": os.cpu_count(), "runs": results}, indent=2))


def layouts(template: Path, scale: float, only: list[str], keep: bool, timeout: float | None = None) -> None:
    """Each layout's cases (``import_layouts.cases``), one child process each: time, peak RSS, result."""
    import import_layouts

    results = []
    for name, fmt, build, limits in import_layouts.cases(scale):
        if only and not any(word in name for word in only):
            continue
        folder = BENCH_DIR / "layouts"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        corpus = build(folder)
        db = BENCH_DIR / "layouts.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        shutil.copy(template, db)
        log(f"{name}: importing {import_layouts.describe(corpus):,} bytes…")
        row = {"case": name, "format": fmt, "input_bytes": import_layouts.describe(corpus), "limits": limits}
        try:
            child = subprocess.run([sys.executable, __file__, "--child", str(db), str(corpus), "--fmt", fmt],
                                   capture_output=True, text=True, cwd=ROOT, env={**os.environ, **limits}, timeout=timeout)
        except subprocess.TimeoutExpired:
            row["error"] = f"still importing after {timeout} s (stopped)"
            child = None
        if child is None:
            pass
        elif child.returncode:
            log(child.stderr[-3000:])
            row["error"] = f"child exited {child.returncode}"
        else:
            row.update(json.loads(child.stdout.strip().splitlines()[-1]))
        results.append(row)
        log(json.dumps(row))
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps({"benchmark": "import layouts", "database": "sqlite", "cpus": os.cpu_count(), "scale": scale,
                      "runs": results}, indent=2))


if __name__ == "__main__":
    main()
