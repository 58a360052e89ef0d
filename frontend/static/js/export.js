// Export page: assign splits, preview the counts an export would have, start an export job and poll
// it until its download link appears. Everything goes through the export API (api_export.py).

import { api as request } from "./http.js";

const api = (url, body) => request(url, body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });

const cfg = JSON.parse(document.getElementById("export-config").textContent);
const $ = (sel) => document.querySelector(sel);
const status = $("#status");

function say(text, isError = false) {
  status.textContent = text;
  status.classList.toggle("error", isError);
}

function checked(form, name) {
  return [...form.querySelectorAll(`[name=${name}]:checked`)].map((i) => i.value);
}

function lines(text) {
  return text.split("\n").map((l) => l.trim()).filter(Boolean);
}

const OPS = { ">": "gt", ">=": "gte", "<": "lt", "<=": "lte", "==": "eq" };

function options() {
  const form = $("#export-form");
  const kind = form.querySelector("[name=kind]:checked").value;
  const out = { kind, formats: checked(form, "formats"), drop_identical: form.drop_identical.checked,
                exclude_adjacent: form.exclude_adjacent.checked, derived: form.derived.checked };
  if (kind === "gold") out.label_policy = form.label_policy.value;
  if (form.model_version.value) out.model_version = Number(form.model_version.value);
  if (form.run.value) out.runs = [Number(form.run.value)];
  const labels = checked(form, "labels");
  if (labels.length) out.labels = labels;
  const provenance = checked(form, "provenance");
  if (provenance.length) out.provenance = provenance;
  if (form.bleu.checked) out.bleu_band = [Number(form.bleu_low.value), Number(form.bleu_high.value)];
  const thresholds = lines(form.thresholds.value).map((line) => {
    const m = line.match(/^([A-Za-z_]\w*)\s*(>=|<=|==|>|<)\s*(-?[\d.eE+-]+)$/);
    if (!m) throw new Error(`threshold "${line}" must look like key>=value`);
    return { key: m[1], op: OPS[m[2]], value: Number(m[3]) };
  });
  if (thresholds.length) out.thresholds = thresholds;
  const excluded = form.exclude_level_pairs.value.split(",").map((s) => s.trim()).filter(Boolean);
  if (excluded.length) out.exclude_level_pairs = excluded.map((p) => p.split("-"));
  const dedup = lines(form.dedup.value);
  if (dedup.length) out.dedup = [{ sentences: dedup, name: "page" }];
  return out;
}

function fmt(obj) {
  return Object.entries(obj || {}).map(([k, v]) => `${k} ${v}`).join(", ");
}

$("#preview").addEventListener("click", async () => {
  try {
    say("Counting…");
    const result = await api(cfg.preview_api, options());
    const body = $("#preview-table tbody");
    body.replaceChildren(...Object.entries(result.splits).map(([split, c]) => {
      const row = document.createElement("tr");
      for (const text of [split, c.articles, c.pairs, fmt(c.labels), fmt(c.provenance)]) {
        const cell = document.createElement("td");
        cell.textContent = text;
        row.append(cell);
      }
      return row;
    }));
    const tsvLeftOut = fmt((result.left_out || {}).tsv || {});
    $("#preview-dropped").textContent = `Dropped by filters: ${fmt(result.dropped) || "none"}` +
      ` · left out of the training outputs only: ${fmt(result.dropped_training || {}) || "none"}` +
      (tsvLeftOut ? ` · no wiki-manual TSV row (it cannot say so): ${tsvLeftOut}` : "") +
      (result.newly_assigned ? ` · ${result.newly_assigned} articles will get a split` : "") +
      (result.partial ? ` · partial count (${result.articles_seen} of ${result.articles_total} articles)` : "");
    const policies = Object.entries(result.policies || {});
    $("#policy-table tbody").replaceChildren(...policies.map(([policy, row]) => {
      const tr = document.createElement("tr");
      tr.dataset.policy = policy;
      tr.classList.toggle("chosen", policy === result.label_policy);
      for (const text of [policy === result.label_policy ? `${policy} (chosen)` : policy, row.pairs,
        row.from.imported, row.from.adjudicated, row.from.majority, row.from.single, row.from.tie, row.from.derived]) {
        const cell = document.createElement("td");
        cell.textContent = text;
        tr.append(cell);
      }
      return tr;
    }));
    $("#policy-preview").hidden = !policies.length;
    $("#preview-card").hidden = false;
    say(`${result.pairs} pairs would be exported.`);
  } catch (err) {
    say(err.message, true);
  }
});

async function poll(url) {
  for (;;) {
    const e = await api(url);
    if (e.status === "failed") throw new Error(e.error || "the export failed");
    if (e.download_url) return e;
    say(`Exporting… ${Math.round(e.progress)}% ${e.message || ""}`);
    await new Promise((resolve) => setTimeout(resolve, 1500));
  }
}

$("#export-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const started = await api(cfg.exports_api, options());
    say(`Export #${started.id} queued.`);
    const done = await poll(started.status_url);
    const row = document.createElement("tr");
    row.innerHTML = `<td>${done.id}</td><td>${done.kind}</td><td>succeeded</td><td>${done.pairs}</td><td><a></a></td>`;
    Object.assign(row.querySelector("a"), { href: done.download_url, textContent: "zip" });
    $("#exports tr.empty")?.remove();
    $("#exports tbody").prepend(row);
    say(`Export #${done.id} is ready: ${done.pairs} pairs.`);
  } catch (err) {
    say(err.message, true);
  }
});

$("#split-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const f = event.target;
  const policy = { mode: f.mode.value, train: Number(f.train.value), dev: Number(f.dev.value),
                   test: Number(f.test.value), seed: Number(f.seed.value), stratify: f.stratify.value || null };
  try {
    const result = await api(cfg.splits_api, { policy });
    $("#split-counts").textContent = `${fmt(result.counts)}, unassigned ${result.unassigned}`;
    say(`${result.assigned} articles assigned.`);
  } catch (err) {
    say(err.message, true);
  }
});
