// Adjudication page: one disagreement at a time from the review API, every vote visible; a label
// button or its number key saves the decision (the gold label) and the next pair appears.

import { api } from "./http.js";

const cfg = JSON.parse(document.getElementById("adjudicate-config").textContent);
const $ = (sel) => document.querySelector(sel);
const el = {
  item: $("#item"), done: $("#done"), status: $("#status"), remaining: $("#remaining"), note: $("#note"),
  complex: $("#complex"), simple: $("#simple"), complexLevel: $("#complex-level"), simpleLevel: $("#simple-level"),
  title: $("#article-title"), pair: $("#pair-id"), shape: $("#shape"), score: $("#score"), gold: $("#current-gold"),
  votes: $("#votes tbody"), decision: $("#decision"), skip: $("#skip"),
};
const names = new Map(cfg.scheme.values.map((v) => [v.value, v.name]));
const keyToValue = new Map(cfg.scheme.values.map((v) => [String(v.key), v.value]));

let items = [];          // the fetched page of the queue, current item first
const skipped = new Set(); // pairs skipped on this visit (they come back on reload)
let busy = false;

function say(text, isError = false) {
  el.status.textContent = text;
  el.status.classList.toggle("error", isError);
}

function setRemaining(count) {
  el.remaining.textContent = `${count} to adjudicate`;
}

async function load() {
  const data = await api(`${cfg.api}?page_size=50`);
  items = data.results.filter((it) => !skipped.has(it.pair));
  setRemaining(data.count);
  if (!items.length && skipped.size && data.count) {
    skipped.clear();  // only skipped pairs are left: go round again
    items = data.results;
  }
  show();
}

function show() {
  const item = items[0];
  el.item.hidden = !item;
  el.done.hidden = Boolean(item);
  if (!item) return;
  el.title.textContent = item.article_title;
  el.pair.textContent = `#${item.pair}`;
  el.shape.textContent = `${item.complex.length}:${item.simple.length}`;
  el.complexLevel.textContent = item.complex_level;
  el.simpleLevel.textContent = item.simple_level;
  el.complex.textContent = item.complex_text;
  el.simple.textContent = item.simple_text;
  el.score.hidden = item.score === undefined || item.score === null;
  if (!el.score.hidden) el.score.textContent = `model score ${item.score.toFixed(3)}${item.predicted_label ? ` (${item.predicted_label})` : ""}`;
  el.gold.hidden = !item.gold;
  if (item.gold) el.gold.textContent = `gold now: ${names.get(item.gold.value) ?? item.gold.value} (${item.gold.provenance})`;
  el.votes.replaceChildren(...item.votes.map((v) => {
    const row = document.createElement("tr");
    const vote = v.value ? (names.get(v.value) ?? v.value) : Object.entries(v.ratings).map(([d, r]) => `${d} ${r}`).join(", ");
    for (const text of [v.annotator, vote, `${Math.round(v.seconds)} s`, v.comment]) {
      const cell = document.createElement("td");
      cell.textContent = text;
      row.append(cell);
    }
    row.dataset.value = v.value;
    return row;
  }));
  el.decision?.querySelectorAll(".choice").forEach((button) => {
    const n = item.tally[button.dataset.value] || 0;
    button.querySelector(".tally").textContent = n ? `· ${n} vote${n > 1 ? "s" : ""}` : "";
    button.classList.toggle("voted", n > 0);
  });
  el.note.value = "";
}

async function decide(value) {
  const item = items[0];
  if (!item || busy) return;
  busy = true;
  try {
    const data = await api(cfg.api, { method: "POST", body: JSON.stringify({ pair: item.pair, value, note: el.note.value }) });
    say(`Pair #${item.pair}: ${names.get(value) ?? value} saved as gold.`);
    items.shift();
    setRemaining(data.remaining);
    if (items.length) show();
    else await load();
  } catch (err) {
    say(`Not saved: ${err.message}`, true);
  } finally {
    busy = false;
  }
}

async function skip() {
  const item = items[0];
  if (!item || busy) return;
  skipped.add(item.pair);
  items.shift();
  say(`Pair #${item.pair} skipped.`);
  if (items.length) show();
  else await load();
}

el.decision?.addEventListener("click", (event) => {
  const button = event.target.closest(".choice");
  if (button) decide(button.dataset.value);
});
el.skip.addEventListener("click", skip);

document.addEventListener("keydown", (event) => {
  if (event.target === el.note) {
    if (event.key === "Escape") el.note.blur();
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey || el.item.hidden) return;
  if (keyToValue.has(event.key) && el.decision) {
    event.preventDefault();
    decide(keyToValue.get(event.key));
  } else if (event.key === "s") {
    event.preventDefault();
    skip();
  } else if (event.key === "n") {
    event.preventDefault();
    el.note.focus();
  }
});

document.querySelectorAll("#auto-gold [data-policy]").forEach((button) => {
  button.addEventListener("click", async () => {
    const out = $("#auto-gold-result");
    try {
      const r = await api(cfg.gold_api, { method: "POST", body: JSON.stringify({ policy: button.dataset.policy }) });
      out.textContent = `${r.created} created, ${r.updated} updated, ${r.unchanged} unchanged, ${r.ties} ties left for review.`;
      await load();
    } catch (err) {
      out.textContent = `Failed: ${err.message}`;
    }
  });
});

load().catch((err) => say(`Could not load the queue: ${err.message}`, true));
