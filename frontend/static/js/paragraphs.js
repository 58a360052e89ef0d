// Paragraph-alignment correction (step 1 of the Newsela procedure): paragraphs side by side, the
// automatic links drawn between them; annotators add and remove links with clicks or keys, then
// save (PUT /api/articles/<id>/paragraphs/), which also regenerates the sentence candidates.

import { csrfToken } from "./http.js";

const cfg = JSON.parse(document.getElementById("page-config").textContent);
const $ = (sel) => document.querySelector(sel);
const SVG = "http://www.w3.org/2000/svg";
const SIDES = ["complex", "simple"];
const el = {
  board: $("#board"), svg: $("#links"), status: $("#status"), source: $("#source"), save: $("#save"),
  recompute: $("#recompute"), cols: { complex: $("#complex-col"), simple: $("#simple-col") },
};

let data = null;
let links = new Map();    // "c:s" → {complex, simple, source, active, score}; active=false: removed
let nodes = { complex: [], simple: [] };
let focus = { side: "complex", pos: 0 };
let chosen = { complex: null, simple: null };  // paragraph indices chosen as the two ends
let selected = null;      // key of the selected link
let dirty = false;
let busy = false;

const key = (c, s) => `${c}:${s}`;

function query() {
  const params = new URLSearchParams(cfg.query);
  return params.toString() ? `?${params}` : "";
}

function say(text, error = false) {
  el.status.textContent = text;
  el.status.classList.toggle("error", error);
}

function markDirty() {
  dirty = true;
  say("Unsaved changes — press s to save and regenerate the candidates.");
}

// --- Rendering -----------------------------------------------------------------------------

function renderColumn(side, doc) {
  const col = el.cols[side];
  col.querySelector(".level").textContent = doc.level;
  const body = col.querySelector(".col-body");
  body.replaceChildren();
  nodes[side] = doc.paragraphs.map((paragraph, pos) => {
    const card = document.createElement("div");
    card.className = "pcard";
    card.dataset.side = side;
    card.dataset.paragraph = paragraph.index;
    const head = document.createElement("div");
    head.className = "phead";
    head.textContent = `¶ ${paragraph.index}`;
    const text = document.createElement("p");
    text.textContent = paragraph.sentences.map((s) => s.text).join(" ");
    card.append(head, text);
    card.addEventListener("click", () => choose(side, pos));
    body.append(card);
    return card;
  });
}

function fillChoices() {
  for (const side of SIDES) {
    $(`#choose-${side}`).replaceChildren(...data.versions.map((v) => new Option(v.level, v.id, false, v.id === data[side].id)));
  }
}

function paint() {
  for (const side of SIDES) {
    nodes[side].forEach((node, pos) => {
      const index = Number(node.dataset.paragraph);
      const linked = [...links.values()].some((l) => l.active && l[side] === index);
      node.classList.toggle("linked", linked);
      node.classList.toggle("chosen", chosen[side] === index);
      node.classList.toggle("focus", focus.side === side && focus.pos === pos);
    });
  }
  draw();
  const active = [...links.values()].filter((l) => l.active);
  const added = active.filter((l) => l.source === "manual").length;
  const removed = [...links.values()].filter((l) => !l.active).length;
  el.source.textContent = `${active.length} link${active.length === 1 ? "" : "s"} (${added} added, ${removed} removed)` +
    (data.origin === "computed" ? ` · automatic links computed with ${data.similarity}` : "") +
    ` · candidates: ${data.candidates}, ${data.candidate_pairs} pairs now`;
}

function nodeOf(side, index) {
  return nodes[side].find((n) => Number(n.dataset.paragraph) === index);
}

function draw() {
  const box = el.board.getBoundingClientRect();
  el.svg.setAttribute("width", box.width);
  el.svg.setAttribute("height", box.height);
  el.svg.replaceChildren();
  for (const [k, link] of links) {
    const a = nodeOf("complex", link.complex).getBoundingClientRect();
    const b = nodeOf("simple", link.simple).getBoundingClientRect();
    const x1 = a.right - box.left, y1 = a.top + Math.min(a.height / 2, 40) - box.top;
    const x2 = b.left - box.left, y2 = b.top + Math.min(b.height / 2, 40) - box.top;
    const d = `M${x1},${y1} C${(x1 + x2) / 2},${y1} ${(x1 + x2) / 2},${y2} ${x2},${y2}`;
    const kind = !link.active ? "removed" : link.source === "manual" ? "manual" : "auto";
    const line = document.createElementNS(SVG, "path");
    line.setAttribute("d", d);
    line.setAttribute("class", `link ${kind}${k === selected ? " active" : ""}`);
    const hit = document.createElementNS(SVG, "path");
    hit.setAttribute("d", d);
    hit.setAttribute("class", "hit");
    hit.dataset.key = k;
    hit.dataset.state = kind;
    hit.addEventListener("click", () => clickLink(k));
    el.svg.append(line, hit, handle((x1 + x2) / 2, (y1 + y2) / 2, hit.dataset, `${kind}${k === selected ? " active" : ""}`, () => clickLink(k)));
  }
}

// A small knob at the middle of a link line: the easy place to click it.
function handle(x, y, dataset, cls, onClick) {
  const knob = document.createElementNS(SVG, "circle");
  knob.setAttribute("cx", x);
  knob.setAttribute("cy", y);
  knob.setAttribute("r", 5);
  knob.setAttribute("class", `handle ${cls}`);
  Object.assign(knob.dataset, dataset);
  knob.addEventListener("click", onClick);
  return knob;
}

// --- Editing -------------------------------------------------------------------------------

function toggle(c, s) {
  const k = key(c, s);
  const link = links.get(k);
  if (!link) links.set(k, { complex: c, simple: s, source: "manual", active: true, stored: false });
  else if (link.active && link.source === "manual" && !link.stored) links.delete(k);
  else link.active = !link.active;
  selected = links.has(k) ? k : null;
  markDirty();
  const now = links.get(k);
  say(now && now.active ? `Linked ¶${c} → ¶${s}. Press s to save.` : `Removed ¶${c} → ¶${s}. Press s to save.`);
}

function choose(side, pos) {
  focus = { side, pos };
  const index = Number(nodes[side][pos].dataset.paragraph);
  chosen[side] = chosen[side] === index ? null : index;
  if (chosen.complex !== null && chosen.simple !== null) {
    toggle(chosen.complex, chosen.simple);
    chosen = { complex: null, simple: null };
  }
  paint();
}

function clickLink(k) {
  if (selected === k) removeSelected();
  else {
    selected = k;
    paint();
  }
}

function removeSelected() {
  const link = selected && links.get(selected);
  if (!link) {
    say("No link selected: click a line first.", true);
    return;
  }
  toggle(link.complex, link.simple);
  paint();
}

function moveFocus(delta) {
  focus.pos = Math.max(0, Math.min(nodes[focus.side].length - 1, focus.pos + delta));
  nodes[focus.side][focus.pos].scrollIntoView({ block: "nearest" });
  paint();
}

function switchColumn() {
  const other = focus.side === "complex" ? "simple" : "complex";
  focus = { side: other, pos: Math.min(focus.pos, nodes[other].length - 1) };
  paint();
}

// --- Loading and saving --------------------------------------------------------------------

function show(payload) {
  data = payload;
  links = new Map(payload.links.map((l) => [key(l.complex, l.simple), { ...l, stored: payload.origin === "stored" }]));
  for (const side of SIDES) renderColumn(side, payload[side]);
  cfg.query = { complex: payload.complex.id, simple: payload.simple.id };
  fillChoices();
  chosen = { complex: null, simple: null };
  selected = null;
  dirty = false;
  paint();
}

async function load() {
  const response = await fetch(`${cfg.api}${query()}`, { headers: { Accept: "application/json" } });
  const payload = await response.json();
  if (!response.ok) {
    say(payload.detail || `Could not load (${response.status}).`, true);
    return;
  }
  show(payload);
  say(payload.origin === "stored" ? "Showing the stored paragraph links." : "Showing automatic paragraph links (not saved yet).");
}

async function save() {
  if (busy) return;
  busy = true;
  el.save.disabled = true;
  say("Saving and regenerating candidates…");
  try {
    const body = { links: [...links.values()].filter((l) => l.active).map((l) => ({ complex: l.complex, simple: l.simple })) };
    const response = await fetch(`${cfg.api}${query()}`, {
      method: "PUT",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(body),
    });
    const payload = await response.json();
    if (!response.ok) {
      say((payload.errors || [payload.detail || `Not saved (${response.status}).`]).join(" · "), true);
      return;
    }
    show(payload);
    const s = payload.saved, c = s.candidates;
    const candidates = c.job ? `candidates are being regenerated (job #${c.job})`
      : `${c.pairs} candidate pairs (${c.created} new, ${c.deleted} removed, ${c.kept_labelled} labelled kept)`;
    say(`Saved: ${s.added} added, ${s.removed} removed, ${s.restored} restored; ${candidates}.`);
    el.status.dataset.saved = "1";
  } catch (err) {
    say(`Not saved: ${err}. Your links are still on screen; try again.`, true);
  } finally {
    busy = false;
    el.save.disabled = false;
  }
}

async function recompute() {
  if (!cfg.job_api || !confirm("Recompute the automatic paragraph links of every article nobody corrected yet, and regenerate their candidates?")) return;
  const response = await fetch(cfg.job_api, {
    method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken() },
    body: JSON.stringify({ candidates: true }),
  });
  const job = await response.json();
  if (!response.ok) {
    say(job.detail || `Not started (${response.status}).`, true);
    return;
  }
  say(`Job #${job.id} queued: recomputing paragraph links for the project.`);
  const poll = async () => {
    const r = await fetch(`/api/jobs/${job.id}/`, { headers: { Accept: "application/json" } });
    const j = await r.json();
    if (j.status === "succeeded") { say(`Job #${j.id} done: ${j.result.recomputed} document pairs recomputed, ${j.result.kept_corrected} corrected ones kept.`); load(); }
    else if (j.status === "failed") say(`Job #${j.id} failed: ${j.error}`, true);
    else { say(`Job #${j.id}: ${j.status} ${Math.round(j.progress)}%`); setTimeout(poll, 2000); }
  };
  setTimeout(poll, 1000);
}

// --- Events --------------------------------------------------------------------------------

document.addEventListener("keydown", (ev) => {
  if (!data || ev.target.closest("select, input, textarea") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const handled = {
    ArrowDown: () => moveFocus(1), j: () => moveFocus(1), ArrowUp: () => moveFocus(-1), k: () => moveFocus(-1),
    Tab: switchColumn, ArrowLeft: () => focus.side === "simple" && switchColumn(),
    ArrowRight: () => focus.side === "complex" && switchColumn(),
    Enter: () => choose(focus.side, focus.pos), " ": () => choose(focus.side, focus.pos),
    x: removeSelected, Delete: removeSelected,
    Escape: () => { chosen = { complex: null, simple: null }; selected = null; paint(); },
    s: save,
  }[ev.key];
  if (handled) {
    ev.preventDefault();
    handled();
  }
});

el.save.addEventListener("click", save);
if (el.recompute) el.recompute.addEventListener("click", recompute);
window.addEventListener("resize", draw);
window.addEventListener("scroll", draw, { passive: true });
window.addEventListener("beforeunload", (ev) => {
  if (dirty) ev.preventDefault();
});
new ResizeObserver(draw).observe(el.board);

load();
