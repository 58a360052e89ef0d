// Import page: a folder chosen with the folder picker is sent as a folder. The browser sends only
// each file's name, so on submit a hidden "paths" field is added per file (in the order of the
// files): its path inside the chosen folder (webkitRelativePath, e.g. hf/train/state.json), or its
// name for a file chosen alone. The server stages every file under its path (uploads.upload_names).

const form = document.getElementById("import-form");

form?.addEventListener("submit", () => {
  for (const old of form.querySelectorAll("input[type=hidden][name=paths]")) old.remove();
  const files = [...form.querySelectorAll("input[type=file][name=files]")].flatMap((input) => [...input.files]);
  if (!files.some((file) => file.webkitRelativePath)) return; // plain files: their names are enough
  for (const file of files) {
    const field = document.createElement("input");
    field.type = "hidden";
    field.name = "paths";
    field.value = file.webkitRelativePath || file.name;
    form.append(field);
  }
});
