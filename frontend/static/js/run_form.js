// Project page: the "Align" form, generated from the methods' option schemas (GET /api/methods/).
// Parameters are checked by the server before the run is queued; a refusal is shown here with the
// valid options, and everything the user typed stays in the form.

import { csrfToken, sendToLoginIfSignedOut } from "./http.js";

const form = document.querySelector("#start-run");
const box = document.querySelector("#method-options");
const message = document.querySelector("#run-form-message");
const methodSelect = form.querySelector("[name=method]");
const modelSelect = form.querySelector("[name=model_version]");
const json = form.querySelector("[name=params]");
let schemas = {};
let versions = [];

function say(text, valid = []) {
  message.textContent = text;
  message.classList.toggle("error", Boolean(text));
  if (valid.length) {
    const ul = document.createElement("ul");
    ul.className = "valid-options";
    for (const v of valid) {
      const li = document.createElement("li");
      li.textContent = v;
      ul.append(li);
    }
    message.append(ul);
  }
}

function field(option) {
  const label = document.createElement("label");
  label.title = option.help || "";
  label.append(`${option.name} `);
  let input;
  if (option.choices) {
    input = document.createElement("select");
    input.append(new Option("(default)", ""));
    for (const c of option.choices) input.append(new Option(c, c, false, false));
  } else if (option.type === "bool") {
    input = document.createElement("select");
    for (const [text, value] of [["(default)", ""], ["yes", "true"], ["no", "false"]]) input.append(new Option(text, value));
  } else {
    input = document.createElement("input");
    input.type = option.type === "str" ? "text" : "number";
    if (input.type === "number") {
      input.step = option.type === "int" ? "1" : "any";
      if (option.min != null) input.min = option.min;
      if (option.max != null) input.max = option.max;
      input.size = 6;
    }
    if (option.default != null) input.placeholder = String(option.default);
  }
  input.dataset.option = option.name;
  input.dataset.type = option.type;
  label.append(input);
  return label;
}

function render() {
  const method = schemas[methodSelect.value];
  box.innerHTML = "";
  if (!method) return;
  for (const option of method.options) {
    if (["float", "int", "bool", "str"].includes(option.type)) box.append(field(option));
  }
  const kinds = method.model_kinds;
  modelSelect.innerHTML = "";
  modelSelect.append(new Option(kinds.length ? "(default)" : "(no model)", ""));
  for (const v of versions.filter((v) => kinds.includes(v.kind))) modelSelect.append(new Option(`${v.name} (${v.kind})`, v.id));
  modelSelect.closest("label").hidden = kinds.length === 0;
}

function collect() {
  let params;
  try {
    params = JSON.parse(json.value.trim() || "{}");
  } catch (err) {
    throw new Error(`Parameters (JSON) is not valid JSON: ${err.message}`);
  }
  if (params === null || typeof params !== "object" || Array.isArray(params)) throw new Error("Parameters (JSON) must be a JSON object");
  for (const input of box.querySelectorAll("[data-option]")) {
    const raw = input.value.trim();
    if (raw === "") continue;
    const type = input.dataset.type;
    params[input.dataset.option] = type === "bool" ? raw === "true" : type === "int" || type === "float" ? Number(raw) : raw;
  }
  return params;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  say("");
  let params;
  try {
    params = collect();
  } catch (err) {
    say(err.message);
    return;
  }
  const body = { project: Number(form.dataset.project), method: methodSelect.value, params };
  if (modelSelect.value) body.model_version = Number(modelSelect.value);
  const response = await fetch(form.dataset.runsApi, {
    method: "POST", credentials: "same-origin", body: JSON.stringify(body),
    headers: { Accept: "application/json", "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
  });
  const data = await response.json().catch(() => ({}));
  if (sendToLoginIfSignedOut(response.status, data)) return;
  if (!response.ok) {
    const detail = data.detail || Object.entries(data).map(([k, v]) => `${k}: ${[v].flat().join(" ")}`).join("; ");
    const valid = data.valid_options || [];
    // the list below replaces the message's own inline "; valid: ..." tail
    say(`Run not started: ${valid.length ? `${String(detail).split("; valid: ")[0]}. Valid options:` : detail}`, valid);
    return;
  }
  say("");
  flash(`Alignment run #${data.id} (${data.method}) queued.`, `success run-${data.id}`);
});

// The same message list as the server's (base.html); project.js adds the run to the table on its
// next poll and removes the message once the run has finished.
function flash(text, className) {
  let list = document.querySelector("main .messages");
  if (!list) {
    list = document.createElement("ul");
    list.className = "messages";
    document.querySelector("main").prepend(list);
  }
  const li = document.createElement("li");
  li.className = className;
  li.textContent = text;
  list.append(li);
}

methodSelect.addEventListener("change", render);

try {
  const response = await fetch(form.dataset.methodsApi, { credentials: "same-origin", headers: { Accept: "application/json" } });
  const data = await response.json();
  schemas = Object.fromEntries(data.methods.map((m) => [m.name, m]));
  versions = data.model_versions || [];
  render();
} catch (err) {
  console.warn("method schemas unavailable; the form posts as typed", err);
}
