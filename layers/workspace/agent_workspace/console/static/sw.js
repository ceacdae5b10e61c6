// The console's service worker (issue 21): shows the Web Push notifications the server sends when an agent
// waits for the human, and opens the task when one is clicked. Served at /sw.js so its scope is the console.
// The payload comes encrypted from the server only (VAPID); still, it is shown as text and only a URL of this
// server's own origin is ever opened.

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { body: event.data ? event.data.text() : "" };
  }
  const title = typeof data.title === "string" && data.title ? data.title : "Agent Workspace";
  const options = {
    body: typeof data.body === "string" ? data.body : "",
    data: { url: typeof data.url === "string" ? data.url : "/" },
    tag: typeof data.url === "string" ? data.url : undefined, // one notification per task, the newest
  };
  event.waitUntil(self.registration.showNotification(title, options));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = new URL(event.notification.data?.url || "/", self.location.origin);
  if (url.origin !== self.location.origin) return;
  event.waitUntil(self.clients.openWindow(url.href));
});
