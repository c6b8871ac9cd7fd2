// Live updates for the ingest-gateway console. /v1/events announces new messages and settled
// attachments; the page then asks the server for its own HTML again and swaps the part that
// changed. Rendering stays on the server, where mail content is escaped: this script never
// builds markup from mail.

(() => {
  const status = document.querySelector('[data-live-status]');
  const list = document.querySelector('[data-live-events]');
  const message = document.querySelector('[data-live-message]');
  if (!status || !(list || message)) return;

  const target = list ? '[data-live-rows]' : '[data-live-message]';
  const source = new EventSource(list ? list.getAttribute('data-live-events') : '/v1/events');
  const wanted = message ? message.getAttribute('data-live-message') : null;
  let pending;

  source.addEventListener('message', (event) => {
    if (wanted !== null && messageId(event.data) !== wanted) return;
    // Several events in a burst (a message with many attachments): one refresh.
    clearTimeout(pending);
    pending = setTimeout(refresh, 250);
  });
  // What changed between the server's rendering and the subscription (or while it reconnected)
  // was announced to no one: ask once for the page as it is now.
  source.addEventListener('open', () => {
    clearTimeout(pending);
    pending = setTimeout(refresh, 0);
  });
  source.addEventListener('error', () => {
    if (source.readyState === EventSource.CLOSED)
      status.textContent = 'Live updates stopped: reload the page.';
  });

  function messageId(data) {
    try {
      return JSON.parse(data).id;
    } catch {
      return null;
    }
  }

  async function refresh() {
    const response = await fetch(location.href, { headers: { accept: 'text/html' } });
    if (!response.ok || response.redirected) {
      status.textContent = 'Live updates stopped: reload the page.';
      source.close();
      return;
    }
    const page = new DOMParser().parseFromString(await response.text(), 'text/html');
    const fresh = page.querySelector(target);
    const current = document.querySelector(target);
    if (!fresh || !current) return;
    current.replaceWith(document.adoptNode(fresh));
    const updatedStatus = document.querySelector('[data-live-status]');
    if (updatedStatus) updatedStatus.textContent = `Updated at ${new Date().toLocaleTimeString()}.`;
  }
})();
