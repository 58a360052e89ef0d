// Project settings page: ask before taking someone off the project, explain the chosen paragraph-correction
// mode, suggest users while a username is typed (the forms work without this).
import { api } from "./http.js";

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

// Search as you type: the first letters of a username → up to ten matching users in the datalist.
const username = document.getElementById("member-username");
const suggestions = document.getElementById("user-suggestions");
if (username && suggestions) {
  let timer = null;
  let asked = "";
  username.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const prefix = username.value.trim();
      if (!prefix || prefix === asked) return;
      asked = prefix;
      try {
        const data = await api(`${username.dataset.searchApi}?q=${encodeURIComponent(prefix)}`);
        if (asked !== prefix) return;  // a newer search is under way
        suggestions.replaceChildren(...data.results.map((u) => Object.assign(document.createElement("option"), { value: u.username })));
      } catch (err) {
        console.warn("user search failed", err);
      }
    }, 150);
  });
}
