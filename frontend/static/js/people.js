// People page: copy an invitation link; ask before deactivating someone (the forms work without this).
const link = document.getElementById("invitation-link");
document.getElementById("copy-invitation")?.addEventListener("click", async (event) => {
  link.select();
  try { await navigator.clipboard.writeText(link.value); } catch { document.execCommand?.("copy"); }
  event.currentTarget.textContent = "Copied";
});

for (const form of document.querySelectorAll("#people .active-form")) {
  form.addEventListener("submit", (event) => {
    const name = form.closest("tr").dataset.username;
    if (form.elements.active.value === "0" && !window.confirm(`Deactivate ${name}? They can no longer log in; their labels stay.`)) {
      event.preventDefault();
    }
  });
}
