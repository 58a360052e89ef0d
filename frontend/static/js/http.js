// JSON requests to the app's API from the pages, with Django's CSRF token.

export function csrfToken() {
  const cookie = document.cookie.split("; ").find((c) => c.startsWith("csrftoken="));
  return cookie ? decodeURIComponent(cookie.split("=")[1]) : document.querySelector("[name=csrfmiddlewaretoken]")?.value;
}

// DRF's answer when a request carries no (valid) session: the session expired or the user logged out elsewhere.
const NOT_AUTHENTICATED = "Authentication credentials were not provided.";

export function loginUrl(next = window.location.pathname + window.location.search + window.location.hash) {
  return `/login/?next=${encodeURIComponent(next)}`;
}

// Sends the browser to the login page (and back here afterwards) when an API answer says the user is
// signed out; returns true then, so the caller stops.
export function sendToLoginIfSignedOut(status, data) {
  if (status !== 401 && !(status === 403 && data?.detail === NOT_AUTHENTICATED)) return false;
  window.location.assign(loginUrl());
  return true;
}

// fetch() that sends and expects JSON; a non-2xx answer throws an Error carrying the server's message.
export async function api(url, options = {}) {
  const response = await fetch(url, {
    credentials: "same-origin",
    ...options,
    headers: { Accept: "application/json", "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
  });
  const data = await response.json().catch(() => ({}));
  if (sendToLoginIfSignedOut(response.status, data)) throw new Error("Signed out: taking you to the login page.");
  if (!response.ok) throw new Error(data.detail || Object.values(data).flat().join(" ") || response.statusText);
  return data;
}
