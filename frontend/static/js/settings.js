// Project settings page: ask before taking someone off the project (the forms work without this).
for (const form of document.querySelectorAll("#member-list .remove-form")) {
  form.addEventListener("submit", (event) => {
    const name = form.closest("tr").dataset.username;
    if (!window.confirm(`Remove ${name} from this project? Their labels stay.`)) event.preventDefault();
  });
}
