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

// Resolves once `url` (GET) answers with the figures rather than 202 Accepted ("being computed", issue 37: a big
// project's first figures come from a background job); asks again after the answer's retry_after (2 s by default).
export async function whenComputed(url, { everyMs = 2000, maxTries = 900 } = {}) {
  for (let i = 0; i < maxTries; i += 1) {
    const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (response.status !== 202) return response;
    const data = await response.json().catch(() => ({}));
    await new Promise((resolve) => setTimeout(resolve, (data.retry_after ? data.retry_after * 1000 : everyMs)));
  }
  throw new Error("the figures are still being computed");
}
