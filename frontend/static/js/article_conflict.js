// Safe tabs in the whole-article view: a save is based on the version of the annotator's links the
// page loaded; when they changed elsewhere since (another tab, the queue, an undo) the server answers
// 409 with what changed, and this dialog asks, as the queue's conflict dialog does:
//   keep mine (k)   — save this tab's links as they are on screen over the other changes;
//   take theirs (t) — drop this tab's unsaved changes and show the links as saved now;
//   merge (m)       — the saved links with this tab's own changes (added, relabelled, removed) on top.
// Esc closes the dialog and leaves this tab's links on screen, unsaved.
// Links are {complex: [c], simple: [s], label}; one complex–simple link each.

const key = (link) => `${link.complex[0]}:${link.simple[0]}`;
const byKey = (links) => new Map(links.map((link) => [key(link), { ...link }]));

// The links on `base` (what a tab loaded) no longer in `links`: the ones this tab removed.
export function removedSince(base, links) {
  const onScreen = new Set(links.map(key));
  return base.filter((link) => !onScreen.has(key(link))).map((link) => ({ complex: link.complex, simple: link.simple }));
}

// Theirs, with this tab's changes since `base` applied on top (a link both relabelled: mine wins).
export function merge(base, mine, theirs) {
  const before = byKey(base), now = byKey(mine), out = byKey(theirs);
  for (const [k, link] of now) if (!before.has(k) || before.get(k).label !== link.label) out.set(k, { ...link });
  for (const k of before.keys()) if (!now.has(k)) out.delete(k);
  return [...out.values()].sort((x, y) => x.complex[0] - y.complex[0] || x.simple[0] - y.simple[0]);
}

const name = (link) => `C${link.complex[0]} → S${link.simple[0]}`;

function changeLines(changes) {
  if (!changes) return ["Your links of this pair were saved from elsewhere since this page loaded them."];
  return [
    ...changes.added.map((l) => `added ${name(l)} (${l.label})`),
    ...changes.removed.map((l) => `removed ${name(l)}`),
    ...changes.relabelled.map((l) => `relabelled ${name(l)}: ${l.from} → ${l.to}`),
  ];
}

// Show the dialog for a 409 payload; resolves to "mine", "theirs", "merge" or null (Esc).
export function askConflict(dialog, changes) {
  const list = dialog.querySelector("#conflict-changes");
  list.replaceChildren(...changeLines(changes).map((text) => Object.assign(document.createElement("li"), { textContent: text })));
  dialog.hidden = false;
  const buttons = { mine: dialog.querySelector("#conflict-mine"), theirs: dialog.querySelector("#conflict-theirs"),
    merge: dialog.querySelector("#conflict-merge") };
  buttons.merge.focus();
  return new Promise((resolve) => {
    const done = (choice) => {
      dialog.hidden = true;
      document.removeEventListener("keydown", onKey, true);
      for (const button of Object.values(buttons)) button.onclick = null;
      resolve(choice);
    };
    const onKey = (ev) => {
      const choice = { k: "mine", t: "theirs", m: "merge", Escape: null }[ev.key];
      if (ev.key === "Tab" || ev.key === "Enter" || ev.key === " ") { ev.stopPropagation(); return; }
      ev.preventDefault();
      ev.stopPropagation();
      if (choice !== undefined) done(choice);
    };
    document.addEventListener("keydown", onKey, true);
    for (const [choice, button] of Object.entries(buttons)) button.onclick = () => done(choice);
  });
}
