// Model registry page: train a new version (live progress, cancel), list versions with their test
// metrics beside the previous version's and the untrained crf's, a chart across versions, and
// promote / re-align / download per version. Under each version: which exhaustively annotated test
// articles it was measured on, the current default's scores, and warnings (too few articles, worse
// than the untrained crf or the default); promoting a worse version asks "Promote anyway?" first.

import { api, csrfToken, sendToLoginIfSignedOut } from "./http.js";

const cfg = JSON.parse(document.getElementById("models-config").textContent);
const $ = (sel) => document.querySelector(sel);
const f1 = (m, task) => (m && m[task] ? Number(m[task].f1).toFixed(3) : "—");

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text;
  return td;
}

function button(label, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.addEventListener("click", onClick);
  return b;
}

async function act(url, body, message) {
  try {
    const data = await api(url, { method: "POST", body: JSON.stringify(body || {}) });
    $("#version-message").replaceChildren(message(data));
    await loadVersions();
  } catch (err) {
    $("#version-message").textContent = err.message;
  }
}

// held-out (dev) Task 1 / Task 2 F1 of the trained model, and of the untrained crf on the same articles
function devText(dev) {
  const fmt = (x) => (x === undefined || x === null ? "—" : Number(x).toFixed(3));
  if (!dev?.trained) return "—";
  const base = dev.untrained_crf ? ` (untrained ${fmt(dev.untrained_crf.task1_f1)} / ${fmt(dev.untrained_crf.task2_f1)})` : "";
  return `${fmt(dev.trained.task1_f1)} / ${fmt(dev.trained.task2_f1)}${base}`;
}

// POST promote; a 409 (worse than the default or the untrained crf) asks for a confirmation first
async function promote(v, confirm = false) {
  const response = await fetch(`/api/model-versions/${v.id}/promote/`, {
    method: "POST", credentials: "same-origin", body: JSON.stringify({ confirm }),
    headers: { Accept: "application/json", "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
  });
  const data = await response.json().catch(() => ({}));
  if (sendToLoginIfSignedOut(response.status, data)) return;
  const message = $("#version-message");
  if (response.status === 409 && data.needs_confirmation) {
    const box = document.createElement("div");
    box.id = "promote-confirm";
    box.className = "error";
    const text = document.createElement("p");
    text.textContent = `Promote ${v.name} anyway? It is ${data.warnings.filter((w) => w.startsWith("worse")).join("; ")} on the test articles.`;
    box.append(text, button("Promote anyway", () => promote(v, true)),
      button("Keep the current default", () => { message.textContent = `${v.name} was not promoted.`; }));
    message.replaceChildren(box);
    return;
  }
  if (!response.ok) { message.textContent = data.detail || response.statusText; return; }
  message.textContent = `${v.name} is now the default for crf runs.`;
  await loadVersions();
}

// under a version: its test articles, the current default's scores, and warnings
function assessmentRow(v) {
  const a = v.assessment || {};
  const tr = document.createElement("tr");
  tr.className = "assessment";
  tr.dataset.assessment = v.id;
  const td = document.createElement("td");
  td.colSpan = 8;
  const titles = (a.test_articles || []).map((x) => x.title);
  const parts = [a.test_articles ? `Test: ${a.n_test_articles} exhaustively annotated article${a.n_test_articles === 1 ? "" : "s"}`
    + (titles.length ? ` (${titles.join(", ")})` : "") : "Test articles: not recorded (trained before this was kept)"];
  const dev = v.metrics?.dev?.articles;
  if (dev) parts.push(`dev: ${dev.length} article${dev.length === 1 ? "" : "s"}` + (dev.length ? ` (${dev.map((x) => x.title).join(", ")})` : ""));
  if (a.default) {
    const d = a.default;
    parts.push(d.task1 ? `current default ${d.name}: Task 1 ${f1(d, "task1")} · Task 2 ${f1(d, "task2")} (${d.basis})`
      : `current default ${d.name}: ${d.basis || "no test scores"}`);
  }
  const learnt = v.decisions;
  if (learnt) {
    const rules = { similarity: "the untrained similarity rule", learnt: "the learnt group labeller",
      "learnt+pair_model": "the learnt group labeller with the pair model", pair_model: "the pair model" };
    parts.push(`learnt: pair model weight ${learnt.pair_model_weight} (at most ${Number(learnt.weight_cap).toFixed(2)} for this much data),`
      + ` aligned/partial by ${rules[learnt.label_rule] || learnt.label_rule}; articles unlike the training ones are aligned as untrained`);
  }
  const info = document.createElement("span");
  info.className = "meta";
  info.textContent = parts.join(" · ");
  td.append(info);
  for (const w of a.warnings || []) {
    const warn = document.createElement("p");
    warn.className = "error version-warning";
    warn.textContent = `⚠ ${w}`;
    td.append(warn);
  }
  tr.append(td);
  return tr;
}

// "Run #7 started." with a link to the run's page
function runStarted(run) {
  const span = document.createElement("span");
  const link = document.createElement("a");
  link.href = `/runs/${run.id}/`;
  link.textContent = `Run #${run.id}`;
  span.append(link, " started.");
  return span;
}

// the default version cannot be promoted again
function promoteButton(v) {
  const b = button("Promote", () => promote(v));
  b.disabled = Boolean(v.default);
  if (v.default) b.title = "Already the default version for crf runs";
  return b;
}

function row(v) {
  const tr = document.createElement("tr");
  tr.dataset.version = v.id;
  const test = v.metrics?.test || {};
  const name = cell(v.name + (v.default ? " (default)" : ""));
  const data = v.data || {};
  tr.append(name, cell(v.parent ? `#${v.parent}` : "—"), cell(new Date(v.created_at).toLocaleString()),
    cell(`${data.exhaustive_links?.train ?? 0} links, ${data.pair_examples ?? 0} pairs`),
    cell(`${f1(test.this, "task1")} · ${f1(test.previous, "task1")} · ${f1(test.untrained, "task1")}`),
    cell(`${f1(test.this, "task2")} · ${f1(test.previous, "task2")} · ${f1(test.untrained, "task2")}`),
    cell(devText(v.metrics?.dev)));
  const actions = document.createElement("td");
  actions.append(
    promoteButton(v),
    button("Re-align all", () => act(`/api/model-versions/${v.id}/realign/`, { scope: "all" }, runStarted)),
    button("Re-align unlabelled", () => act(`/api/model-versions/${v.id}/realign/`, { scope: "unlabelled" }, runStarted)));
  const link = document.createElement("a");
  link.href = `/api/model-versions/${v.id}/download/`;
  link.textContent = "Download";
  actions.append(" ", link);
  tr.append(actions);
  return tr;
}

let chart = null;
function drawChart(versions) {
  const canvas = $("#metrics-chart");
  if (!window.Chart) {
    $("#chart-message").textContent = "charts unavailable: run make setup";
    $("#chart-message").hidden = false;
    canvas.hidden = true;
    return;
  }
  const ordered = [...versions].reverse();
  const series = (task, which) => ordered.map((v) => v.metrics?.test?.[which]?.[task]?.f1 ?? null);
  const data = {
    labels: ordered.map((v) => v.name),
    datasets: [
      { label: "Task 1 F1 (test)", data: series("task1", "this"), borderColor: "#2457c5" },
      { label: "Task 2 F1 (test)", data: series("task2", "this"), borderColor: "#c28a00" },
      { label: "Task 2 F1 untrained", data: series("task2", "untrained"), borderColor: "#999", borderDash: [4, 4] },
      { label: "Task 1 F1 untrained", data: series("task1", "untrained"), borderColor: "#2457c5", borderDash: [4, 4] },
    ],
  };
  if (chart) chart.destroy();
  chart = new window.Chart(canvas, { type: "line", data, options: { scales: { y: { min: 0, max: 1 } } } });
}

async function loadVersions() {
  const versions = await api(cfg.versions_api);
  const body = $("#versions tbody");
  body.replaceChildren(...(versions.length ? versions.flatMap((v) => [row(v), assessmentRow(v)]) : [Object.assign(document.createElement("tr"), {
    className: "empty", innerHTML: '<td colspan="8">No trained version yet.</td>' })]));
  const select = $("#train-form [name=base_version]");
  select.replaceChildren(new Option("the default encoder", ""), ...versions.map((v) => new Option(v.name, v.id)));
  if (versions.length) drawChart(versions);
}

let watching = null;
async function watch(jobId) {
  $("#train-progress").hidden = false;
  $("#cancel-training").hidden = false;
  $("#cancel-training").onclick = async () => {
    try { await api(`/api/jobs/${jobId}/cancel/`, { method: "POST", body: "{}" }); } catch (err) { $("#train-status").textContent = err.message; }
  };
  clearInterval(watching);
  watching = setInterval(async () => {
    const job = await api(`/api/jobs/${jobId}/`);
    $("#train-progress").value = job.progress;
    $("#train-status").textContent = `Training job #${job.id}: ${job.status} · ${job.message}${job.error ? " · " + job.error : ""}`;
    if (["succeeded", "failed", "cancelled"].includes(job.status)) {
      clearInterval(watching);
      $("#cancel-training").hidden = true;
      await loadVersions();
    }
  }, 1500);
}

// a number as typed (text that is not one goes as text: the server names what is wrong with it)
const asNumber = (text) => (text.trim() !== "" && !Number.isNaN(Number(text)) ? Number(text) : text);

// the training options the form shows (drawn by the server from the engine's declarations): only those changed
// from their default travel, so the defaults live in one place
function trainingConfig() {
  const config = {};
  for (const row of document.querySelectorAll("#train-options tr[data-option]")) {
    const input = row.querySelector("input, select");
    const type = row.dataset.type;
    const value = type === "bool" ? String(input.checked) : input.value.trim();
    if (value === input.dataset.default || (value === "" && type !== "str")) continue;
    config[row.dataset.option] = type === "bool" ? input.checked : ["int", "float"].includes(type) ? asNumber(value) : value;
  }
  return config;
}

$("#train-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const body = { config: trainingConfig() };
  if (form.get("seed") !== "") body.seed = asNumber(form.get("seed"));  // blank: the declared default
  if (form.get("base_version")) body.base_version = Number(form.get("base_version"));
  try {
    const job = await api(cfg.train_api, { method: "POST", body: JSON.stringify(body) });
    $("#train-status").className = "";
    $("#train-status").textContent = `Training job #${job.id} queued.`;
    watch(job.id);
  } catch (err) {
    $("#train-status").className = "error";  // a refusal, not a status
    $("#train-status").textContent = `Training refused: ${err.message}`;
  }
});

(async () => {
  await loadVersions();
  const jobs = await api(cfg.jobs_api);
  const running = (jobs.results || jobs).find((j) => j.kind === "train-aligner" && ["queued", "running"].includes(j.status));
  if (running) watch(running.id);
})();
