// Curation of two annotators' whole-article alignments (researchers): both versions side by side with
// every link either annotator made drawn between them, coloured by category (agree, disagree, only A,
// only B, gold only), and a table of the links to decide one by one. Each decision (accept A's,
// accept B's, aligned, partial, not aligned) is POSTed to /api/articles/<id>/curation/ at once and
// stored as adjudicated gold; the page then moves to the next link.

import { csrfToken } from "./http.js";
import {
  $, SIDES, clearBoard, drawLink, ends, fillVersions, getJson, keepDrawn, onKeys, pageConfig, queryString, renderSentences,
  statusLine,
} from "./link_board.js";

const cfg = pageConfig();
const el = { board: $("#board"), svg: $("#links"), status: $("#status"), rows: $("#rows tbody"), counts: $("#counts"),
  cols: { complex: $("#complex-col"), simple: $("#simple-col") } };
const say = statusLine(el.status);
const NAMES = { agree: "agree", disagree: "disagree", only_a: "only A", only_b: "only B", gold_only: "gold only" };
const DECISIONS = [["a", "1", "A's"], ["b", "2", "B's"], ["aligned", "a", "aligned"], ["partial", "p", "partial"],
  ["not", "n", "not aligned"]];

let data = null;
let current = 0;
let busy = false;
const nodes = { complex: new Map(), simple: new Map() };

const key = (row) => `${row.complex}:${row.simple}`;
const judged = (value) => value ?? "—";
const goldText = (gold) => (gold ? `${gold.label}${gold.provenance === "adjudicated" ? "" : ` (${gold.provenance})`}` : "—");

function fillPeople() {
  for (const side of ["a", "b"]) {
    const chosen = data[side]?.username ?? cfg.query[side];
    $(`#choose-${side}`).replaceChildren(...data.annotators.map((p) => new Option(
      `${p.username} · ${p.links} link${p.links === 1 ? "" : "s"}${p.complete ? " · complete" : ""}`, p.username, false,
      p.username === chosen)));
    $(`#${side}-name`).textContent = data[side] ? `(${data[side].username})` : "";
  }
}

function renderBoard() {
  for (const side of SIDES) {
    nodes[side].clear();
    for (const p of renderSentences(el.cols[side], side, data[side], (p) => selectSentence(side, Number(p.dataset.index)))) {
      nodes[side].set(Number(p.dataset.index), p);
    }
  }
}

function draw() {
  if (!data) return;
  const box = clearBoard(el.board, el.svg);
  data.rows.forEach((row, k) => {
    const a = nodes.complex.get(row.complex);
    const b = nodes.simple.get(row.simple);
    if (!a || !b) return;
    const decided = row.gold && row.gold.provenance === "adjudicated" ? " decided" : "";
    const cls = `${row.category}${k === current ? " active" : ""}${decided}`;
    drawLink(el.svg, ends(box, a.getBoundingClientRect(), b.getBoundingClientRect(), 14), cls,
      { key: key(row), category: row.category }, () => choose(k));
  });
}

function decisionButtons(k) {
  const cell = document.createElement("td");
  for (const [decision, hotkey, text] of DECISIONS) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "button secondary small";
    button.dataset.decision = decision;
    button.textContent = `${text} `;
    const kbd = document.createElement("kbd");
    kbd.textContent = hotkey;
    button.append(kbd);
    button.addEventListener("click", (ev) => {
      ev.stopPropagation();
      choose(k);
      decide([data.rows[k]], decision);
    });
    cell.append(button);
  }
  return cell;
}

function renderRows() {
  el.rows.replaceChildren(...data.rows.map((row, k) => {
    const tr = document.createElement("tr");
    tr.dataset.key = key(row);
    tr.dataset.category = row.category;
    tr.dataset.gold = row.gold ? row.gold.label : "";
    tr.classList.toggle("current", k === current);
    const cells = [`C${row.complex} → S${row.simple}`, NAMES[row.category], judged(row.a), judged(row.b), goldText(row.gold)]
      .map((text, i) => {
        const td = document.createElement("td");
        td.textContent = text;
        if (i === 1) td.className = `cat ${row.category}`;
        if (i === 4) td.className = "gold";
        return td;
      });
    tr.append(...cells, decisionButtons(k));
    tr.addEventListener("click", () => choose(k));
    return tr;
  }));
  if (!data.rows.length) {
    const tr = document.createElement("tr");
    tr.className = "empty";
    tr.innerHTML = "<td colspan=6>Neither annotator linked anything in this pair of versions.</td>";
    el.rows.append(tr);
  }
  const c = data.counts;
  el.counts.textContent = data.a ? `${c.agree} agree · ${c.disagree} disagree · ${c.only_a} only A · ${c.only_b} only B`
    + `${c.gold_only ? ` · ${c.gold_only} gold only` : ""} · ${c.decided} of ${data.rows.length} decided` : "";
}

function render() {
  fillVersions(data);
  fillPeople();
  renderRows();
  draw();
}

function choose(k) {
  if (!data || !data.rows.length) return;
  current = Math.max(0, Math.min(k, data.rows.length - 1));
  el.rows.querySelectorAll("tr").forEach((tr, i) => tr.classList.toggle("current", i === current));
  el.rows.children[current]?.scrollIntoView({ block: "nearest" });
  const row = data.rows[current];
  for (const side of SIDES) {
    for (const [index, node] of nodes[side]) node.classList.toggle("selected", index === row[side]);
  }
  draw();
}

function selectSentence(side, index) {
  const k = data.rows.findIndex((row, i) => row[side] === index && i > current);
  const first = data.rows.findIndex((row) => row[side] === index);
  if (first >= 0) choose(k >= 0 ? k : first);
}

function url() {
  return `${cfg.api}${queryString(cfg.query)}`;
}

async function load() {
  const { response, payload } = await getJson(url());
  if (!response.ok) {
    say(payload.detail || `Could not load (${response.status}).`, true);
    return;
  }
  data = payload;
  if (!data.a && data.annotators.length >= 2) {  // no pair chosen yet: the first two who aligned it
    cfg.query.a = data.annotators[0].username;
    cfg.query.b = data.annotators[1].username;
    return load();
  }
  renderBoard();
  render();
  if (!data.a) say("Fewer than two annotators aligned this pair of versions: nothing to compare yet.");
  else say(`Comparing ${data.a.username} (A) and ${data.b.username} (B). Choose a link and decide: 1, 2, a, p or n.`);
  choose(current);
}

async function decide(rows, decision) {
  if (busy || !rows.length) return;
  busy = true;
  say("Saving…");
  try {
    const response = await fetch(url(), {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify({ decisions: rows.map((r) => ({ complex: r.complex, simple: r.simple, decision })) }),
    });
    const payload = await response.json();
    if (!response.ok) {
      say(payload.detail || `Not saved (${response.status}).`, true);
      return;
    }
    data = payload;
    render();
    el.status.dataset.saved = String(Number(el.status.dataset.saved || 0) + 1);
    say(`Saved: ${payload.saved.decided} link${payload.saved.decided === 1 ? "" : "s"} decided`
      + ` (${payload.saved.changed} changed the gold).`);
    choose(rows.length === 1 ? current + 1 : current);
  } finally {
    busy = false;
  }
}

function acceptAgreements() {
  const open = data.rows.filter((r) => r.category === "agree" && !(r.gold && r.gold.provenance === "adjudicated"));
  if (!open.length) say("Every agreement is decided already.");
  else decide(open, "a");
}

const forCurrent = (decision) => () => data.rows.length && decide([data.rows[current]], decision);

onKeys(() => data && data.a && !busy, () => ({
  j: () => choose(current + 1), ArrowDown: () => choose(current + 1),
  k: () => choose(current - 1), ArrowUp: () => choose(current - 1),
  1: forCurrent("a"), 2: forCurrent("b"), a: forCurrent("aligned"), p: forCurrent("partial"),
  n: forCurrent("not"), x: forCurrent("not"), g: acceptAgreements,
}));
keepDrawn(el.board, draw, () => false);
load();
