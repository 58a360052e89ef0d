// A run's page: its pairs (what this run predicted, filtered, sorted, searched) and the retry, cancel
// and delete buttons.

import { api, whenComputed } from "./http.js";

const cfg = JSON.parse(document.getElementById("run-config").textContent);
const $ = (sel) => document.querySelector(sel);
const form = $("#pair-filters");
const body = $("#run-pairs-table tbody");
let next = null;
// article id → title, from the filter's options (the pairs API gives the id)
const titles = new Map([...form.article.options].filter((o) => o.value).map((o) => [Number(o.value), o.textContent]));

function say(text, error = false) {
  const p = $("#run-message");
  p.textContent = text;
  p.classList.toggle("error", error);
}

function query() {
  const params = new URLSearchParams({ run: cfg.run, project: cfg.project });
  for (const [name, value] of new FormData(form)) {
    if (!value) continue;
    params.set(name === "min_score" ? "score__gte" : name, value);
  }
  return `${cfg.pairs_api}?${params}`;
}

function cell(tr, text) {
  const td = document.createElement("td");
  td.textContent = text ?? "—";
  tr.append(td);
}

function render(pairs) {
  for (const p of pairs) {
    const tr = document.createElement("tr");
    tr.dataset.pair = p.id;
    cell(tr, `#${p.id}`);
    cell(tr, p.article_title ?? titles.get(p.article) ?? p.article);
    cell(tr, `${p.complex.length}:${p.simple.length}`);
    cell(tr, p.complex_text);
    cell(tr, p.simple_text);
    cell(tr, p.score == null ? "—" : p.score.toFixed(3));
    cell(tr, p.predicted_label);
    body.append(tr);
  }
}

async function load(url, append = false) {
  try {
    const data = await api(url);
    if (!append) body.innerHTML = "";
    const pairs = data.results ?? data;
    render(pairs);
    next = data.next ?? null;
    $("#more-pairs").hidden = !next;
    $("#pair-count").textContent = `${data.count ?? pairs.length} pair(s)`;
  } catch (err) {
    $("#pair-count").textContent = `Could not load the pairs: ${err.message}`;
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  load(query());
});
$("#more-pairs").addEventListener("click", () => next && load(next, true));

async function act(path, method, done) {
  try {
    const data = await api(`${cfg.run_api}${path}`, { method });
    done(data);
  } catch (err) {
    say(err.message, true);
  }
}

function showStatus(run) {
  const status = $("#run-status");
  status.textContent = run.status;
  status.className = `status ${run.status}`;
  const active = run.status === "queued" || run.status === "running";
  $("#cancel-run").hidden = !active;
  $("#retry-run").hidden = !run.retryable; // failed, cancelled, queued, or running with its worker lost
  $("#delete-run").hidden = active;
}

if (cfg.researcher) {
  $("#cancel-run").addEventListener("click", () => act("cancel/", "POST", (run) => {
    showStatus(run);
    say(`Run #${run.id} cancelled.`);
  }));
  $("#retry-run").addEventListener("click", () => act("retry/", "POST", (run) => {
    showStatus(run);
    say(`Run #${run.id} queued again.`);
  }));
  $("#delete-run").addEventListener("click", () => {
    if (!window.confirm("Delete this run and its predictions? Pairs that only this run proposed and nobody labelled go too.")) return;
    act("", "DELETE", (data) => {
      say(`Run #${data.run} deleted: ${data.predictions} prediction(s), ${data.pairs} pair(s).`);
      window.location.assign(cfg.project_page);
    });
  });
}

load(query());
// A big project's first scores are computed by a job: the page said "computing…"; show them once they are kept.
if (cfg.scores_computing) whenComputed(cfg.run_api).then(() => window.location.reload()).catch(() => {});
