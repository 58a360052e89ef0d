// JSON requests to the app's API from the pages, with Django's CSRF token.

export function csrfToken() {
  const cookie = document.cookie.split("; ").find((c) => c.startsWith("csrftoken="));
  return cookie ? decodeURIComponent(cookie.split("=")[1]) : document.querySelector("[name=csrfmiddlewaretoken]")?.value;
}

// fetch() that sends and expects JSON; a non-2xx answer throws an Error carrying the server's message.
export async function api(url, options = {}) {
  const response = await fetch(url, {
    credentials: "same-origin",
    ...options,
    headers: { Accept: "application/json", "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.detail || Object.values(data).flat().join(" ") || response.statusText);
  return data;
}
