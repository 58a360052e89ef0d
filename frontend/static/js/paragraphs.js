// Paragraph-alignment correction (step 1 of the Newsela procedure): paragraphs side by side, the
// automatic links drawn between them; annotators add and remove links with clicks or keys, then
// save (PUT /api/articles/<id>/paragraphs/), which also regenerates the sentence candidates.
// An annotator's save is a proposal for a researcher unless the project lets corrections apply
// directly; researchers see the pending proposals (drawn on the board as a diff) and accept or
// reject them (/api/paragraph-proposals/<id>/accept|reject/).

import { api, csrfToken } from "./http.js";
import {
  $, SIDES, clearBoard, drawLink, ends, fillVersions, getJson, keepDrawn, onKeys, pageConfig, queryString, statusLine,
} from "./link_board.js";

const cfg = pageConfig();
const el = {
  board: $("#board"), svg: $("#links"), status: $("#status"), source: $("#source"), save: $("#save"),
  recompute: $("#recompute"), cols: { complex: $("#complex-col"), simple: $("#simple-col") },
  mine: $("#my-proposal"), showMine: $("#show-my-proposal"), proposals: $("#proposals"), proposalList: $("#proposal-list"),
  noProposals: $("#no-proposals"), elsewhere: $("#elsewhere"), elsewhereList: $("#elsewhere-list tbody"),
};

let data = null;
let links = new Map();    // "c:s" → {complex, simple, source, active, score}; active=false: removed
let nodes = { complex: [], simple: [] };
let focus = { side: "complex", pos: 0 };
let chosen = { complex: null, simple: null };  // paragraph indices chosen as the two ends
let selected = null;      // key of the selected link
let dirty = false;
let busy = false;
let myProposal = null;    // the annotator's pending proposal for these versions
let previewing = null;    // id of the proposal drawn on the board

const key = (c, s) => `${c}:${s}`;

const query = () => queryString(cfg.query);
const say = statusLine(el.status);

function markDirty() {
  dirty = true;
  say(cfg.applies_directly ? "Unsaved changes — press s to save and regenerate the candidates."
    : "Unsaved changes — press s to send them to a researcher for review.");
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
  const box = clearBoard(el.board, el.svg);
  for (const [k, link] of links) {
    const a = nodeOf("complex", link.complex).getBoundingClientRect();
    const b = nodeOf("simple", link.simple).getBoundingClientRect();
    const kind = !link.active ? "removed" : link.source === "manual" ? "manual" : "auto";
    drawLink(el.svg, ends(box, a, b, 40), `${kind}${k === selected ? " active" : ""}`, { key: k, state: kind },
      () => clickLink(k));
  }
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
  fillVersions(data);
  chosen = { complex: null, simple: null };
  selected = null;
  previewing = null;
  dirty = false;
  paint();
}

async function load() {
  const { response, payload } = await getJson(`${cfg.api}${query()}`);
  if (!response.ok) {
    say(payload.detail || `Could not load (${response.status}).`, true);
    return;
  }
  show(payload);
  say(payload.origin === "stored" ? "Showing the stored paragraph links." : "Showing automatic paragraph links (not saved yet).");
  await loadProposals();
}

async function save() {
  if (busy) return;
  busy = true;
  el.save.disabled = true;
  say(cfg.applies_directly ? "Saving and regenerating candidates…" : "Sending your correction…");
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
    const s = payload.saved;
    if (s.applied === false) {
      proposed(payload, s);
      return;
    }
    show(payload);
    const c = s.candidates;
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

// --- Proposals -----------------------------------------------------------------------------

const pairText = ([c, s]) => `¶${c} → ¶${s}`;

// The board as it would be with a proposal's links: added ones green, removed ones struck.
function drawProposal(proposal) {
  const wanted = new Set(proposal.links.map(([c, s]) => key(c, s)));
  links = new Map(data.links.map((l) => [key(l.complex, l.simple), { ...l, stored: data.origin === "stored" }]));
  for (const [k, link] of links) link.active = wanted.has(k);
  for (const [c, s] of proposal.links) {
    if (!links.has(key(c, s))) links.set(key(c, s), { complex: c, simple: s, source: "manual", active: true, stored: false });
  }
  previewing = proposal.id;
  selected = null;
  dirty = false;
  paint();
}

// An annotator's save became a proposal: their links stay on the board, nothing else changed.
function proposed(payload, saved) {
  data = { ...payload, links: data.links, origin: data.origin };  // the links in force are unchanged
  dirty = false;
  el.status.dataset.saved = "1";
  if (!saved.proposal) {
    show(payload);
    say("Those are the links in force already: nothing to review.");
  } else {
    say(`Your correction was sent to a researcher for review (${saved.added} added, ${saved.removed} removed). ` +
      "The links and candidates change once it is accepted.");
  }
  loadProposals();
}

function button(text, cls, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = cls;
  b.textContent = text;
  b.addEventListener("click", onClick);
  return b;
}

function diffText(diff) {
  const span = document.createElement("span");
  span.className = "diff";
  const add = document.createElement("span");
  add.className = "added";
  add.textContent = `+${diff.added.length}`;
  const rem = document.createElement("span");
  rem.className = "removed";
  rem.textContent = `−${diff.removed.length}`;
  span.append(add, " ", rem);
  span.title = [...diff.added.map((p) => `add ${pairText(p)}`), ...diff.removed.map((p) => `remove ${pairText(p)}`)].join("\n");
  return span;
}

async function loadProposals() {
  if (!cfg.proposals_api || !data) return;
  const here = new URLSearchParams({ article: cfg.article, complex: data.complex.id, simple: data.simple.id });
  try {
    const mine = await api(`${cfg.proposals_api}?${here}`);
    if (cfg.is_researcher) {
      renderProposals(mine.results);
      const all = await api(`${cfg.proposals_api}?page_size=50`);
      renderElsewhere(all.results.filter((p) => !(p.complex.id === data.complex.id && p.simple.id === data.simple.id)));
    } else if (el.mine) {
      myProposal = mine.results[0] || null;
      el.mine.hidden = !myProposal;
      if (myProposal) {
        el.mine.querySelector(".text").textContent = `Your correction of ${new Date(myProposal.created_at).toLocaleString()} ` +
          `(${myProposal.diff.added.length} added, ${myProposal.diff.removed.length} removed) is waiting for a researcher's review.`;
      }
    }
  } catch (err) {
    say(`Could not load the proposals: ${err.message}`, true);
  }
}

function renderProposals(items) {
  el.proposals.hidden = false;
  el.noProposals.hidden = items.length > 0;
  el.proposalList.replaceChildren(...items.map((p) => {
    const li = document.createElement("li");
    li.dataset.proposal = p.id;
    li.classList.toggle("previewing", previewing === p.id);
    const who = document.createElement("span");
    who.textContent = `#${p.id} by ${p.proposed_by ?? "someone"}, ${new Date(p.created_at).toLocaleString()}:`;
    const note = document.createElement("input");
    note.className = "note";
    note.placeholder = "Note (why)";
    note.setAttribute("aria-label", `Note on proposal #${p.id}`);
    li.append(who, diffText(p.diff),
      button("Show", "button secondary small show", () => { drawProposal(p); renderProposals(items); say(`Showing proposal #${p.id}: green links are added, dashed ones removed.`); }),
      button("Accept", "small accept", () => decideProposal(p, "accept", note.value)),
      note,
      button("Reject", "button secondary small reject", () => decideProposal(p, "reject", note.value)));
    return li;
  }));
}

function renderElsewhere(items) {
  el.elsewhere.hidden = !items.length;
  el.elsewhereList.replaceChildren(...items.map((p) => {
    const row = document.createElement("tr");
    const open = document.createElement("a");
    open.href = p.page_url;
    open.textContent = "Open";
    for (const text of [p.article_title, `${p.complex.level} → ${p.simple.level}`, p.proposed_by ?? ""]) {
      const td = document.createElement("td");
      td.textContent = text;
      row.append(td);
    }
    const change = document.createElement("td");
    change.append(diffText(p.diff));
    const link = document.createElement("td");
    link.append(open);
    row.append(change, link);
    return row;
  }));
}

async function decideProposal(proposal, action, note) {
  if (busy) return;
  busy = true;
  say(action === "accept" ? `Applying proposal #${proposal.id} and regenerating candidates…` : `Rejecting proposal #${proposal.id}…`);
  try {
    const r = await api(action === "accept" ? proposal.accept_url : proposal.reject_url, { method: "POST", body: JSON.stringify({ note }) });
    previewing = null;
    busy = false;
    await load();
    if (action === "accept") {
      const s = r.saved, c = s.candidates;
      const candidates = c.job ? `candidates are being regenerated (job #${c.job})` : `${c.pairs} candidate pairs (${c.created} new, ${c.deleted} removed)`;
      say(`Proposal #${proposal.id} accepted: ${s.added} added, ${s.removed} removed, ${s.restored} restored; ${candidates}.`);
    } else {
      say(`Proposal #${proposal.id} rejected; the links stay as they were.`);
    }
    el.status.dataset.decided = action;
  } catch (err) {
    say(`Not ${action === "accept" ? "accepted" : "rejected"}: ${err.message}`, true);
  } finally {
    busy = false;
  }
}

if (el.showMine) {
  el.showMine.addEventListener("click", () => {
    if (!myProposal) return;
    drawProposal(myProposal);
    say("Showing your proposal: green links are added, dashed ones removed.");
  });
}

// --- Events --------------------------------------------------------------------------------

onKeys(() => data, () => ({
  ArrowDown: () => moveFocus(1), j: () => moveFocus(1), ArrowUp: () => moveFocus(-1), k: () => moveFocus(-1),
  Tab: switchColumn, ArrowLeft: () => focus.side === "simple" && switchColumn(),
  ArrowRight: () => focus.side === "complex" && switchColumn(),
  Enter: () => choose(focus.side, focus.pos), " ": () => choose(focus.side, focus.pos),
  x: removeSelected, Delete: removeSelected,
  Escape: () => { chosen = { complex: null, simple: null }; selected = null; paint(); },
  s: save,
}));

el.save.addEventListener("click", save);
if (el.recompute) el.recompute.addEventListener("click", recompute);
keepDrawn(el.board, draw, () => dirty);

load();
