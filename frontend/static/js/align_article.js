// Whole-article alignment: two columns of sentences, links drawn between them (SVG), edited with
// clicks or keys, saved through PUT /api/articles/<id>/alignment/ as the annotator's labels.
//
// A link is {complex: [..], simple: [..], label: "aligned"|"partial"}; a sentence is in at most one
// link, so linking sentences that already belong to links merges those links (n:m) — the status line
// says so. Saving sends the links on screen and the model links this page showed that the annotator
// removed (the only model pairs the server labels "not aligned"). Marking the document pair complete
// (c; o reopens) is a separate action: only then do unlinked pairs count as not aligned.

import { csrfToken } from "./http.js";

const cfg = JSON.parse(document.getElementById("page-config").textContent);
const $ = (sel) => document.querySelector(sel);
const SVG = "http://www.w3.org/2000/svg";
const SIDES = ["complex", "simple"];
const el = {
  board: $("#board"), svg: $("#links"), status: $("#status"), source: $("#source"), save: $("#save"),
  useModel: $("#use-model"), cols: { complex: $("#complex-col"), simple: $("#simple-col") },
  completion: $("#completion"), complete: $("#complete"), reopen: $("#reopen"),
};
const completionApi = `${cfg.api}completion/`;

let data = null;                       // last GET/PUT payload
let links = [];                        // the links on screen
let shownModel = [];                   // the model's links this page put on screen (to report removals)
let nodes = { complex: [], simple: [] };  // sentence elements in order
let focus = { side: "complex", pos: 0 };
let selection = { complex: new Set(), simple: new Set() };
let active = null;                     // index of the selected link
let dirty = false;
let busy = false;
const openedAt = performance.now();    // time on the page, recorded when it is marked complete
let sinceSave = performance.now();     // time since the last save, recorded with the labels it writes

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
  say("Unsaved changes — press s to save.");
}

// "C3–4" for complex sentences [3, 4]: runs of consecutive indices as ranges.
function spans(prefix, indices) {
  const runs = [];
  for (const i of [...indices].sort((x, y) => x - y)) {
    const last = runs[runs.length - 1];
    if (last && i === last[1] + 1) last[1] = i;
    else runs.push([i, i]);
  }
  return prefix + runs.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(",");
}

function describe(link) {
  return `${spans("C", link.complex)} → ${spans("S", link.simple)}`;
}

const linkKey = (link) => `${link.complex.join(",")}:${link.simple.join(",")}`;

// --- Rendering -----------------------------------------------------------------------------

function renderColumn(side, doc) {
  const col = el.cols[side];
  col.querySelector(".level").textContent = doc.level;
  const body = col.querySelector(".col-body");
  body.replaceChildren();
  nodes[side] = [];
  for (const paragraph of doc.paragraphs) {
    const block = document.createElement("div");
    block.className = "para";
    block.dataset.paragraph = paragraph.index;
    for (const s of paragraph.sentences) {
      const p = document.createElement("p");
      p.className = "asent";
      p.dataset.side = side;
      p.dataset.index = s.index;
      p.dataset.pos = nodes[side].length;
      const idx = document.createElement("span");
      idx.className = "idx";
      idx.textContent = s.index;
      p.append(idx, " ", s.text);
      p.addEventListener("click", (ev) => clickSentence(side, Number(p.dataset.pos), ev.shiftKey));
      block.append(p);
      nodes[side].push(p);
    }
    body.append(block);
  }
}

function fillChoices() {
  for (const side of SIDES) {
    const select = $(`#choose-${side}`);
    select.replaceChildren(...data.versions.map((v) => new Option(v.level, v.id, false, v.id === data[side].id)));
  }
  if (data.runs.length) {
    $("#choose-run-label").hidden = false;
    $("#choose-run").replaceChildren(...data.runs.map((r) => new Option(`#${r.id} ${r.method}`, r.id, false,
      data.run && r.id === data.run.id)));
  }
}

function linkOf(side, index) {
  return links.findIndex((l) => l[side].includes(index));
}

function paint() {
  for (const side of SIDES) {
    nodes[side].forEach((node, pos) => {
      const index = Number(node.dataset.index);
      const k = linkOf(side, index);
      node.classList.toggle("linked", k >= 0);
      node.classList.toggle("partial", k >= 0 && links[k].label === "partial");
      node.classList.toggle("in-active", k >= 0 && k === active);
      node.classList.toggle("selected", selection[side].has(index));
      node.classList.toggle("focus", focus.side === side && focus.pos === pos);
    });
  }
  draw();
  const n = links.length;
  const label = active !== null && links[active] ? ` · selected link: ${links[active].complex.join(",")} → ${links[active].simple.join(",")} (${links[active].label})` : "";
  el.source.textContent = `${n} link${n === 1 ? "" : "s"}${label}`;
}

function draw() {
  const box = el.board.getBoundingClientRect();
  el.svg.setAttribute("width", box.width);
  el.svg.setAttribute("height", box.height);
  el.svg.replaceChildren();
  links.forEach((link, k) => {
    for (const c of link.complex) {
      for (const s of link.simple) {
        const a = nodes.complex[posOf("complex", c)].getBoundingClientRect();
        const b = nodes.simple[posOf("simple", s)].getBoundingClientRect();
        const x1 = a.right - box.left, y1 = a.top + a.height / 2 - box.top;
        const x2 = b.left - box.left, y2 = b.top + b.height / 2 - box.top;
        const d = `M${x1},${y1} C${(x1 + x2) / 2},${y1} ${(x1 + x2) / 2},${y2} ${x2},${y2}`;
        const line = document.createElementNS(SVG, "path");
        line.setAttribute("d", d);
        line.setAttribute("class", `link ${link.label}${k === active ? " active" : ""}`);
        const hit = document.createElementNS(SVG, "path");
        hit.setAttribute("d", d);
        hit.setAttribute("class", "hit");
        hit.dataset.link = k;
        hit.dataset.key = `${link.complex.join(",")}:${link.simple.join(",")}`;
        hit.addEventListener("click", () => clickLink(k));
        el.svg.append(line, hit, handle((x1 + x2) / 2, (y1 + y2) / 2, hit.dataset, `${link.label}${k === active ? " active" : ""}`, () => clickLink(k)));
      }
    }
  });
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

const positions = { complex: new Map(), simple: new Map() };
function posOf(side, index) {
  return positions[side].get(index);
}

// --- Editing -------------------------------------------------------------------------------

function linkSelection() {
  if (!selection.complex.size || !selection.simple.size) {
    say("Select at least one complex and one simple sentence to link.", true);
    return;
  }
  const complex = new Set(selection.complex), simple = new Set(selection.simple);
  let label = "aligned";
  // merge every link touching a selected sentence (a sentence is in one link only)
  const touching = links.filter((l) => l.complex.some((i) => complex.has(i)) || l.simple.some((i) => simple.has(i)));
  for (const l of touching) {
    l.complex.forEach((i) => complex.add(i));
    l.simple.forEach((i) => simple.add(i));
    if (l.label === "partial") label = "partial";
  }
  links = links.filter((l) => !touching.includes(l));
  const merged = { complex: [...complex].sort((x, y) => x - y), simple: [...simple].sort((x, y) => x - y), label };
  links.push(merged);
  links.sort((x, y) => x.complex[0] - y.complex[0] || x.simple[0] - y.simple[0]);
  active = links.indexOf(merged);
  selection = { complex: new Set(), simple: new Set() };
  markDirty();
  if (touching.length) {
    const into = touching.map(describe).join(" and ");
    say(`Merging into link${touching.length === 1 ? "" : "s"} ${into}: now one link ${describe(merged)}` +
      `${label === "partial" ? " (partial)" : ""}. Unsaved — press s to save, x to undo the link.`);
    el.status.dataset.merged = describe(merged);
  }
  paint();
}

function unlink(k) {
  if (k === null || !links[k]) {
    say("No link selected: focus a linked sentence or click a line first.", true);
    return;
  }
  links.splice(k, 1);
  active = null;
  markDirty();
  paint();
}

function setLabel(label) {
  if (active === null || !links[active]) {
    say("No link selected: focus a linked sentence or click a line first.", true);
    return;
  }
  if (label === "partial" && !data.scheme.values.some((v) => v.counts_as === "partial")) {
    say("This project's labels have no 'partial' value.", true);
    return;
  }
  links[active].label = label;
  markDirty();
  paint();
}

function clickSentence(side, pos, shift) {
  focus = { side, pos };
  const index = Number(nodes[side][pos].dataset.index);
  if (shift) {
    toggleSelect(side, index);
  } else {
    selection[side] = new Set([index]);
    const other = side === "complex" ? "simple" : "complex";
    if (selection[other].size) {
      linkSelection();
      return;
    }
    const k = linkOf(side, index);
    active = k >= 0 ? k : active;
    if (k >= 0) hintMerge(side, index, k);
  }
  paint();
}

function clickLink(k) {
  if (active === k) unlink(k);
  else {
    active = k;
    paint();
  }
}

function toggleSelect(side, index) {
  if (selection[side].has(index)) {
    selection[side].delete(index);
    return;
  }
  selection[side].add(index);
  const k = linkOf(side, index);
  if (k >= 0) hintMerge(side, index, k);
}

function hintMerge(side, index, k) {
  say(`${spans(side === "complex" ? "C" : "S", [index])} is in link ${describe(links[k])}: ` +
    "linking it to another sentence merges into that link (a/p relabel it, x unlinks).");
}

function moveFocus(delta) {
  const list = nodes[focus.side];
  focus.pos = Math.max(0, Math.min(list.length - 1, focus.pos + delta));
  afterFocus();
}

function switchColumn() {
  const from = nodes[focus.side][focus.pos];
  const other = focus.side === "complex" ? "simple" : "complex";
  const k = from ? linkOf(focus.side, Number(from.dataset.index)) : -1;
  let pos = 0;
  if (k >= 0) pos = posOf(other, links[k][other][0]);
  else if (from) {  // the sentence of the other column nearest in height
    const y = from.getBoundingClientRect().top;
    let best = Infinity;
    nodes[other].forEach((n, p) => {
      const d = Math.abs(n.getBoundingClientRect().top - y);
      if (d < best) { best = d; pos = p; }
    });
  }
  focus = { side: other, pos };
  afterFocus();
}

function afterFocus() {
  const node = nodes[focus.side][focus.pos];
  if (!node) return;
  const k = linkOf(focus.side, Number(node.dataset.index));
  active = k >= 0 ? k : null;
  node.scrollIntoView({ block: "nearest" });
  paint();
}

// --- Loading and saving --------------------------------------------------------------------

function show(payload) {
  data = payload;
  links = payload.links.map((l) => ({ ...l }));
  for (const side of SIDES) {
    renderColumn(side, payload[side]);
    positions[side] = new Map(nodes[side].map((n, p) => [Number(n.dataset.index), p]));
  }
  cfg.query = { complex: payload.complex.id, simple: payload.simple.id, ...(payload.run ? { run: payload.run.id } : {}) };
  fillChoices();
  el.useModel.hidden = !(payload.show_predictions && payload.source !== "model" && payload.model_links.length);
  shownModel = payload.source === "model" ? payload.model_links.map((l) => ({ ...l })) : [];
  focus = { side: "complex", pos: Math.min(focus.pos, nodes.complex.length - 1) };
  active = null;
  dirty = false;
  showCompletion(payload);
  paint();
}

function when(iso) {
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

// Whether the annotator declared this document pair complete, and (researchers) who else did.
function showCompletion(state) {
  const own = state.completion;
  const others = state.completions.filter((c) => !own || c.annotator !== own.annotator);
  let text = own
    ? `Complete — marked by ${own.annotator} on ${when(own.completed_at)}: every pair you did not link counts as not aligned.`
    : "Not marked complete: unlinked pairs say nothing until you mark the pair complete (c).";
  if (others.length) text += ` Also complete for: ${others.map((c) => `${c.annotator} (${when(c.completed_at)})`).join(", ")}.`;
  el.completion.textContent = text;
  el.completion.dataset.complete = own ? "1" : "0";
  el.complete.hidden = Boolean(own);
  el.reopen.hidden = !own;
}

// The model links shown on this page that are no longer on screen as they were.
function removedModelLinks() {
  const onScreen = new Set(links.map(linkKey));
  return shownModel.filter((l) => !onScreen.has(linkKey(l))).map((l) => ({ complex: l.complex, simple: l.simple }));
}

const SOURCES = {
  own: "your saved alignment", model: "the model's links", empty: "an empty alignment (blind annotation)",
};

async function load() {
  const response = await fetch(`${cfg.api}${query()}`, { headers: { Accept: "application/json" } });
  const payload = await response.json();
  if (!response.ok) {
    say(payload.detail || `Could not load (${response.status}).`, true);
    return;
  }
  show(payload);
  const run = payload.run && payload.show_predictions ? ` · run #${payload.run.id} (${payload.run.method})` : "";
  say(`Starting from ${SOURCES[payload.source]}${run}.`);
}

async function send(url, method, body) {
  const response = await fetch(`${url}${query()}`, {
    method,
    headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const payload = await response.json().catch(() => ({}));
  if (!response.ok) {
    say((payload.errors || [payload.detail || `Refused (${response.status}).`]).join(" · "), true);
    return null;
  }
  return payload;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

// Save the links; true when saved. Used by s and before marking complete.
async function save() {
  if (busy) return false;
  busy = true;
  el.save.disabled = true;
  say("Saving…");
  try {
    const seconds = (performance.now() - sinceSave) / 1000;
    const payload = await send(cfg.api, "PUT", { links, removed: removedModelLinks(), seconds });
    if (!payload) return false;
    sinceSave = performance.now();
    show(payload);
    const s = payload.saved;
    say(s.labels_written
      ? `Saved ${plural(s.links, "link")}: ${plural(s.labels_written, "label")} written` +
        `${s.not_aligned ? `, ${s.not_aligned} of them not aligned (links you removed)` : ""}.`
      : `Saved ${plural(s.links, "link")}: nothing changed since your last save.`);
    el.status.dataset.saved = String(Number(el.status.dataset.saved || 0) + 1);
    return true;
  } catch (err) {
    say(`Not saved: ${err}. Your links are still on screen; try again.`, true);
    return false;
  } finally {
    busy = false;
    el.save.disabled = false;
  }
}

// Declare the document pair exhaustively aligned (saving unsaved links first), or withdraw that.
async function complete() {
  if (busy) return;
  if (data.completion) {
    say("Already marked complete (o reopens it).");
    return;
  }
  if (dirty && !(await save())) return;
  busy = true;
  try {
    const payload = await send(completionApi, "POST", { seconds: (performance.now() - openedAt) / 1000 });
    if (!payload) return;
    Object.assign(data, { completion: payload.completion, completions: payload.completions });
    showCompletion(data);
    say("Marked complete: every pair you did not link now counts as not aligned (o reopens).");
  } catch (err) {
    say(`Not marked complete: ${err}.`, true);
  } finally {
    busy = false;
  }
}

async function reopen() {
  if (busy) return;
  if (!data.completion) {
    say("This pair is not marked complete (c marks it).");
    return;
  }
  busy = true;
  try {
    const payload = await send(completionApi, "DELETE");
    if (!payload) return;
    Object.assign(data, { completion: payload.completion, completions: payload.completions });
    showCompletion(data);
    say("Reopened: unlinked pairs no longer count as not aligned. Your links are kept.");
  } catch (err) {
    say(`Not reopened: ${err}.`, true);
  } finally {
    busy = false;
  }
}

// --- Events --------------------------------------------------------------------------------

document.addEventListener("keydown", (ev) => {
  if (!data || ev.target.closest("select, input, textarea") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const node = nodes[focus.side][focus.pos];
  const handled = {
    ArrowDown: () => moveFocus(1), j: () => moveFocus(1), ArrowUp: () => moveFocus(-1), k: () => moveFocus(-1),
    Tab: switchColumn, ArrowLeft: () => focus.side === "simple" && switchColumn(),
    ArrowRight: () => focus.side === "complex" && switchColumn(),
    Enter: () => { toggleSelect(focus.side, Number(node.dataset.index)); paint(); },
    " ": () => { toggleSelect(focus.side, Number(node.dataset.index)); paint(); },
    l: linkSelection, a: () => setLabel("aligned"), p: () => setLabel("partial"),
    x: () => unlink(active), Delete: () => unlink(active),
    Escape: () => { selection = { complex: new Set(), simple: new Set() }; active = null; paint(); },
    s: save, c: complete, o: reopen,
  }[ev.key];
  if (handled) {
    ev.preventDefault();
    handled();
  }
});

el.save.addEventListener("click", save);
el.complete.addEventListener("click", complete);
el.reopen.addEventListener("click", reopen);
el.useModel.addEventListener("click", () => {
  links = data.model_links.map((l) => ({ ...l }));
  shownModel = data.model_links.map((l) => ({ ...l }));
  active = null;
  markDirty();
  paint();
});
window.addEventListener("resize", draw);
window.addEventListener("scroll", draw, { passive: true });
window.addEventListener("beforeunload", (ev) => {
  if (dirty) ev.preventDefault();
});
new ResizeObserver(draw).observe(el.board);

load();
