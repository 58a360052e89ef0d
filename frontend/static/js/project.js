// Project page: keep the alignment-run table live while any run is queued or running.
const table = document.querySelector("#runs");

function render(run) {
  let row = table.querySelector(`tr[data-run="${run.id}"]`);
  if (!row) {
    table.querySelector("tr.empty")?.remove();
    row = document.createElement("tr");
    row.dataset.run = run.id;
    row.innerHTML = `<td>${run.id}</td><td></td><td class="status"></td><td><progress max="100"></progress> <span class="pct"></span></td><td class="pairs"></td><td class="msg"></td>`;
    table.tBodies[0].prepend(row);
  }
  row.children[1].textContent = run.method;
  const status = row.querySelector(".status");
  status.textContent = run.status;
  status.className = `status ${run.status}`;
  row.querySelector("progress").value = run.progress;
  row.querySelector(".pct").textContent = `${Math.round(run.progress)}%`;
  row.querySelector(".pairs").textContent = run.pair_count;
  const msg = row.querySelector(".msg");
  msg.textContent = run.error || run.message;
  msg.classList.toggle("error", Boolean(run.error));
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
