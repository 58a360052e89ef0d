// The two sides of a pair on the labelling page, with word-level differences marked.
//
// The server computes them (annotation/services/review/word_diff.py: difflib over the words of each whole
// side, so reordered sentences are not marked changed) and sends character spans of changed words;
// here they are mapped onto the tokens that are drawn.

const TOKEN = /\s+|[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*|[^\s\p{L}\p{N}]/gu;
const isWord = (t) => /[\p{L}\p{N}]/u.test(t);

export function tokenize(text) {
  return text.match(TOKEN) || [];
}

// Word positions (as tokenizeSide numbers them) inside the changed spans [[sentence, start, end], ...].
export function changedWords(tokens, spans) {
  const bySentence = new Map();
  for (const [index, start, end] of spans || []) {
    if (!bySentence.has(index)) bySentence.set(index, []);
    bySentence.get(index).push([start, end]);
  }
  const changed = new Set();
  for (const [index, sentenceTokens] of tokens) {
    const ranges = bySentence.get(index);
    if (!ranges) continue;
    let offset = 0;
    for (const { t, k } of sentenceTokens) {
      const length = [...t].length;  // the server counts code points, not UTF-16 units
      if (k >= 0 && ranges.some(([start, end]) => offset < end && offset + length > start)) changed.add(k);
      offset += length;
    }
  }
  return changed;
}

// Tokenise the sentences of one side; words get a running position across the side.
export function tokenizeSide(sentences) {
  const words = [];
  const tokens = new Map();
  for (const s of sentences) {
    tokens.set(s.index, tokenize(s.text).map((t) => {
      if (!isWord(t)) return { t, k: -1 };
      words.push(t);
      return { t, k: words.length - 1 };
    }));
  }
  return { words, tokens };
}

function sentenceNode(sentence, tokens, changed, mark, extraClass = "") {
  const p = document.createElement("p");
  p.className = `sent ${extraClass}`.trim();
  p.dataset.index = sentence.index;
  const idx = document.createElement("span");
  idx.className = "idx";
  idx.textContent = `#${sentence.index}`;
  p.append(idx, " ");
  if (!tokens) {
    p.append(sentence.text);
    return p;
  }
  // Runs of changed words (with the spaces between them) become one <del>/<ins> element.
  const changedAt = (n) => tokens[n] && tokens[n].k >= 0 && changed.has(tokens[n].k);
  let run = null;
  tokens.forEach(({ t, k }, n) => {
    const space = k < 0 && /^\s+$/.test(t);
    if (k >= 0 && changed.has(k)) {
      if (!run) {
        run = document.createElement(mark);
        run.className = mark;
        p.append(run);
      }
      run.append(t);
    } else if (space && run && changedAt(n + 1)) {
      run.append(t);
    } else {
      run = null;
      p.append(t);
    }
  });
  return p;
}

export function renderSide(container, side, tokens, changed, mark, context) {
  container.replaceChildren();
  if (context) {
    let paragraph = null, previous = null, block = null;
    for (const s of context) {
      if (s.paragraph !== paragraph || (previous !== null && s.index !== previous + 1)) {
        block = document.createElement("div");
        block.className = "paragraph";
        container.append(block);
        paragraph = s.paragraph;
      }
      previous = s.index;
      block.append(s.in_pair ? sentenceNode(s, tokens.get(s.index), changed, mark, "in-pair")
        : sentenceNode(s, null, changed, mark, "context"));
    }
    return;
  }
  const byIndex = new Map(side.sentences.map((s) => [s.index, s]));
  side.groups.forEach((group, n) => {
    if (n > 0) {
      const gap = document.createElement("div");
      gap.className = "gap";
      gap.textContent = "…";
      container.append(gap);
    }
    const box = document.createElement("div");
    box.className = side.groups.length > 1 || group.length > 1 ? "group multi" : "group";
    for (const index of group) box.append(sentenceNode(byIndex.get(index), tokens.get(index), changed, mark));
    container.append(box);
  });
}
