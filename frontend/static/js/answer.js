// The answer widget of the labelling page, driven by the scheme's description from the server
// (annotation/label_schemes: SchemeKind.page_data): widget "choices" takes one value, "ratings" a
// point of the scale for each dimension. A new scheme kind that asks with one of these widgets needs
// no change here; the page's template draws the buttons (annotate/label.html).

function choicesWidget(scheme, container) {
  const valueName = new Map(scheme.values.map((v) => [v.value, v.name]));
  let choice = null;
  return {
    reset() { choice = null; },
    render() {
      container.querySelectorAll(".choice").forEach((b) => b.classList.toggle("chosen", b.dataset.value === choice));
    },
    answered: () => choice !== null,
    payload: () => ({ value: choice }),
    // Choosing a value answers the item: the page submits it once the minimum time has passed.
    choose(value) {
      const again = choice === value;
      choice = value;
      this.render();
      return { complete: true, again };
    },
    clicked(button) { return button.dataset.value; },
    key: () => false,
    describe: (label) => valueName.get(label.value) ?? label.value,
  };
}

function ratingsWidget(scheme, container) {
  const dimensions = scheme.dimensions;
  let ratings = {};  // answers per dimension
  let row = 0;       // the current row (dimension)
  const moveRow = (step, widget) => {
    row = (row + step + dimensions.length) % dimensions.length;
    widget.render();
  };
  return {
    reset() { ratings = {}; row = 0; },
    render() {
      container.querySelectorAll(".likert-row").forEach((r, n) => {
        r.classList.toggle("current", n === row);
        r.querySelectorAll(".choice").forEach((b) => b.classList.toggle("chosen", ratings[r.dataset.dimension] === b.dataset.value));
      });
    },
    answered: () => dimensions.every((d) => ratings[d] !== undefined),
    payload: () => ({ ratings }),
    // A point fills the current row and moves to the next (or back to the first empty one).
    choose(value) {
      ratings[dimensions[row]] = value;
      row = Math.min(row + 1, dimensions.length - 1);
      const firstEmpty = dimensions.findIndex((d) => ratings[d] === undefined);
      if (firstEmpty >= 0 && ratings[dimensions[row]] !== undefined) row = firstEmpty;
      this.render();
      return { complete: false, again: false };
    },
    clicked(button) {
      row = Number(button.closest(".likert-row").dataset.row);
      return button.dataset.value;
    },
    // Arrow keys and Tab change the row; true when the key was used.
    key(e, hasItem) {
      if (e.key === "ArrowDown") moveRow(1, this);
      else if (e.key === "ArrowUp") moveRow(-1, this);
      else if (e.key === "Tab" && hasItem) moveRow(e.shiftKey ? -1 : 1, this);
      else return false;
      return true;
    },
    describe: (label) => dimensions.map((d) => `${d} ${label.ratings?.[d] ?? "–"}`).join(", "),
  };
}

const WIDGETS = { choices: choicesWidget, ratings: ratingsWidget };

export function answerWidget(scheme, container) {
  const make = WIDGETS[scheme.widget];
  if (!make) throw new Error(`no answer widget ${scheme.widget}`);
  return { ...make(scheme, container), keyToValue: new Map(scheme.values.map((v) => [String(v.key), v.value])) };
}
