// "My labels": the annotator's own labels of one project, newest first, with filters and search
// (GET /api/labels/?mine=1&project=…), inline edits (PATCH /api/labels/<id>/, an explicit change
// the server keeps in the label's history) and that history (GET /api/labels/<id>/history/).

import { api } from "./http.js";

const cfg = JSON.parse(document.getElementById("my-labels-config").textContent);
const $ = (sel) => document.querySelector(sel);
const form = $("#filters");
const tbody = $("#labels tbody");
const more = $("#more");
const rated = cfg.scheme.widget === "ratings";  // a point per dimension, not one value (SchemeKind.page_data)
const dimensions = cfg.scheme.dimensions;
const valueName = new Map(cfg.scheme.values.map((v) => [v.value, v.name]));
const FILTERS = ["value", "article", "since", "until", "q"];

const labelOf = new WeakMap();  // table row → the label it shows
let next = null;     // URL of the next page of results
let request = 0;     // answers to an older request than the latest are dropped
let searchTimer = null;

function say(text, isError = false) {
  const status = $("#status");
  status.textContent = text;
  status.classList.toggle("error", isError);
}

const describe = (label) => (rated ? dimensions.map((d) => `${d} ${label.ratings?.[d] ?? "–"}`).join(", ")
  : valueName.get(label.value) ?? label.value);
const when = (iso) => new Date(iso).toLocaleString();

function node(tag, text = "", className = "") {
  const n = document.createElement(tag);
  if (text) n.textContent = text;
  if (className) n.className = className;
  return n;
}

function button(text, action, secondary = true) {
  const b = node("button", text, secondary ? "button secondary small" : "small");
  b.type = "button";
  b.dataset.action = action;
  return b;
}

// --- Listing ----------------------------------------------------------------------------------

// The filters as API parameters; dates are the annotator's local days.
function params() {
  const out = new URLSearchParams({ mine: "1", project: String(cfg.project) });
  for (const name of FILTERS) {
    const field = form.elements[name];
    const value = field?.value.trim();
    if (!value) continue;
    if (name === "since") out.set(name, new Date(`${value}T00:00:00`).toISOString());
    else if (name === "until") out.set(name, new Date(`${value}T23:59:59.999`).toISOString());
    else out.set(name, value);
  }
  return out;
}

// The filters live in the page's address too (replaced, not pushed): a reload keeps them.
function remember() {
  const shown = new URLSearchParams();
  for (const name of FILTERS) {
    const value = form.elements[name]?.value.trim();
    if (value) shown.set(name, value);
  }
  const query = shown.toString();
  history.replaceState(null, "", query ? `?${query}` : location.pathname);
}

function restore() {
  const given = new URLSearchParams(location.search);
  for (const name of FILTERS) {
    if (given.has(name) && form.elements[name]) form.elements[name].value = given.get(name);
  }
}

function valueCell(td, label) {
  td.replaceChildren(node("span", describe(label), "shown"));
  if (label.comment) td.append(node("span", label.comment, "comment"));
}

function row(label) {
  const tr = document.createElement("tr");
  tr.dataset.label = label.id;
  labelOf.set(tr, label);
  const value = node("td", "", "value");
  valueCell(value, label);
  const actions = node("td", "", "actions");
  if (cfg.editable) actions.append(button("Edit", "edit"), " ");
  actions.append(button("History", "history"));
  tr.append(node("td", label.article_title), node("td", label.complex_text, "text complex"),
    node("td", label.simple_text, "text simple"), value, node("td", when(label.updated_at), "when"), actions);
  return tr;
}

async function list(url = null) {
  const mine = ++request;
  say(url ? "Loading more…" : "Loading…");
  try {
    const data = await api(url || `${cfg.api}?${params()}`);
    if (mine !== request) return;
    if (!url) tbody.replaceChildren();
    tbody.append(...data.results.map(row));
    if (!tbody.children.length) {
      const empty = node("td", "No labels match.");
      empty.colSpan = 6;
      const tr = node("tr", "", "empty");
      tr.append(empty);
      tbody.append(tr);
    }
    next = data.next;
    more.hidden = !next;
    $("#count").textContent = `${data.count} label${data.count === 1 ? "" : "s"}`;
    say("");
  } catch (err) {
    if (mine === request) say(err.message, true);
  }
}

function refresh() {
  remember();
  list();
}

// --- Editing ----------------------------------------------------------------------------------

function select(name, options, chosen, label) {
  const s = node("select");
  s.name = name;
  s.setAttribute("aria-label", label);
  for (const [value, text] of options) {
    const o = node("option", text);
    o.value = value;
    o.selected = value === chosen;
    s.append(o);
  }
  return s;
}

function startEdit(tr) {
  if (tr.querySelector("form.edit")) return;
  const label = labelOf.get(tr);
  const td = tr.querySelector("td.value");
  const edit = node("form", "", "edit");
  if (rated) {
    const points = cfg.scheme.values.map((v) => [v.value, v.name]);
    for (const d of dimensions) {
      const l = node("label", `${d} `);
      l.append(select(d, points, String(label.ratings?.[d] ?? ""), d));
      edit.append(l);
    }
  } else {
    edit.append(select("value", cfg.scheme.values.map((v) => [v.value, v.name]), label.value, "Label"));
  }
  const comment = node("input");
  comment.name = "comment";
  comment.value = label.comment;
  comment.maxLength = 5000;
  comment.placeholder = "Comment";
  comment.setAttribute("aria-label", "Comment");
  const buttons = node("div", "", "buttons");
  const save = node("button", "Save", "small");
  save.type = "submit";
  buttons.append(save, button("Cancel", "cancel"));
  edit.append(comment, buttons);
  td.replaceChildren(edit);
  edit.querySelector("select").focus();
}

function stopEdit(tr) {
  valueCell(tr.querySelector("td.value"), labelOf.get(tr));
  tr.querySelector("[data-action=edit]")?.focus();
}

async function saveEdit(tr, edit) {
  const body = { comment: edit.elements.comment.value };
  if (rated) body.ratings = Object.fromEntries(dimensions.map((d) => [d, edit.elements[d].value]));
  else body.value = edit.elements.value.value;
  edit.querySelectorAll("button, select, input").forEach((c) => { c.disabled = true; });
  try {
    const label = await api(`${cfg.api}${labelOf.get(tr).id}/`, { method: "PATCH", body: JSON.stringify(body) });
    const before = labelOf.get(tr);
    const changed = describe(label) !== describe(before) || label.comment !== before.comment;
    labelOf.set(tr, { ...before, ...label });
    tr.querySelector("td.when").textContent = when(label.updated_at);
    tr.classList.toggle("changed", changed);
    stopEdit(tr);
    say(changed ? `Changed to ${describe(label)}: the earlier label is kept in its history.` : "Nothing changed.");
    if (changed && tr.nextElementSibling?.classList.contains("history")) await showHistory(tr, true);
  } catch (err) {
    edit.querySelectorAll("button, select, input").forEach((c) => { c.disabled = false; });
    say(`Not saved: ${err.message}`, true);
  }
}

// --- History ----------------------------------------------------------------------------------

function change(entry) {
  const li = node("li");
  const old = describe({ value: entry.old_value, ratings: entry.old_ratings });
  const now = entry.new_value || Object.keys(entry.new_ratings || {}).length
    ? describe({ value: entry.new_value, ratings: entry.new_ratings }) : "(deleted)";
  li.append(node("time", when(entry.at)), ` · ${old} → `, node("b", now),
    node("span", ` · from ${entry.source}${entry.changed_by ? ` by ${entry.changed_by}` : ""}`, "meta"));
  li.dataset.source = entry.source;
  return li;
}

async function showHistory(tr, reload = false) {
  let panel = tr.nextElementSibling?.classList.contains("history") ? tr.nextElementSibling : null;
  if (panel && !reload) {
    panel.remove();
    tr.querySelector("[data-action=history]").setAttribute("aria-expanded", "false");
    return;
  }
  try {
    const entries = await api(`${cfg.api}${labelOf.get(tr).id}/history/`);
    if (!panel) {
      panel = node("tr", "", "history");
      panel.append(node("td"));
      panel.firstChild.colSpan = 6;
      tr.after(panel);
    }
    const td = panel.firstChild;
    if (!entries.length) td.replaceChildren(node("span", "No changes: this is the label as you first gave it.", "meta"));
    else {
      const ol = node("ol");
      ol.append(...entries.map(change));
      td.replaceChildren(node("b", "History"), ol);
    }
    tr.querySelector("[data-action=history]").setAttribute("aria-expanded", "true");
  } catch (err) {
    say(`Could not load the history: ${err.message}`, true);
  }
}

// --- Events -----------------------------------------------------------------------------------

form.addEventListener("submit", (e) => { e.preventDefault(); clearTimeout(searchTimer); refresh(); });
form.addEventListener("change", (e) => { if (e.target.name !== "q") refresh(); });
form.addEventListener("input", (e) => {
  if (e.target.name !== "q") return;
  clearTimeout(searchTimer);
  searchTimer = setTimeout(refresh, 350);
});
form.addEventListener("reset", () => setTimeout(refresh));
more.addEventListener("click", () => next && list(next));

tbody.addEventListener("click", (e) => {
  const b = e.target.closest("button[data-action]");
  if (!b) return;
  const tr = b.closest("tr");
  if (b.dataset.action === "edit") startEdit(tr);
  else if (b.dataset.action === "cancel") stopEdit(tr);
  else if (b.dataset.action === "history") showHistory(tr);
});
tbody.addEventListener("submit", (e) => {
  e.preventDefault();
  saveEdit(e.target.closest("tr"), e.target);
});
tbody.addEventListener("keydown", (e) => {
  const edit = e.target.closest("form.edit");
  if (edit && e.key === "Escape") { e.preventDefault(); stopEdit(edit.closest("tr")); }
});
// Back/Forward to a page kept in the back-forward cache: list the labels as they are now.
window.addEventListener("pageshow", (e) => { if (e.persisted) list(); });

restore();
list();
