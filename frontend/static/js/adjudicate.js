// Adjudication page: one disagreement at a time from the review API, every vote visible; a label
// button or its number key saves the decision (the gold label) and the next pair appears.
// Decided pairs (listed below the queue, or opened by number) show their gold history: another
// label changes the gold, "Revert" takes back the latest change. Automatic gold shows how many
// pairs it would decide and asks before writing.

import { api } from "./http.js";

const cfg = JSON.parse(document.getElementById("adjudicate-config").textContent);
const $ = (sel) => document.querySelector(sel);
const el = {
  item: $("#item"), done: $("#done"), status: $("#status"), remaining: $("#remaining"), note: $("#note"),
  complex: $("#complex"), simple: $("#simple"), complexLevel: $("#complex-level"), simpleLevel: $("#simple-level"),
  title: $("#article-title"), pair: $("#pair-id"), shape: $("#shape"), score: $("#score"), gold: $("#current-gold"),
  votes: $("#votes tbody"), decision: $("#decision"), skip: $("#skip"),
  openedBar: $("#opened-bar"), back: $("#back-to-queue"), historyBox: $("#gold-history"), history: $("#history tbody"),
  revert: $("#revert"), revertNone: $("#revert-none"), decided: $("#decided tbody"), decidedEmpty: $("#decided-empty"),
  openForm: $("#open-pair"), openId: $("#open-pair-id"),
};
const pairApi = (pair) => `${cfg.api}${pair}/`;
const names = new Map(cfg.scheme.values.map((v) => [v.value, v.name]));
const keyToValue = new Map(cfg.scheme.values.map((v) => [String(v.key), v.value]));

let items = [];          // the fetched page of the queue, current item first
const skipped = new Set(); // pairs skipped on this visit (they come back on reload)
let opened = null;       // a decided pair opened from the list (shown instead of the queue), with its history
let busy = false;

const current = () => opened || items[0];
const shown = (value) => (value ? (names.get(value) ?? value) : "");
const goldText = (g) => (g && g.value ? `${shown(g.value)} (${g.provenance})` : "no gold");

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
  const item = current();
  el.item.hidden = !item;
  el.done.hidden = Boolean(item);
  if (!item) return;
  el.openedBar.hidden = !opened;
  el.skip.hidden = Boolean(opened);
  el.title.textContent = item.article_title;
  el.pair.textContent = `#${item.pair}`;
  el.shape.textContent = `${item.complex.length}:${item.simple.length}`;
  el.complexLevel.textContent = item.complex_level;
  el.simpleLevel.textContent = item.simple_level;
  el.complex.textContent = item.complex_text;
  el.simple.textContent = item.simple_text;
  el.score.hidden = item.score === undefined || item.score === null;
  if (!el.score.hidden) el.score.textContent = `model score ${item.score.toFixed(3)}${item.predicted_label ? ` (${item.predicted_label})` : ""}`;
  // "decided": the pair's value by the one precedence rule (what exports and training read), shown
  // when it is not the stored gold (e.g. an annotator's label refining imported "aligned-or-partial")
  const decided = item.decided, differs = decided && (!item.gold || decided.value !== item.gold.value);
  el.gold.hidden = !item.gold && !decided;
  el.gold.textContent = (item.gold ? `gold now: ${goldText(item.gold)}${item.gold.reviewer ? ` by ${item.gold.reviewer}` : ""}` : "")
    + (differs ? `${item.gold ? " · " : ""}exported as ${goldText(decided)}` : "");
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
    button.classList.toggle("gold", Boolean(opened && item.gold && item.gold.value === button.dataset.value));
  });
  el.note.value = "";
  showHistory(item);
}

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text;
  return td;
}

function showHistory(item) {
  el.historyBox.hidden = !item.history;
  if (!item.history) return;
  el.history.replaceChildren(...item.history.map((change) => {
    const row = document.createElement("tr");
    row.dataset.action = change.action;
    row.append(cell(new Date(change.at).toLocaleString()), cell(change.by ?? "automatic"), cell(change.action),
      cell(goldText(change.old)), cell(goldText(change.new)), cell(change.new?.note ?? ""));
    return row;
  }));
  const target = item.revert_to;
  el.revert.hidden = !target;
  el.revertNone.hidden = Boolean(target);
  if (target) el.revert.textContent = target.value ? `Revert to ${goldText(target)}` : "Revert (remove the gold)";
}

// --- Decided pairs: list, open, change, revert ----------------------------------------------------

async function loadDecided() {
  const data = await api(`${cfg.api}decided/?page_size=20`);
  el.decidedEmpty.hidden = data.results.length > 0;
  el.decided.replaceChildren(...data.results.map((it) => {
    const row = document.createElement("tr");
    row.dataset.pair = it.pair;
    const open = document.createElement("button");
    open.type = "button";
    open.className = "button secondary small open";
    open.textContent = "Open";
    open.addEventListener("click", () => openPair(it.pair));
    const action = document.createElement("td");
    action.append(open);
    row.append(cell(`#${it.pair}`), cell(it.article_title), cell(goldText(it.gold)), cell(it.gold?.reviewer ?? ""), action);
    return row;
  }));
}

// in the background: the page stays usable (not busy) while the list reloads
function refreshDecided() {
  loadDecided().catch((err) => say(`Could not load the decided pairs: ${err.message}`, true));
}

async function openPair(pair) {
  try {
    opened = await api(pairApi(pair));
    say(`Pair #${pair}: ${goldText(opened.gold)}.`);
    show();
    el.item.scrollIntoView({ block: "start" });
  } catch (err) {
    say(`Could not open pair #${pair}: ${err.message}`, true);
  }
}

async function backToQueue() {
  if (!opened) return;
  opened = null;
  await load();
}

async function revert() {
  const item = opened;
  if (!item || busy) return;
  busy = true;
  try {
    opened = await api(`${pairApi(item.pair)}revert/`, { method: "POST", body: "{}" });
    setRemaining(opened.remaining);
    say(`Pair #${item.pair} reverted: ${goldText(opened.gold)}.`);
    show();
    refreshDecided();
  } catch (err) {
    say(`Not reverted: ${err.message}`, true);
  } finally {
    busy = false;
  }
}

async function decide(value) {
  const item = current();
  if (!item || busy) return;
  busy = true;
  try {
    const data = await api(cfg.api, { method: "POST", body: JSON.stringify({ pair: item.pair, value, note: el.note.value }) });
    setRemaining(data.remaining);
    if (opened) {
      opened = await api(pairApi(item.pair));
      say(`Pair #${item.pair}: gold changed to ${shown(value)}.`);
      show();
    } else {
      say(`Pair #${item.pair}: ${shown(value)} saved as gold.`);
      items.shift();
      if (items.length) show();
      else await load();
    }
    refreshDecided();
  } catch (err) {
    say(`Not saved: ${err.message}`, true);
  } finally {
    busy = false;
  }
}

async function skip() {
  const item = items[0];
  if (opened || !item || busy) return;
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
el.back.addEventListener("click", backToQueue);
el.revert.addEventListener("click", revert);
el.openForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const pair = el.openId.value.trim().replace(/^#/, "");
  if (/^\d+$/.test(pair)) openPair(Number(pair));
  else say("Type a pair number to open it.", true);
});

document.addEventListener("keydown", (event) => {
  if (event.target === el.note) {
    if (event.key === "Escape") el.note.blur();
    return;
  }
  if (event.target === el.openId || event.ctrlKey || event.metaKey || event.altKey || el.item.hidden) return;
  if (event.key === "Escape" && opened) {
    event.preventDefault();
    backToQueue();
    return;
  }
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

// Automatic gold: preview (nothing written), then the researcher confirms the number it decides; the
// server refuses (409) if that number changed meanwhile.
document.querySelectorAll("#auto-gold [data-policy]").forEach((button) => {
  button.addEventListener("click", async () => {
    const out = $("#auto-gold-result");
    const policy = button.dataset.policy;
    try {
      const preview = await api(`${cfg.gold_api}?policy=${encodeURIComponent(policy)}`);
      if (!preview.total) {
        out.textContent = `Nothing to decide: ${preview.unchanged} unchanged, ${preview.ties} ties left for review.`;
        return;
      }
      const question = `This will decide ${preview.total} items (${preview.updated} updated, ${preview.removed} removed). Continue?`;
      if (!window.confirm(question)) {
        out.textContent = "Cancelled: nothing changed.";
        return;
      }
      const r = await api(cfg.gold_api, { method: "POST", body: JSON.stringify({ policy, confirm: true, expected: preview.total }) });
      out.textContent = `${r.created} created, ${r.updated} updated, ${r.removed} removed, ${r.unchanged} unchanged, ${r.ties} ties left for review.`;
      await load();
    } catch (err) {
      out.textContent = `Failed: ${err.message}`;
    }
  });
});

load().catch((err) => say(`Could not load the queue: ${err.message}`, true));
refreshDecided();
