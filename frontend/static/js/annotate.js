// Labelling page: one pair at a time from the queue API, keyboard first.
//
// Every label is written to localStorage (with its client_token) before it is sent and removed
// only when the server confirmed it, so a dropped connection or a closed tab loses nothing: the
// pending label is re-sent on the next load or action, and the server stores it once.
//
// Nothing is overwritten silently: another value for an item labelled before (a second tab, an old
// page) answers 409, and a dialog asks whether to keep the stored label or change it (an explicit
// change, recorded in the label's history). Back/Forward never shows a stale item: a page restored
// from the back-forward cache, or a history step within it, asks the server for the current one.

import { answerWidget } from "./answer.js";
import { csrfToken, sendToLoginIfSignedOut } from "./http.js";
import { changedWords, renderSide, tokenizeSide } from "./pair_text.js";

const cfg = JSON.parse(document.getElementById("annotate-config").textContent);
const $ = (sel) => document.querySelector(sel);
const el = {
  item: $("#item"), done: $("#done"), status: $("#status"), progress: $("#progress"),
  complex: $("#complex"), simple: $("#simple"), complexLevel: $("#complex-level"), simpleLevel: $("#simple-level"),
  title: $("#article-title"), shape: $("#shape"), answer: $("#answer"), comment: $("#comment"),
  submit: $("#submit"), countdown: $("#countdown"), help: $("#help"), context: $("#toggle-context"),
  conflict: $("#conflict"), conflictStored: $("#conflict-stored"), conflictAt: $("#conflict-at"),
  conflictComment: $("#conflict-comment"), conflictNew: $("#conflict-new"),
  conflictKeep: $("#conflict-keep"), conflictChange: $("#conflict-change"),
};
const PENDING_KEY = `alignapp.pending.${cfg.project}`;
const CONTEXT_KEY = "alignapp.showContext";
const answer = answerWidget(cfg.scheme, el.answer);  // choices or ratings, as the scheme's kind asks

let item = null;          // the item on screen (API payload) or null
let minSeconds = cfg.min_seconds;
let shownAt = 0;          // performance.now() when the item appeared
let busy = false;         // a request is in flight: further actions wait
let stopped = false;      // excluded: nothing more to do
let showContext = localStorage.getItem(CONTEXT_KEY) === "1";
let retryTimer = null;
let conflict = null;      // {label} while the conflict dialog asks: keep the stored label or change it
let reloadAfterRun = false;  // Back/Forward came while a request was in flight

// --- Rendering --------------------------------------------------------------------------------

function say(text, kind = "") {
  el.status.textContent = text;
  el.status.className = `status-line ${kind}`.trim();
}

function renderItem() {
  const complex = tokenizeSide(item.complex.sentences);
  const simple = tokenizeSide(item.simple.sentences);
  const deleted = changedWords(complex.tokens, item.diff?.deleted);
  const added = changedWords(simple.tokens, item.diff?.added);
  const ctx = showContext ? item.context : null;
  renderSide(el.complex, item.complex, complex.tokens, deleted, "del", ctx?.complex);
  renderSide(el.simple, item.simple, simple.tokens, added, "ins", ctx?.simple);
  el.context.setAttribute("aria-pressed", String(showContext));
  el.context.firstChild.textContent = showContext ? "Hide context " : "Show context ";
}

// Why the queue picked this item: only in the payload for researchers (and projects that show
// predictions); blind annotators never get it.
function showWhy(current) {
  const why = current.why;
  const line = document.getElementById("why");
  if (!why) {
    line.hidden = true;
    return;
  }
  const parts = [`queue order: ${why.order}`];
  if (why.uncertainty !== null && why.uncertainty !== undefined) parts.push(`uncertainty ${Number(why.uncertainty).toFixed(2)}`);
  if (why.change) parts.push(`run #${why.change.old_run}: ${why.change.old || "no link"} → run #${why.change.new_run}: ${why.change.new || "no link"}`);
  const runs = (why.predictions || []).map((p) => `${p.method} #${p.run} ${p.label || "—"}${p.score === null ? "" : " " + Number(p.score).toFixed(2)}`);
  if (runs.length) parts.push(`predicted by ${runs.join(", ")}`);
  line.textContent = `Why this item: ${parts.join(" · ")}`;
  line.hidden = false;
}

function show(state) {
  if (state.progress) {
    const p = state.progress;
    el.progress.textContent = `${p.done} done · ${p.remaining} left`;
  }
  if (state.min_seconds !== undefined) minSeconds = state.min_seconds;
  if (!el.item) return;
  if (!state.item) {
    item = null;
    el.item.hidden = true;
    el.done.hidden = false;
    if (state.message) el.done.querySelector(".done-message").textContent = state.message;
    return;
  }
  item = state.item;
  el.done.hidden = true;
  el.item.hidden = false;
  el.item.dataset.pair = item.pair;
  el.title.textContent = item.article.title;
  el.shape.textContent = `${item.shape} pair`;
  // an n:m candidate: the label counts for each complex–simple link of it (guidelines: per link)
  document.getElementById("group-note").hidden = item.shape === "1:1";
  showWhy(item);
  el.complexLevel.textContent = item.complex.level;
  el.simpleLevel.textContent = item.simple.level;
  answer.reset();
  el.comment.value = "";
  shownAt = performance.now();
  renderItem();
  answer.render();
  tick();
}

const answered = () => answer.answered();
const waitLeft = () => Math.max(0, minSeconds - (performance.now() - shownAt) / 1000);

function tick() {
  if (!el.submit) return;
  const left = item ? waitLeft() : 0;
  el.countdown.textContent = left > 0 ? `(${Math.ceil(left)} s)` : "";
  el.submit.disabled = !item || busy || left > 0 || !answered();
}
setInterval(tick, 200);

// --- Talking to the server --------------------------------------------------------------------

class NetworkError extends Error {}

async function call(method, path, body) {
  const url = cfg.api + path + (showContext ? (path.includes("?") ? "&" : "?") + "context=1" : "");
  let response;
  try {
    response = await fetch(url, {
      method,
      credentials: "same-origin",
      headers: { Accept: "application/json", "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (err) {
    throw new NetworkError(String(err));
  }
  let data = {};
  try { data = await response.json(); } catch { /* empty or HTML error page */ }
  if (response.status >= 500) throw new NetworkError(`server error ${response.status}`);
  // signed out: the pending label stays in localStorage and is re-sent after logging in
  if (sendToLoginIfSignedOut(response.status, data)) throw new NetworkError("signed out");
  return { ok: response.ok, status: response.status, data };
}

function uuid4() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));  // works outside secure contexts too
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const pending = () => JSON.parse(localStorage.getItem(PENDING_KEY) || "null");

function refused(res) {
  if (res.status === 403 && res.data.excluded) {
    stopped = true;
    item = null;
    if (el.item) el.item.hidden = true;
    say(res.data.detail, "error");
    return;
  }
  say(res.data.detail || Object.values(res.data).flat().join(" ") || `request failed (${res.status})`, "error");
}

function scheduleRetry() {
  clearTimeout(retryTimer);
  retryTimer = setTimeout(() => run(null), 3000);
}

// Re-send a label the server has not confirmed. Returns the server's answer (with the next item),
// null when nothing was pending; throws NetworkError when the server is still unreachable.
async function flushPending() {
  const label = pending();
  if (!label) return null;
  let res;
  try {
    res = await call("POST", "submit/", label);
  } catch (err) {
    say("Connection lost: your last label is kept in this browser and will be sent again.", "error");
    scheduleRetry();
    throw err;
  }
  localStorage.removeItem(PENDING_KEY);
  res.label = label;
  if (res.ok) show(res.data);
  else if (res.status === 409 && res.data.code === "conflict") showConflict(label, res.data.stored);
  else refused(res);
  return res;
}

// Run one action at a time; a pending label goes first (when the server took it, its answer
// already moved the page on and the action is dropped: the item it was meant for is gone).
async function run(action) {
  if (busy || stopped) return;
  busy = true;
  tick();
  try {
    const flushed = await flushPending();
    if (flushed?.ok) {
      if (flushed.label.change) say(`Changed to ${describe(flushed.label)}: the earlier label is kept in its history.`);
      else say(flushed.data.created ? "Saved." : "Saved (the server already had it).");
      return;
    }
    if (flushed?.status === 409) return;  // the conflict dialog decides what comes next
    if (action) await action();
  } catch (err) {
    if (!(err instanceof NetworkError)) throw err;
    if (!pending()) say("Connection problem, please try again.", "error");
  } finally {
    busy = false;
    tick();
    if (reloadAfterRun) {
      reloadAfterRun = false;
      setTimeout(reloadCurrent);
    }
  }
}

function submit() {
  if (busy || !item || !answered()) return;
  if (waitLeft() > 0) {
    say(`Please look a little longer: ${Math.ceil(waitLeft())} s to go.`);
    return;
  }
  const label = {
    pair: item.pair, client_token: uuid4(), comment: el.comment.value.trim(),
    seconds: Math.round((performance.now() - shownAt) / 100) / 10,
    ...answer.payload(),
  };
  localStorage.setItem(PENDING_KEY, JSON.stringify(label));
  run(null);
}

const skip = () => item && run(async () => {
  const res = await call("POST", "skip/", { pair: item.pair });
  if (res.ok) { show(res.data); say("Skipped: it comes back at the end."); } else refused(res);
});

const undo = () => run(async () => {
  const res = await call("POST", "undo/", {});
  if (res.ok) { show(res.data); say("Undone: label this item again."); } else refused(res);
});

const load = (message = "") => run(async () => {
  const res = await call("GET", "next/");
  if (res.ok) { show(res.data); if (message) say(message); } else refused(res);
});

// --- A label that conflicts with the one given before ----------------------------------------

const describe = (label) => answer.describe(label);

function showConflict(label, stored) {
  conflict = { label };
  el.conflictStored.textContent = describe(stored);
  el.conflictAt.dateTime = stored.updated_at;
  el.conflictAt.textContent = new Date(stored.updated_at).toLocaleString();
  el.conflictComment.hidden = !stored.comment;
  el.conflictComment.textContent = stored.comment ? `Your comment then: “${stored.comment}”` : "";
  el.conflictNew.textContent = describe(label);
  el.conflict.hidden = false;
  el.conflictKeep.focus();
  say("You labelled this item before: keep that label, or change it.");
}

function closeConflict() {
  const open = conflict;
  conflict = null;
  if (el.conflict) el.conflict.hidden = true;
  return open;
}

// Keep: nothing is written; the page moves on to whatever the queue serves now.
function keepStored() {
  if (closeConflict()) load("Kept your earlier label.");
}

// Change: the same label again, as an explicit change (kept in localStorage until confirmed).
function changeStored() {
  const open = closeConflict();
  if (!open) return;
  localStorage.setItem(PENDING_KEY, JSON.stringify({ ...open.label, change: true }));
  run(null);
}

function conflictKey(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  switch (e.key) {
    case "k": case "Escape": e.preventDefault(); keepStored(); break;
    case "c": e.preventDefault(); changeStored(); break;
    case "Tab": {  // focus stays in the dialog
      e.preventDefault();
      (document.activeElement === el.conflictKeep ? el.conflictChange : el.conflictKeep).focus();
      break;
    }
    case "Enter": case " ": break;  // the focused button's own click
    default: e.preventDefault();    // nothing else happens while the dialog asks
  }
}

// --- Back/Forward -------------------------------------------------------------------------------

function reloadCurrent() {
  if (!el.item || stopped) return;
  closeConflict();  // its question may be stale as well; nothing was written
  if (busy) { reloadAfterRun = true; return; }
  load();
}

async function toggleContext() {
  showContext = !showContext;
  localStorage.setItem(CONTEXT_KEY, showContext ? "1" : "0");
  if (!item) return;
  if (showContext && !item.context) {
    try {
      const res = await call("GET", `context/${item.pair}/`);
      if (res.ok && item && res.data.pair === item.pair) item.context = res.data.context;
    } catch { say("Could not load the context.", "error"); }
  }
  renderItem();
}

// --- Input ------------------------------------------------------------------------------------

function choose(value) {
  const { complete, again } = answer.choose(value);
  tick();
  if (!complete) return;
  if (waitLeft() <= 0) submit();
  else say(`${again ? "Still chosen" : "Chosen"}: you can submit in ${Math.ceil(waitLeft())} s.`);
}

const toggleHelp = (visible = el.help.hidden) => { el.help.hidden = !visible; };

document.addEventListener("keydown", (e) => {
  if (conflict) { conflictKey(e); return; }
  const typing = e.target instanceof HTMLTextAreaElement || e.target instanceof HTMLInputElement;
  if (typing) {
    if (e.key === "Escape") { e.target.blur(); e.preventDefault(); }
    else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); submit(); }
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (!el.help.hidden) {
    if (e.key === "Escape" || e.key === "?") { toggleHelp(false); e.preventDefault(); }
    return;
  }
  if (e.key === "?") { toggleHelp(true); e.preventDefault(); return; }
  if (e.key === "Enter" && e.target instanceof HTMLButtonElement) return;  // the button's own click
  if (!el.item || stopped) return;
  if (answer.keyToValue.has(e.key) && item) { e.preventDefault(); choose(answer.keyToValue.get(e.key)); return; }
  if (answer.key(e, Boolean(item))) { e.preventDefault(); return; }
  switch (e.key) {
    case "Enter": e.preventDefault(); submit(); break;
    case "u": e.preventDefault(); undo(); break;
    case "s": e.preventDefault(); skip(); break;
    case "c": e.preventDefault(); el.comment.focus(); break;
    case "x": e.preventDefault(); toggleContext(); break;
    default: break;
  }
});

el.answer?.addEventListener("click", (e) => {
  const button = e.target.closest(".choice");
  if (!button) return;
  choose(answer.clicked(button));
  button.blur();
});
el.submit?.addEventListener("click", submit);
el.context?.addEventListener("click", (e) => { e.currentTarget.blur(); toggleContext(); });
$("#close-help").addEventListener("click", () => toggleHelp(false));
window.addEventListener("online", () => pending() && run(null));
el.conflictKeep?.addEventListener("click", keepStored);
el.conflictChange?.addEventListener("click", changeStored);
window.addEventListener("pageshow", (e) => { if (e.persisted) reloadCurrent(); });
window.addEventListener("popstate", reloadCurrent);

// --- Guidelines: shown on the first visit (per project and guidelines version), and with `g` --------

const guidelines = $("#guidelines");
const GUIDELINES_KEY = `alignapp.guidelines.${cfg.project}`;
const showGuidelines = (visible) => {
  guidelines.hidden = !visible;
  if (visible) {  // from the top: focusing the button at the end must not scroll past the first rules
    $("#close-guidelines").focus({ preventScroll: true });
    guidelines.querySelector(".guidelines-card").scrollTop = 0;
  } else localStorage.setItem(GUIDELINES_KEY, cfg.guidelines_version);
};
if (guidelines) {
  $("#close-guidelines").addEventListener("click", () => showGuidelines(false));
  // capture phase: while the guidelines are open no key reaches the labelling shortcuts
  document.addEventListener("keydown", (e) => {
    if (conflict || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.target instanceof HTMLTextAreaElement || e.target instanceof HTMLInputElement) return;
    if (!guidelines.hidden) {
      if (e.key === "Escape" || e.key === "g") showGuidelines(false);
      if (e.key !== "Tab" && e.key !== "Enter" && e.key !== " ") { e.preventDefault(); e.stopImmediatePropagation(); }
    } else if (e.key === "g" && el.help.hidden) {
      e.preventDefault(); e.stopImmediatePropagation(); showGuidelines(true);
    }
  }, true);
  if (localStorage.getItem(GUIDELINES_KEY) !== cfg.guidelines_version) showGuidelines(true);
}

if (el.item) load();
