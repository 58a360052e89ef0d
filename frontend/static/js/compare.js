// "What changed" between two runs: counts by kind, both runs' scores against exhaustive gold side by
// side, per article, the changed pairs with their old and new prediction (a page at a time: "Show
// more" fetches the next), and a button that narrows the annotation queue to these pairs.

import { api } from "./http.js";

const cfg = JSON.parse(document.getElementById("compare-config").textContent);
const $ = (sel) => document.querySelector(sel);
const form = $("#compare-form");
let current = null;
let nextOffset = null;

function rowOf(values) {
  const tr = document.createElement("tr");
  for (const v of values) {
    const td = document.createElement("td");
    td.textContent = v;
    tr.append(td);
  }
  return tr;
}

function changeRows(changes) {
  return changes.map((ch) => rowOf([`#${ch.pair}`, ch.title || ch.article, ch.kind.replace("_", " "),
    ch.old.label || "—", ch.new.label || "—"]));
}

function showPaging(data) {
  nextOffset = data.changes_next_offset;
  const shown = $("#changes tbody").children.length;
  $("#changes-shown").textContent = data.changes_total > shown ? `${shown} of ${data.changes_total} changed pairs shown` : "";
  $("#more-changes").hidden = nextOffset === null;
}

const fmt = (x) => (x === null || x === undefined ? "—" : Number(x).toFixed(3));

// One row per run: Task 1 and Task 2 P/R/F1 over the exhaustive gold articles it aligned (or why none).
function showScores(scores, runs) {
  const rows = [];
  const notes = [];
  for (const [side, run] of [["old", runs.old], ["new", runs.new]]) {
    const s = scores[side];
    const name = `${side === "old" ? "Old" : "New"} #${run.id} ${run.method}`;
    if (!s.available) {
      rows.push(rowOf([name, "—", "—", "—", "—", "—", "—", "0"]));
      notes.push(`${name}: no scores (${s.reason}).`);
      continue;
    }
    const tr = rowOf([name, ...["task1", "task2"].flatMap((t) => [s[t].precision, s[t].recall, s[t].f1].map(fmt)),
      `${s.n_articles}${s.too_few ? " (too few to trust)" : ""}`]);
    tr.dataset.run = side;
    rows.push(tr);
    for (const w of s.warnings) notes.push(`${name}: ${w}.`);
  }
  $("#scores-table tbody").replaceChildren(...rows);
  if (scores.old.available && scores.new.available && scores.old.n_document_pairs !== scores.new.n_document_pairs) {
    notes.push(`The two runs aligned different document pairs with exhaustive gold (${scores.old.n_document_pairs} and ` +
      `${scores.new.n_document_pairs}): their scores are over different articles.`);
  }
  const any = scores.new.available ? scores.new : scores.old;
  $("#scores-note").textContent = [...notes, `Scores: ${any.over}; ${any.identical}.`].join(" ");
}

async function compare(oldRun, newRun) {
  try {
    const data = await api(`${cfg.compare_api}?old=${oldRun}&new=${newRun}&pairs=1`);
    current = { old: Number(oldRun), new: Number(newRun) };
    const c = data.counts;
    $("#counts").innerHTML = "";
    for (const [name, n] of [["Added", c.added], ["Removed", c.removed], ["Label changed", c.label_changed],
      ["Unchanged links", c.unchanged], ["Agreement (κ)", data.agreement.kappa ?? "—"]]) {
      const div = document.createElement("div");
      div.innerHTML = "<dt></dt><dd></dd>";
      div.querySelector("dt").textContent = name;
      div.querySelector("dd").textContent = n;
      $("#counts").append(div);
    }
    const a = data.agreement;
    $("#kappa-note").textContent = a.kappa === null ? "Agreement (κ): no document pair that both runs aligned." :
      `Agreement (κ): ${a.over} — here ${a.sentence_pairs} sentence pairs in ${a.document_pairs} document pair(s)` +
      `${a.document_pairs_left_out ? `; ${a.document_pairs_left_out} document pair(s) only one run aligned left out` : ""}.`;
    showScores(data.scores, { old: data.old, new: data.new });
    $("#per-article tbody").replaceChildren(...data.per_article.map((a) => rowOf([a.title, a.added, a.removed, a.label_changed])));
    const more = data.per_article_total - data.per_article.length;
    $("#per-article-shown").hidden = more <= 0;
    $("#per-article-shown").textContent = `${data.per_article.length} of ${data.per_article_total} articles shown`;
    $("#changes tbody").replaceChildren(...changeRows(data.changes));
    showPaging(data);
    $("#compare-message").textContent = data.changes.length ? "" : "The two runs link exactly the same pairs.";
    $("#review-changes").disabled = !data.changes.length;
  } catch (err) {
    $("#compare-message").textContent = err.message;
  }
}

$("#more-changes").addEventListener("click", async () => {
  if (!current || nextOffset === null) return;
  try {
    const data = await api(`${cfg.compare_api}?old=${current.old}&new=${current.new}&pairs=1&offset=${nextOffset}`);
    $("#changes tbody").append(...changeRows(data.changes));
    showPaging(data);
  } catch (err) {
    $("#compare-message").textContent = err.message;
  }
});

form.addEventListener("submit", (event) => {
  event.preventDefault();
  compare(form.old.value, form.new.value);
});

$("#review-changes").addEventListener("click", async () => {
  await api(cfg.review_api, { method: "POST", body: JSON.stringify(current) });
  $("#compare-message").textContent = "Every annotator's queue now serves only these changed pairs (their labelling " +
    "pages say so; the audit log records it).";
  $("#clear-review").hidden = false;
});

$("#clear-review").addEventListener("click", async () => {
  await api(cfg.review_api, { method: "POST", body: JSON.stringify({ clear: true }) });
  $("#compare-message").textContent = "Every annotator's queue serves every pair again.";
  $("#clear-review").hidden = true;
});

if (cfg.old && cfg.new) {
  form.old.value = cfg.old;
  form.new.value = cfg.new;
  compare(cfg.old, cfg.new);
} else if (form.new.options.length > 1) {
  form.new.selectedIndex = 0;
  form.old.selectedIndex = 1;
  if (cfg.new) {  // "Compare with…" from a run's page: that run is the new one
    form.new.value = cfg.new;
    if (form.old.value === String(cfg.new)) form.old.selectedIndex = 0;
  }
}
