// The two-column board shared by the whole-article alignment page (align_article.js) and the
// paragraph-correction page (paragraphs.js): page config, status line, version choices, the links
// drawn as SVG curves with a knob to click, keyboard dispatch and redrawing when the layout moves.

export const SIDES = ["complex", "simple"];
const SVG = "http://www.w3.org/2000/svg";

export const $ = (sel) => document.querySelector(sel);

export function pageConfig() {
  return JSON.parse(document.getElementById("page-config").textContent);
}

// "?complex=..&simple=.." for the versions on screen ("" when none).
export function queryString(query) {
  const params = new URLSearchParams(query);
  return params.toString() ? `?${params}` : "";
}

// say(text, error): the status line's text, red when error.
export function statusLine(status) {
  return (text, error = false) => {
    status.textContent = text;
    status.classList.toggle("error", error);
  };
}

// GET a JSON payload: {response, payload}.
export async function getJson(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  return { response, payload: await response.json() };
}

// The version <select>s of both sides, the versions on screen chosen.
export function fillVersions(data) {
  for (const side of SIDES) {
    $(`#choose-${side}`).replaceChildren(...data.versions.map((v) => new Option(v.level, v.id, false, v.id === data[side].id)));
  }
}

// Sizes the SVG over the board and empties it; returns the board's box.
export function clearBoard(board, svg) {
  const box = board.getBoundingClientRect();
  svg.setAttribute("width", box.width);
  svg.setAttribute("height", box.height);
  svg.replaceChildren();
  return box;
}

// The two ends of a link from the right edge of a (complex) to the left edge of b (simple), at
// mid-height but at most `cap` below their tops; coordinates relative to the board's `box`.
export function ends(box, a, b, cap = Infinity) {
  return [a.right - box.left, a.top + Math.min(a.height / 2, cap) - box.top,
    b.left - box.left, b.top + Math.min(b.height / 2, cap) - box.top];
}

// One link: the visible curve (class `link <cls>`), a wider invisible one to click (carrying
// `dataset`) and a knob at its middle, the easy place to click it.
export function drawLink(svg, [x1, y1, x2, y2], cls, dataset, onClick) {
  const d = `M${x1},${y1} C${(x1 + x2) / 2},${y1} ${(x1 + x2) / 2},${y2} ${x2},${y2}`;
  const line = document.createElementNS(SVG, "path");
  line.setAttribute("d", d);
  line.setAttribute("class", `link ${cls}`);
  const hit = document.createElementNS(SVG, "path");
  hit.setAttribute("d", d);
  hit.setAttribute("class", "hit");
  Object.assign(hit.dataset, dataset);
  hit.addEventListener("click", onClick);
  const knob = document.createElementNS(SVG, "circle");
  knob.setAttribute("cx", (x1 + x2) / 2);
  knob.setAttribute("cy", (y1 + y2) / 2);
  knob.setAttribute("r", 5);
  knob.setAttribute("class", `handle ${cls}`);
  Object.assign(knob.dataset, hit.dataset);
  knob.addEventListener("click", onClick);
  svg.append(line, hit, knob);
}

// Keys act once the page has loaded (ready()) and not while typing in a field or with a modifier;
// keys() gives the handlers by ev.key.
export function onKeys(ready, keys) {
  document.addEventListener("keydown", (ev) => {
    if (!ready() || ev.target.closest("select, input, textarea") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const handled = keys()[ev.key];
    if (handled) {
      ev.preventDefault();
      handled();
    }
  });
}

// Redraw the links when the board moves or resizes; ask before leaving with unsaved changes.
export function keepDrawn(board, draw, isDirty) {
  window.addEventListener("resize", draw);
  window.addEventListener("scroll", draw, { passive: true });
  window.addEventListener("beforeunload", (ev) => {
    if (isDirty()) ev.preventDefault();
  });
  new ResizeObserver(draw).observe(board);
}

// "C3–4" for complex sentences [3, 4]: runs of consecutive indices as ranges.
export function spans(prefix, indices) {
  const runs = [];
  for (const i of [...indices].sort((x, y) => x - y)) {
    const last = runs[runs.length - 1];
    if (last && i === last[1] + 1) last[1] = i;
    else runs.push([i, i]);
  }
  return prefix + runs.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(",");
}

// The sentences of one column (a document by paragraph): <p class="asent"> nodes in order, each
// with data-side/-index/-pos; onClick(node-with-shiftKey) on a click. Returns the nodes.
export function renderSentences(col, side, doc, onClick) {
  col.querySelector(".level").textContent = doc.level;
  const body = col.querySelector(".col-body");
  body.replaceChildren();
  const nodes = [];
  for (const paragraph of doc.paragraphs) {
    const block = document.createElement("div");
    block.className = "para";
    block.dataset.paragraph = paragraph.index;
    for (const s of paragraph.sentences) {
      const p = document.createElement("p");
      p.className = "asent";
      p.dataset.side = side;
      p.dataset.index = s.index;
      p.dataset.pos = nodes.length;
      const idx = document.createElement("span");
      idx.className = "idx";
      idx.textContent = s.index;
      p.append(idx, " ", s.text);
      p.addEventListener("click", (ev) => onClick({ dataset: p.dataset, shiftKey: ev.shiftKey }));
      p.addEventListener("mousedown", (ev) => { if (ev.shiftKey) ev.preventDefault(); }); // shift-click: no text selection
      block.append(p);
      nodes.push(p);
    }
    body.append(block);
  }
  return nodes;
}
