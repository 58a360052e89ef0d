# %% [markdown]
# # alignapp from a notebook
#
# Import the demo corpus alignapp ships (four articles at three levels), align it, label a few pairs,
# export the gold pairs and load them as a Hugging Face `datasets.Dataset`.
#
# Run it as cells (VS Code, Jupytext) or as a script:
#
# ```sh
# ALIGNAPP_URL=http://127.0.0.1:8000 ALIGNAPP_USERNAME=researcher ALIGNAPP_PASSWORD=researcher \
#     python client/examples/notebook.py
# ```
#
# `ALIGNAPP_TOKEN` (from the account page) can stand in for the username and password;
# `ALIGNAPP_CORPUS` names the folder to import (default: the demo corpus beside this repository's app).

# %%
import os
import time
from pathlib import Path

from alignapp_client import Client

url = os.environ.get("ALIGNAPP_URL", "http://127.0.0.1:8000")
if os.environ.get("ALIGNAPP_TOKEN"):
    client = Client(url, os.environ["ALIGNAPP_TOKEN"])
else:
    client = Client.login(url, os.environ.get("ALIGNAPP_USERNAME", "researcher"),
                          os.environ.get("ALIGNAPP_PASSWORD", "researcher"))
here = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
corpus = Path(os.environ.get("ALIGNAPP_CORPUS", here.parents[1] / "annotation" / "fixtures" / "demo_corpus"))
[p["name"] for p in client.projects()]

# %% [markdown]
# A new project. Labelling from a script is quicker than the queue's minimum time per item allows,
# so this project asks for none (`qc.min_seconds`).

# %%
project = client.create_project(f"Notebook demo {time.strftime('%Y-%m-%d %H:%M:%S')}", language="en")
client.update_project(project, config={"qc": {"min_seconds": 0}})
project["id"], project["label_scheme"]

# %% [markdown]
# ## Import
# A folder of `<Title>-<level>.txt` files (the `levels` format). A small upload is imported at once;
# a large one becomes a background job whose progress `wait()` shows.

# %%
imported = client.import_corpus(project, corpus, format="levels").wait()
print({k: imported.get(k) for k in ("articles", "documents", "sentences")})

# %% [markdown]
# ## Align
# A lexical aligner (`tfidf`) runs in seconds on a CPU; `crf` is the neural one.

# %%
run = client.align(project, "tfidf")
run.wait()
print(f"run #{run.id}: {run.pair_count} pairs in {run.data['timings'].get('total_s')} s")

# %% [markdown]
# ## Label a few pairs
# Annotators do this in the browser; here the researcher labels the first pairs the queue serves.

# %%
state = client.next_item(project)
labelled = 0
while state.get("item") and labelled < 6:
    pair = state["item"]["pair"]
    state = client.submit(project, pair, "aligned" if labelled % 3 else "not-aligned", seconds=1.0)
    labelled += 1
print(f"labelled {labelled} pairs")

# %% [markdown]
# ## The raw votes and the gold pairs
# `labels()` is every vote; `gold()` exports the gold pairs (adjudicated, else the majority, else the
# single vote) as JSONL and loads them: a `datasets.Dataset` when `datasets` is installed.

# %%
votes = client.labels(project)
gold = client.gold(project)
print(f"{len(votes)} votes, {len(gold)} gold pairs")
gold  # noqa: B018 - a cell shows its last value

# %%
if len(gold):
    row = gold[0]
    print(row["split"], row["label"], "|", row["complex"], "→", row["simple"])
