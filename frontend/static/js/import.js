// Import page: a large upload is imported by a background job; follow its progress until it ends,
// then show what was imported, or the problems that stopped it (nothing is imported then).

import { api } from "./http.js";

const cfg = JSON.parse(document.getElementById("import-config").textContent);
const $ = (sel) => document.querySelector(sel);
const status = $("#import-status");
const outcome = $("#import-outcome");

function section(title, items, className) {
  const box = document.createElement("section");
  box.className = `card ${className}`;
  const heading = document.createElement("h2");
  heading.textContent = title;
  box.append(heading);
  const list = document.createElement("ul");
  for (const text of items) {
    const item = document.createElement("li");
    const code = document.createElement(className === "problems" ? "code" : "span");
    code.textContent = text;
    item.append(code);
    list.append(item);
  }
  if (items.length) box.append(list);
  return box;
}

function finished(job) {
  $("#import-cancel").hidden = true;
  if (job.status === "succeeded") {
    const r = job.result;
    const box = section("Imported", r.warnings || [], "ok");
    const line = document.createElement("p");
    line.textContent = `${r.articles} articles, ${r.documents} documents, ${r.sentences} sentences, ${r.pairs} pairs (${r.format}).`;
    box.insertBefore(line, box.children[1] || null);
    if (r.gold_summary) {  // what the file's gold links were stored as (issue 18)
      const gold = document.createElement("p");
      gold.className = "import-gold";
      gold.textContent = `Gold: ${r.gold_summary}.`;
      box.insertBefore(gold, line.nextSibling);
    }
    const back = document.createElement("a");
    back.href = cfg.project_url;
    back.textContent = "Back to the project";
    box.append(back);
    outcome.replaceChildren(box);
  } else if (job.status === "failed") {
    const problems = job.result?.problems?.length ? job.result.problems : [job.error || "the import failed"];
    outcome.replaceChildren(section("Nothing was imported", problems, "problems"));
  } else {
    outcome.replaceChildren(section("Import cancelled: nothing was imported", [], "problems"));
  }
}

async function poll() {
  let job;
  try {
    job = await api(cfg.job_api);
  } catch (err) {
    status.textContent = err.message;
    setTimeout(poll, 3000);
    return;
  }
  $("#import-progress").value = job.progress;
  status.textContent = `${job.status} · ${Math.round(job.progress)}%${job.message ? ` · ${job.message}` : ""}`;
  if (["succeeded", "failed", "cancelled"].includes(job.status)) finished(job);
  else setTimeout(poll, 1500);
}

$("#import-cancel").addEventListener("click", async () => {
  if (!confirm("Cancel this import? Nothing of it will be kept.")) return;
  try {
    await api(cfg.cancel_api, { method: "POST", body: "{}" });
  } catch (err) {
    status.textContent = err.message;
  }
});

$("#import-cancel").disabled = false; // enabled only once it works (the page may be clicked before this module ran)
poll();
