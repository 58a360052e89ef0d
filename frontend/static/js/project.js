// Project page: keep the alignment-run table live while any run is queued or running; a run's
// "queued" message at the top of the page goes away once that run has finished.
const table = document.querySelector("#runs");
const FINISHED = new Set(["succeeded", "failed", "cancelled"]);

// The same format as the server's `duration` filter (annotation/templatetags/alignapp.py).
export function formatSeconds(total) {
  const s = Math.max(0, Math.round(total));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
}

function duration(run) {
  if (!run.started_at) return "";
  const end = run.finished_at ? new Date(run.finished_at) : new Date();
  return formatSeconds((end - new Date(run.started_at)) / 1000);
}

function render(run) {
  let row = table.querySelector(`tr[data-run="${run.id}"]`);
  if (!row) {
    table.querySelector("tr.empty")?.remove();
    row = document.createElement("tr");
    row.dataset.run = run.id;
    row.innerHTML = `<td><a class="run-link" href="/projects/${run.project}/runs/${run.id}/">#${run.id}</a></td><td></td><td class="status"></td><td><progress max="100"></progress> <span class="pct"></span></td><td class="pairs"></td><td class="time"></td><td class="msg"></td>`;
    table.tBodies[0].prepend(row);
  }
  row.children[1].textContent = run.method;
  const status = row.querySelector(".status");
  status.textContent = run.status;
  status.className = `status ${run.status}`;
  row.querySelector("progress").value = run.progress;
  row.querySelector(".pct").textContent = `${Math.round(run.progress)}%`;
  row.querySelector(".pairs").textContent = run.pair_count;
  row.querySelector(".time").textContent = duration(run);
  const msg = row.querySelector(".msg");
  msg.textContent = run.error || run.message;
  msg.classList.toggle("error", Boolean(run.error));
  if (FINISHED.has(run.status)) document.querySelectorAll(`.messages li.run-${run.id}`).forEach((li) => li.remove());
}

async function poll() {
  try {
    const response = await fetch(table.dataset.api, { headers: { Accept: "application/json" } });
    if (response.ok) {
      const data = await response.json();
      const runs = data.results ?? data;
      runs.slice().reverse().forEach(render);
      if (runs.some((r) => r.status === "queued" || r.status === "running")) {
        setTimeout(poll, 1000);
        return;
      }
    }
  } catch (err) {
    console.warn("run polling failed, retrying", err);
  }
  setTimeout(poll, 5000);
}

if (table) poll();
