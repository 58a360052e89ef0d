// Project settings page: ask before taking someone off the project, explain the chosen paragraph-correction
// mode (the forms work without this).
for (const form of document.querySelectorAll("#member-list .remove-form")) {
  form.addEventListener("submit", (event) => {
    const name = form.closest("tr").dataset.username;
    if (!window.confirm(`Remove ${name} from this project? Their labels stay.`)) event.preventDefault();
  });
}

const corrections = document.getElementById("paragraph-corrections");
const correctionsHelp = document.getElementById("paragraph-corrections-help");
if (corrections && correctionsHelp) {
  const explain = () => { correctionsHelp.textContent = correctionsHelp.dataset[corrections.value] ?? ""; };
  corrections.addEventListener("change", explain);
  explain();
}
