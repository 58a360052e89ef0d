// Dashboard page: the box plot of model scores per human label (Chart.js + the box-plot plugin,
// loaded from static/vendor by `make setup`), the thresholds each calibration method gives, and
// "Apply threshold" buttons that store one for later runs. Tables are server-rendered; the runs
// table is kept live by project.js.

import { api, whenComputed } from "./http.js";

const cfg = JSON.parse(document.getElementById("dashboard-config").textContent);
const $ = (sel) => document.querySelector(sel);
const canvas = $("#score-chart");
const message = $("#chart-message");
const runSelect = $("#run-select");
const COLOURS = { aligned: "#1e7d3a", partial: "#c28a00", not: "#b3261e" };
const LINE_COLOURS = { "mean-valid": "#2457c5", "max-f1": "#7a3fc2", stored: "#1d2330" };

let chart = null;
let distribution = null;

const fmt = (x, digits = 3) => (x === null || x === undefined ? "—" : Number(x).toFixed(digits));

function chartsAvailable() {
  return Boolean(canvas && window.Chart && window.Chart.registry?.controllers.get("boxplot"));
}

function unavailable(text = "charts unavailable: run make setup") {
  message.textContent = text;
  message.hidden = false;
  if (canvas) canvas.hidden = true;
}

// A horizontal line across the whole plot: a line dataset on a hidden 0..1 x axis of its own.
function thresholdLine(label, value, colour, dash) {
  return {
    type: "line", label, xAxisID: "xLine", data: [{ x: 0, y: value }, { x: 1, y: value }], borderColor: colour,
    backgroundColor: colour, borderWidth: 2, borderDash: dash, pointRadius: 0, fill: false, order: 0,
  };
}

function draw() {
  if (!chartsAvailable()) return unavailable();
  const groups = distribution.groups;
  const lines = [];
  for (const method of ["mean-valid", "max-f1"]) {
    const s = distribution.suggested[method];
    if (s) lines.push(thresholdLine(`${method} threshold ${fmt(s.aligned)}`, s.aligned, LINE_COLOURS[method], [6, 4]));
  }
  const stored = distribution.current;
  if (stored && stored.source_run === distribution.run) {
    lines.push(thresholdLine(`stored threshold ${fmt(stored.aligned)}`, stored.aligned, LINE_COLOURS.stored, []));
  }
  const data = {
    labels: groups.map((g) => `${g.name} (n=${g.n})`),
    datasets: [
      {
        type: "boxplot", label: "model score", xAxisID: "x", data: groups.map((g) => g.stats),
        backgroundColor: groups.map((g) => `${COLOURS[g.counts_as] ?? "#5b6475"}55`),
        borderColor: groups.map((g) => COLOURS[g.counts_as] ?? "#5b6475"),
        borderWidth: 1.5, outlierRadius: 3, meanRadius: 4, order: 1,
      },
      ...lines,
    ],
  };
  if (chart) {
    chart.data = data;
    chart.update();
    return;
  }
  chart = new window.Chart(canvas, {
    type: "boxplot",
    data,
    options: {
      responsive: true, maintainAspectRatio: false, animation: false,
      plugins: { legend: { position: "bottom" } },
      scales: {
        y: { title: { display: true, text: "model score" } },
        x: { type: "category" },
        xLine: { type: "linear", min: 0, max: 1, offset: false, display: false },
      },
    },
  });
}

// WIVICO's rule (mean-valid) is offered only for a wivico run, on its labelled 1:1 pairs: another
// method's scores are on another scale. The server says why when it is not offered.
function renderThresholds() {
  const rule = distribution.wivico_rule ?? { available: true };
  for (const row of document.querySelectorAll("#thresholds tbody tr")) {
    const method = row.dataset.method;
    const s = distribution.suggested[method];
    const refused = method === "mean-valid" && !rule.available;
    row.classList.toggle("unavailable", refused);
    row.querySelector(".aligned").textContent = fmt(s?.aligned);
    row.querySelector(".partial").textContent = fmt(s?.partial);
    let basis = "needs labelled pairs that count as aligned";
    if (refused) basis = rule.reason;
    else if (s) {
      const scope = method === "mean-valid" ? " (1:1 pairs; n:m cut-offs propagated)" : "";
      const labelled = s.pairs.aligned + s.pairs.partial + s.pairs.not;
      const f1 = s.f1 ? ` · F1 ${fmt(s.f1.aligned.f1, 2)} over these ${labelled} labelled pairs only (see below)` : "";
      basis = `${s.pairs.aligned} aligned, ${s.pairs.partial} partial, ${s.pairs.not} not${scope}${f1}`;
    }
    row.querySelector(".basis").textContent = basis;
    const button = row.querySelector("button.apply");
    button.disabled = refused || !s;
    button.title = refused ? rule.reason : "";
  }
}

function renderStored(stored) {
  const out = $("#stored-thresholds");
  if (!stored) {
    out.textContent = "No threshold stored yet.";
    return;
  }
  out.innerHTML = "";
  const value = document.createElement("b");
  value.className = "value";
  value.textContent = fmt(stored.aligned, 4);
  out.append("Stored for later runs: aligned ", value);
  if (stored.partial !== null && stored.partial !== undefined) out.append(`, partial ${fmt(stored.partial, 4)}`);
  out.append(` (${stored.method}${stored.source_run ? `, run #${stored.source_run}` : ""})`);
}

function renderRuns() {
  const chosen = runSelect.value;
  runSelect.replaceChildren(new Option("newest run with labelled pairs", ""));
  for (const r of distribution.runs) {
    runSelect.append(new Option(`#${r.id} ${r.method} (${r.status}, ${r.labelled_pairs} labelled)`, String(r.id)));
  }
  runSelect.value = chosen || (distribution.run ? String(distribution.run) : "");
  $("#distribution-summary").textContent = distribution.pairs
    ? `${distribution.pairs} pairs with a score and a human label (gold, else the majority vote; ties left out)${distribution.run ? ` from run #${distribution.run}` : ""}`
    : "No labelled pair has a model score yet.";
}

async function loadDistribution() {
  const run = runSelect.value;
  const url = `${cfg.distribution_api}${run ? `?run=${encodeURIComponent(run)}` : ""}`;
  let answer = await api(url);
  while (answer.status === "computing") { // a big project's first distribution: a job computes it (202)
    $("#distribution-summary").textContent = `Computing the score distribution (job #${answer.job.id}, started at ${answer.job.created_at})…`;
    await new Promise((resolve) => setTimeout(resolve, (answer.retry_after || 2) * 1000));
    answer = await api(url);
  }
  distribution = answer;
  renderRuns();
  renderThresholds();
  draw();
}

async function apply(method, button) {
  button.disabled = true;
  try {
    const stored = await api(cfg.calibrate_api, {
      method: "POST", body: JSON.stringify({ method, run: distribution.run }),
    });
    distribution.current = stored;
    renderStored(stored);
    draw();
  } catch (err) {
    $("#stored-thresholds").textContent = `Not stored: ${err.message}`;
  } finally {
    button.disabled = false;
  }
}

document.querySelectorAll("#thresholds button.apply").forEach((button) => {
  button.addEventListener("click", () => apply(button.dataset.method, button));
});
runSelect.addEventListener("change", () => loadDistribution().catch((err) => unavailable(err.message)));

if (canvas && !chartsAvailable()) unavailable();
loadDistribution().catch((err) => {
  $("#distribution-summary").textContent = `Could not load the distribution: ${err.message}`;
});
// A big project's first figures are computed by a job: the page said "computing…"; show them once they are kept.
if (cfg.computing) whenComputed(cfg.dashboard_api).then(() => window.location.reload()).catch(() => {});
