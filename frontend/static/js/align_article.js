// Whole-article alignment: two columns of sentences, links drawn between them (SVG), edited with
// clicks or keys, saved through PUT /api/articles/<id>/alignment/ as the annotator's labels.
//
// A link is one complex–simple sentence link with its own label: {complex: [c], simple: [s], label:
// "aligned"|"partial"}; a sentence may be in several links (a split, a fusion: the groups are derived
// by the server, the status line names them). Linking a selection links each selected complex sentence
// to each selected simple one. Saving sends the links on screen, the links this page loaded (its own
// or the model's) and removed — the only ones the server labels "not aligned" — and the version it
// loaded: a save based on an older version gets 409 and the conflict dialog (article_conflict.js).
// Marking the document pair complete (c; o reopens) is separate: only then do unlinked pairs count as
// not aligned.

import { askConflict, merge, removedSince } from "./article_conflict.js";
import { csrfToken } from "./http.js";
import {
  $, SIDES, clearBoard, drawLink, ends, fillVersions, getJson, keepDrawn, onKeys, pageConfig, queryString, renderSentences,
  spans, statusLine,
} from "./link_board.js";

const cfg = pageConfig();
const el = {
  board: $("#board"), svg: $("#links"), status: $("#status"), source: $("#source"), save: $("#save"),
  useModel: $("#use-model"), cols: { complex: $("#complex-col"), simple: $("#simple-col") },
  completion: $("#completion"), complete: $("#complete"), reopen: $("#reopen"), conflict: $("#conflict"),
};
const completionApi = `${cfg.api}completion/`;

let data = null;                       // last GET/PUT payload
let links = [];                        // the links on screen
let base = [];                         // the links this page loaded (own or the model's): removals are relative to them
let nodes = { complex: [], simple: [] };  // sentence elements in order
let focus = { side: "complex", pos: 0 };
let selection = { complex: new Set(), simple: new Set() };
let active = null;                     // index of the selected link
let dirty = false;
let busy = false;
const openedAt = performance.now();    // time on the page, recorded when it is marked complete
let sinceSave = performance.now();     // time since the last save, recorded with the labels it writes

const query = () => queryString(cfg.query);
const say = statusLine(el.status);

function markDirty() {
  dirty = true;
  say("Unsaved changes — press s to save.");
}

function describe(link) {
  return `${spans("C", link.complex)} → ${spans("S", link.simple)}`;
}

// The derived group (split, fusion, n:m) a sentence's links belong to, for the status line.
function groupOf(side, index) {
  return (data.groups || []).find((g) => g[side].includes(index));
}

// --- Rendering -----------------------------------------------------------------------------

function renderColumn(side, doc) {
  nodes[side] = renderSentences(el.cols[side], side, doc, (p) => clickSentence(side, Number(p.dataset.pos), p.shiftKey));
}

function fillChoices() {
  fillVersions(data);
  if (data.runs.length) {
    $("#choose-run-label").hidden = false;
    $("#choose-run").replaceChildren(...data.runs.map((r) => new Option(`#${r.id} ${r.method}`, r.id, false,
      data.run && r.id === data.run.id)));
  }
}

// The sentence's first link, or (when the selected link is one of its links) the next one: clicking
// a sentence in several links again steps through them.
function linkOf(side, index, next = false) {
  const mine = links.map((l, k) => (l[side].includes(index) ? k : -1)).filter((k) => k >= 0);
  if (!mine.length) return -1;
  const at = mine.indexOf(active);
  return next && at >= 0 ? mine[(at + 1) % mine.length] : mine[0];
}

function paint() {
  for (const side of SIDES) {
    nodes[side].forEach((node, pos) => {
      const index = Number(node.dataset.index);
      const own = links.filter((l) => l[side].includes(index));
      node.classList.toggle("linked", own.length > 0);
      node.classList.toggle("partial", own.some((l) => l.label === "partial"));
      node.classList.toggle("in-active", active !== null && own.includes(links[active]));
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
  const box = clearBoard(el.board, el.svg);
  links.forEach((link, k) => {
    for (const c of link.complex) {
      for (const s of link.simple) {
        const a = nodes.complex[posOf("complex", c)].getBoundingClientRect();
        const b = nodes.simple[posOf("simple", s)].getBoundingClientRect();
        drawLink(el.svg, ends(box, a, b), `${link.label}${k === active ? " active" : ""}`,
          { link: k, key: `${link.complex.join(",")}:${link.simple.join(",")}` }, () => clickLink(k));
      }
    }
  });
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
  // one link per selected complex × simple sentence; links that exist keep their label
  let last = null, added = 0;
  for (const c of selection.complex) {
    for (const s of selection.simple) {
      last = links.find((l) => l.complex[0] === c && l.simple[0] === s);
      if (!last) {
        last = { complex: [c], simple: [s], label: "aligned" };
        links.push(last);
        added += 1;
      }
    }
  }
  links.sort((x, y) => x.complex[0] - y.complex[0] || x.simple[0] - y.simple[0]);
  active = links.indexOf(last);
  selection = { complex: new Set(), simple: new Set() };
  markDirty();
  if (added > 1) say(`${added} links added, each with its own label (a/p on a selected link). Unsaved — press s to save.`);
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
    const k = linkOf(side, index, true);
    active = k >= 0 ? k : active;
    if (k >= 0) hintLinks(side, index, k);
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
  if (k >= 0) hintLinks(side, index, k);
}

function hintLinks(side, index, k) {
  const n = links.filter((l) => l[side].includes(index)).length;
  const group = groupOf(side, index);
  const kind = group && group.kind !== "1:1" ? ` (saved as part of a ${group.kind} ${describe(group)})` : "";
  say(`${spans(side === "complex" ? "C" : "S", [index])} is in ${n} link${n === 1 ? "" : "s"}${kind}; selected ` +
    `${describe(links[k])} (${links[k].label}): a/p relabel it, x unlinks it${n > 1 ? ", click again for the next" : ""}.`);
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
  base = payload.links.map((l) => ({ ...l }));
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

const SOURCES = {
  own: "your saved alignment", model: "the model's links", empty: "an empty alignment (blind annotation)",
};

async function load() {
  const { response, payload } = await getJson(`${cfg.api}${query()}`);
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
  if (response.status === 409 && ["conflict", "empty"].includes(payload.code)) return { ...payload, [payload.code]: true };
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
    const body = { links, removed: removedSince(base, links), seconds, version: data.version, base };
    let payload = await send(cfg.api, "PUT", body);  // 409 empty: the last link of a pair marked complete removed
    if (payload?.empty && window.confirm(payload.detail || "This pair is marked complete and keeps no link. Save anyway?"))
      payload = await send(cfg.api, "PUT", { ...body, empty: true });
    if (payload?.empty) { say("Not saved: your links are still on screen."); return false; }
    if (payload?.conflict) payload = await resolveConflict(payload, seconds);
    if (!payload || payload === "taken") return false;
    if (payload.conflict) {
      say("Not saved: your links changed elsewhere again. Press s to save and choose again.", true);
      return false;
    }
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

// A 409: the dialog asks keep mine / take theirs / merge; the save goes out based on their version.
async function resolveConflict(theirs, seconds) {
  el.status.dataset.conflict = String(Number(el.status.dataset.conflict || 0) + 1);
  say("Not saved: your links of this pair changed elsewhere since this page loaded them.", true);
  const choice = await askConflict(el.conflict, theirs.changes);
  if (choice === null) {
    say("Not saved: your links are still on screen (s saves and asks again).", true);
    return null;
  }
  if (choice === "theirs") {
    show(theirs);
    say("Showing your links as saved elsewhere; this tab's unsaved changes were dropped.");
    return "taken";
  }
  const mine = choice === "mine" ? links : merge(base, links, theirs.links);
  return send(cfg.api, "PUT", { links: mine, removed: removedSince(theirs.links, mine), seconds, version: theirs.version,
    base: theirs.links });
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
    const body = { seconds: (performance.now() - openedAt) / 1000 };
    let payload = await send(completionApi, "POST", body);
    if (payload?.empty) {  // no link: every pair would become "not aligned" — ask first
      // the server's question names what will be stored, the imported links it outweighs included
      const sure = window.confirm(payload.detail || "You have no links here. Mark it complete anyway?");
      payload = sure ? await send(completionApi, "POST", { ...body, empty: true }) : say("Not marked complete.");
    }
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

onKeys(() => data, () => {
  const node = nodes[focus.side][focus.pos];
  return {
    ArrowDown: () => moveFocus(1), j: () => moveFocus(1), ArrowUp: () => moveFocus(-1), k: () => moveFocus(-1),
    Tab: switchColumn, ArrowLeft: () => focus.side === "simple" && switchColumn(),
    ArrowRight: () => focus.side === "complex" && switchColumn(),
    Enter: () => { toggleSelect(focus.side, Number(node.dataset.index)); paint(); },
    " ": () => { toggleSelect(focus.side, Number(node.dataset.index)); paint(); },
    l: linkSelection, a: () => setLabel("aligned"), p: () => setLabel("partial"),
    x: () => unlink(active), Delete: () => unlink(active),
    Escape: () => { selection = { complex: new Set(), simple: new Set() }; active = null; paint(); },
    s: save, c: complete, o: reopen,
  };
});

el.save.addEventListener("click", save);
el.complete.addEventListener("click", complete);
el.reopen.addEventListener("click", reopen);
el.useModel.addEventListener("click", () => {
  links = data.model_links.map((l) => ({ ...l }));
  active = null;
  markDirty();
  paint();
});
keepDrawn(el.board, draw, () => dirty);

load();
