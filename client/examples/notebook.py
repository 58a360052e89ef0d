# %% [markdown]
# # alignapp from a notebook
#
# Import a corpus with exhaustive gold links, align it, read the run's scores against that gold, go
# through every pair, load the gold pairs as a Hugging Face `datasets.Dataset` and download an export.
#
# Run it as cells (VS Code, Jupytext) or as a script:
#
# ```sh
# ALIGNAPP_URL=http://127.0.0.1:8000 ALIGNAPP_USERNAME=researcher ALIGNAPP_PASSWORD=researcher \
#     python client/examples/notebook.py
# ```
#
# `ALIGNAPP_TOKEN` (from the account page) can stand in for the username and password.
# `ALIGNAPP_CORPUS` names a JSONL file of your own to import (the engine's format: one article pair a
# line, `gold` links); without it the notebook writes a generated one (13 articles, 520 gold links).

# %%
import json
import os
import random
import tempfile
import time
from pathlib import Path

from alignapp_client import Client

url = os.environ.get("ALIGNAPP_URL", "http://127.0.0.1:8000")
if os.environ.get("ALIGNAPP_TOKEN"):
    client = Client(url, os.environ["ALIGNAPP_TOKEN"])
else:
    client = Client.login(url, os.environ.get("ALIGNAPP_USERNAME", "researcher"),
                          os.environ.get("ALIGNAPP_PASSWORD", "researcher"))
work = Path(os.environ.get("ALIGNAPP_WORK") or tempfile.mkdtemp(prefix="alignapp-notebook-"))
work.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# ## A corpus
# Each line pairs a complex and a simple document; `gold` lists every (complex, simple) sentence link.
# The generated one: most simple sentences keep two thirds of the words of their complex sentence,
# some keep three, some are rewritten with other words: a word-overlap aligner finds some as partial
# links and misses others.

# %%
def generated_corpus(path: Path, articles: int = 13, sentences: int = 40) -> Path:
    rng = random.Random(0)
    vocabulary = ["".join(rng.choice("bcdfglmnprstv") + rng.choice("aeiou") for _ in range(3)) for _ in range(3000)]

    def simplified(words: list[str], i: int) -> list[str]:
        if i % 7 == 3:
            return rng.sample(vocabulary, 8)
        return words[:3] + rng.sample(vocabulary, 3) if i % 5 == 1 else words[:8]

    with path.open("w", encoding="utf-8") as out:
        for a in range(articles):
            complex_ = [rng.sample(vocabulary, 12) for _ in range(sentences)]
            simple = [simplified(words, i) for i, words in enumerate(complex_)]
            out.write(json.dumps({
                "id": f"Article {a + 1}",
                "complex": {"paragraphs": [[" ".join(w).capitalize() + "." for w in complex_]]},
                "simple": {"paragraphs": [[" ".join(w).capitalize() + "." for w in simple]], "level": "simple"},
                "gold": [[i, i] for i in range(sentences)], "gold_labels": ["aligned"] * sentences,
            }) + "\n")
    return path


corpus = Path(os.environ.get("ALIGNAPP_CORPUS") or generated_corpus(work / "corpus.jsonl"))

# %% [markdown]
# ## Import
# A new project; the file's links are its exhaustive gold (every link of these documents is listed).
# A small upload is imported at once, a large one in the background: `wait()` returns the same counts.

# %%
project = client.create_project(f"Notebook {time.strftime('%Y-%m-%d %H:%M:%S')}", language="en")
counts = project.import_file(corpus, format="jsonl", gold_meaning="exhaustive").wait()
print(counts["summary"], "|", counts["gold_summary"])

# %% [markdown]
# ## Align, and score against the gold
# `jaccard` (word overlap) runs in seconds on a CPU; `crf` is the neural aligner. Task 1 counts a link
# of either kind (aligned or partial), Task 2 only aligned ones (the server's `scores` say over what).

# %%
run = project.runs.create("jaccard").wait()         # a progress bar while the worker aligns
print(f"run #{run.id}: {run.pair_count} pairs in {run['timings'].get('total_s')} s")
scores = run.scores()  # Task 1 / Task 2 precision, recall, F1 over the articles with exhaustive gold
if scores and scores.get("available"):
    for task in ("task1", "task2"):
        print(task, {k: round(scores[task][k], 3) for k in ("precision", "recall", "f1")},
              f"over {scores['n_articles']} articles")
else:
    print("no scores against gold:", scores)

# %% [markdown]
# ## Every pair
# `pairs()` fetches one page at a time as you iterate.

# %%
pairs = 0
predicted = {}
for pair in project.pairs():
    pairs += 1
    predicted[pair["predicted_label"] or "none"] = predicted.get(pair["predicted_label"] or "none", 0) + 1
print(f"{pairs} pairs; predicted labels: {predicted}")

# %% [markdown]
# ## The gold pairs as a data set, and an export
# `gold()` exports the gold pairs as JSONL and loads them, one table per split (a `datasets.DatasetDict`
# with `label` a `ClassLabel` when `datasets` is installed); it locks no split unless `lock=True`, and as
# any export it gives articles without a split one. `download()` creates the folder.

# %%
gold = project.gold()
print(f"{sum(len(part) for part in gold.values())} gold pairs:", type(gold).__name__,
      {name: len(part) for name, part in gold.items()})

export = project.exports.create(kind="auto", runs=[run.id], formats=["tsv"], lock=False)
archive = export.download(work / "exports")
print(f"export #{export.id}: {export.data['pairs']} pairs in {archive.name} ({archive.stat().st_size} bytes)")
