"""The three walks of issue 38, counted for real: a label to an export, a training option from the form to the
trainer, an upload to the writer. Prints JSON.

Each walk is a few *segments*, each one real request or task body run in this process on a throwaway SQLite
project (no worker: a task the request queues is captured at ``Celery.send_task`` and its body run here):

- **label → export**: ``POST /api/labels/`` up to the ``Label`` row's write; ``POST /api/projects/<p>/exports/``
  up to the task's send; the export task's body up to the format's ``Writer.write``;
- **training option → trainer**: ``POST /api/projects/<p>/train/`` (what the Models form posts) up to the
  send; the training task's body up to ``workers.engine.train_aligner`` (stopped at its entry: nothing trains);
- **upload → writer**: ``POST /api/projects/<p>/import/`` of a small JSONL file (imported at once) up to the
  first ``Article`` row's write.

``sys.setprofile`` follows every call while a segment's entry (a view in ``annotation/views/``, or the task body
in ``workers/tasks.py``) runs. Product code is ``annotation/``, ``workers/`` and ``alignapp/`` (migrations left
out). The **chain** of a segment is the product frames on the stack when the writer is reached (the *spine*,
entry first) plus every product call made before it whose returned value is passed on into the chain: given as
an argument to a chain call, or returned through a chain call (found by object identity; ``None``, booleans and
numbers are not followed). Per walk: ``files`` — product files the chain enters; ``hops`` — calls on the chain;
``depth`` — the spine's length, summed over segments; ``returns`` — calls on the chain whose value the caller
passes on. ``--chains`` prints each segment's chain.

Run it on any tree with the same virtualenv, from that tree's root::

    .venv/bin/python bench/walks.py                                  # this tree
    git archive 536cb67 | tar -x -C /tmp/before
    (cd /tmp/before && /path/to/.venv/bin/python /path/to/bench/walks.py)  # the tree of issue 38's start
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

ROOT = Path.cwd().resolve()
PRODUCT = tuple(str(ROOT / d) + os.sep for d in ("annotation", "workers", "alignapp"))
NOT_PRODUCT = (str(ROOT / "annotation" / "migrations") + os.sep,)
UNFOLLOWED = (type(None), bool, int, float)
RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class StopWalk(BaseException):
    """Raised at the trainer's entry: the walk ends there (a BaseException, so no ``except Exception`` stops it)."""


COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")  # not a layer: what they build is followed


def product(code) -> bool:
    return (code.co_filename.startswith(PRODUCT) and not code.co_filename.startswith(NOT_PRODUCT)
            and code.co_name not in COMPREHENSIONS)


def _held(value) -> list:
    """``value`` and, one level down, what it holds (a dict's values, a sequence's items, an object's fields)."""
    held = [value]
    if isinstance(value, dict):
        held += list(value.values())
    elif isinstance(value, list | tuple | set | frozenset):
        held += list(value)
    elif hasattr(value, "__dataclass_fields__"):
        held += [getattr(value, name, None) for name in value.__dataclass_fields__]
    return [v for v in held if not isinstance(v, UNFOLLOWED)]


class Segment:
    """One traced request or task body, from its entry to the first call that ``reached(frame)`` accepts."""

    def __init__(self, name: str, entry: str, reached) -> None:
        self.name, self.entry, self.reached = name, str(ROOT / entry), reached
        self.nodes: list[dict] = []  # product calls: file, function, parent
        self.stack: list[int | None] = []  # per Python frame on the stack: its node (None: not product or not active)
        self.active = 0  # how many entry frames are on the stack
        self.holder: dict[int, int] = {}  # id(object) → the node that last returned it
        self.kept: list = []  # the returned objects, kept alive so that their ids stay theirs
        self.edges: set[tuple[int, int]] = set()  # (node whose value is passed on, node it goes into)
        self.spine: list[int] | None = None
        self.resumed: dict[int, tuple] = {}  # id(generator frame) → (frame, its node): each resumption is one call

    def profile(self, frame, event, arg) -> None:
        if event == "call":
            self._call(frame)
        elif event == "return" and self.stack:
            self._return(frame, arg)

    def _call(self, frame) -> None:
        filename = frame.f_code.co_filename
        if id(frame) in self.resumed:  # a generator resumed: the same call as before
            self.stack.append(self.resumed[id(frame)][1])
            return
        starts = self.spine is None and not self.active and filename.startswith(self.entry)
        node = None
        if starts or (self.active and self.spine is None and product(frame.f_code)):
            node = len(self.nodes)
            parent = next((n for n in reversed(self.stack) if n is not None), None) if self.active else None
            self.nodes.append({"file": str(Path(filename).relative_to(ROOT)), "function": frame.f_code.co_qualname,
                               "line": frame.f_code.co_firstlineno, "parent": parent})
            for value in frame.f_locals.values():  # at the call: its arguments
                for held in _held(value):
                    if id(held) in self.holder:
                        self.edges.add((self.holder[id(held)], node))
            self.active += starts
        if self.active and self.spine is None and self.reached(frame):
            self.spine = [n for n in self.stack if n is not None] + ([node] if node is not None else [])
            if node is None:  # the writer outside product code (a Django write, a stub): its caller is the last hop
                self.nodes.append({"file": "(writer)", "function": frame.f_code.co_qualname, "line": 0, "parent": None})
                self.spine.append(len(self.nodes) - 1)
        if starts:
            self.nodes[node]["entry"] = True
        if node is not None and frame.f_code.co_flags & RESUMABLE:  # kept (alive, so its id stays its own)
            self.resumed[id(frame)] = (frame, node)
        self.stack.append(node)

    def _return(self, frame, value) -> None:
        node = self.stack.pop()
        if node is None:
            return
        if self.nodes[node].get("entry"):
            self.active -= 1
        if self.spine is not None or isinstance(value, UNFOLLOWED):
            return
        if id(value) in self.holder and self.holder[id(value)] != node:
            self.edges.add((self.holder[id(value)], node))  # a value returned through this call
        self.holder[id(value)] = node
        for held in _held(value)[1:]:  # what it holds, unless an earlier call gave it: passing on a part passes it on
            self.holder.setdefault(id(held), node)
        self.kept.append(value)

    def chain(self) -> dict:
        if self.spine is None:
            raise RuntimeError(f"{self.name}: the writer was never reached")
        chain, hit = set(self.spine), max(self.spine)
        grown = True
        while grown:
            grown = False
            for src, dst in self.edges:
                if dst in chain and src not in chain and src < hit:
                    chain.add(src)
                    grown = True
        fed = {src for src, _ in self.edges if src in chain and src not in self.spine}
        return {"spine": self.spine, "chain": sorted(chain), "fed": fed}


def run_segment(segment: Segment, action) -> Segment:
    sys.setprofile(segment.profile)
    try:
        action()
    except StopWalk:
        pass
    finally:
        sys.setprofile(None)
    return segment


def writes(model_name: str):
    """The first write of a row of ``model_name`` (``save_base``, ``bulk_create``), whatever code does it."""
    def reached(frame) -> bool:
        code = frame.f_code
        if code.co_name not in ("save_base", "bulk_create") or "django" not in code.co_filename:
            return False
        owner = frame.f_locals.get("self")
        model = getattr(owner, "model", None) if code.co_name == "bulk_create" else type(owner)
        return getattr(model, "__name__", "") == model_name
    return reached


def calls(filename_part: str, function: str):
    return lambda frame: frame.f_code.co_name == function and filename_part in frame.f_code.co_filename


def setup_django(folder: Path) -> None:
    os.environ.update({"DJANGO_SETTINGS_MODULE": "alignapp.settings", "ALIGNAPP_VAR_DIR": str(folder),
                       "DATABASE_URL": f"sqlite:///{folder / 'walks.sqlite3'}", "HF_HUB_OFFLINE": "1",
                       "TRANSFORMERS_OFFLINE": "1", "CELERY_BROKER_URL": "filesystem://"})
    os.environ.pop("CACHE_URL", None)
    os.environ.pop("REDIS_URL", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def walks() -> dict:
    from celery import Celery
    from django.test import Client
    from django.utils import timezone

    import workers.engine
    import workers.tasks  # noqa: F401 - registers the task bodies
    from alignapp.celery import app
    from annotation.models import ArticleCompletion, Assignment, Label, Split, indices_key
    from annotation.services.alignment import run_saving
    from tests import factories

    sent: list[tuple[str, list]] = []

    def captured_send(self, name, args=None, **options):  # instead of the broker: run here, by the walk
        sent.append((name, list(args or [])))

    Celery.send_task = captured_send

    def stop_at_trainer(*args, **kwargs):
        raise StopWalk

    workers.engine.train_aligner = stop_at_trainer
    factories.make_user("rita", researcher=True)
    factories.make_user("anna")
    project = factories.make_project("W", rita="researcher", anna="annotator")
    article = factories.make_article(project, "Bees", {
        "adv": [["Bees are dying.", "Pesticides are blamed.", "Farmers disagree."]],
        "int": [["Bees die.", "Pesticides are blamed, but farmers disagree."]]})
    c, s = article.documents.order_by("rank")

    def pair(ci, si, origin="manual"):
        made = factories.make_pair(article=article, complex_document=c, simple_document=s, complex_key=indices_key(ci),
                                   simple_key=indices_key(si), origin=origin)
        run_saving.link_sentences([made])
        return made

    for ci, si, value in (([0], [0], "aligned"), ([1, 2], [1], "partial"), ([2], [0], "not-aligned")):
        Label.objects.create(pair=pair(ci, si), annotator=factories.User.objects.get(username="anna"), value=value,
                             seconds=20, source="article")
    ArticleCompletion.objects.create(article=article, complex_document=c, simple_document=s,
                                     annotator=factories.User.objects.get(username="anna"))
    Split.objects.create(article=article, name="train")
    pair([0], [1], "model")  # the pair the queue serves
    rita, anna = Client(), Client()
    rita.force_login(factories.User.objects.get(username="rita"))
    anna.force_login(factories.User.objects.get(username="anna"))
    api = f"/api/projects/{project.pk}/"

    def post(client, url, data, expect, **kw):
        def go():
            response = client.post(url, data, **kw) if kw else client.post(url, data, content_type="application/json")
            if response.status_code != expect:
                raise RuntimeError(f"{url}: {response.status_code} {response.content[:300]!r}")
        return go

    def task():
        name, args = sent.pop()
        return lambda: app.tasks[name](*args)

    views, tasks = "annotation/views/", "workers/tasks.py"
    served = anna.get(api + "queue/next/").json()["item"]  # what the labelling page shows
    Assignment.objects.update(assigned_at=timezone.now() - timedelta(minutes=1))  # shown a minute ago (QC's minimum)
    label = run_segment(Segment("POST label", views, writes("Label")),
                        post(anna, api + "queue/submit/", {"pair": served["pair"],
                                                           "value": "aligned", "seconds": 30}, 201))
    export = run_segment(Segment("POST export", views, calls("bench/walks", "captured_send")),
                         post(rita, api + "exports/", {"formats": ["jsonl"]}, 202))
    export_task = run_segment(Segment("export task", tasks, calls("export/formats/", "write")), task())
    train = run_segment(Segment("POST train", views, calls("bench/walks", "captured_send")),
                        post(rita, api + "train/", {"config": {"epochs": 1}, "seed": 1}, 202))
    train_task = run_segment(Segment("training task", tasks, calls("bench/walks", "stop_at_trainer")), task())
    from django.core.files.uploadedfile import SimpleUploadedFile

    record = {"id": "u1", "complex": {"paragraphs": [["One complex sentence.", "Another one."]]},
              "simple": {"paragraphs": [["One simple sentence."]]}, "gold": [[0, 0]]}
    upload = SimpleUploadedFile("in.jsonl", (json.dumps(record) + "\n").encode(), content_type="application/octet-stream")
    imported = run_segment(Segment("POST import", views, writes("Article")),
                           post(rita, api + "import/", {"files": [upload]}, 201, format="multipart"))
    return {"label → export": [label, export, export_task], "training option → trainer": [train, train_task],
            "upload → writer": [imported]}


def measure(segments: list[Segment], show: bool) -> dict:
    files: set[str] = set()
    hops = depth = returns = 0
    shown = {}
    for segment in segments:
        chain = segment.chain()
        nodes = [segment.nodes[n] for n in chain["chain"]]
        files |= {n["file"] for n in nodes if n["file"] != "(writer)"}
        hops += len(nodes)
        depth += len(chain["spine"])
        returns += len(chain["fed"])
        if show:
            shown[segment.name] = [("spine " if n in chain["spine"] else "fed   " if n in chain["fed"] else "      ")
                                   + f"{segment.nodes[n]['file']}:{segment.nodes[n]['line']} {segment.nodes[n]['function']}"
                                   for n in chain["chain"]]
    out = {"files": len(files), "hops": hops, "depth": depth, "returns": returns, "file_list": sorted(files)}
    return {**out, "chains": shown} if show else out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chains", action="store_true", help="print each segment's chain")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="walks-") as folder:
        setup_django(Path(folder))
        result = {name: measure(segments, args.chains) for name, segments in walks().items()}
    print(json.dumps({"tree": str(ROOT), **result}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
