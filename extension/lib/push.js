// The push socket (docs/decisions/0012-push-over-a-websocket-api-with-tickets-and-one-sender.md). A WebSocket cannot
// carry the token, so a single-use ticket minted with it opens the socket; the server then says on it what changed.
// API Gateway's rules shape the rest: a socket idle for 10 minutes is closed (so a ping every few), any socket is
// closed after 2 hours (so a fresh one before); each ticket says how often. A push is a hint: after each open the
// caller reads what it missed.

const OPEN_MS = 10_000;
// The cadence each ticket carries (pingSeconds, reconnectSeconds), within bounds; these when it carries none.
const PING_S = { fallback: 5 * 60, least: 1, most: 9 * 60 }; // inside API Gateway's 10-minute idle timeout
const RENEW_S = { fallback: 110 * 60, least: 1, most: 119 * 60 }; // before API Gateway's 2-hour cut
const PONG_MS = 15_000; // a ping unanswered this long: the connection is dead (a laptop that slept, a cut network)
const PING = JSON.stringify({ type: "ping" });

/** The socket did not open: refused (a spent ticket), unreachable, or no answer in time. */
export class SocketError extends Error {
  constructor(message) {
    super(message);
    this.name = "SocketError";
  }
}

/** Mint a ticket for `topic` and open its socket; `onMessage(message)` gets each frame, parsed. Resolves once the
 * socket is open, with `closed` (resolves when it ends: `{renew: true}` when a fresh one is due, `{dead: true}`
 * when a ping went unanswered, else `{code}`) and `close()`. Throws the mint's ApiError or NetworkError (503: this
 * server has no push), or a SocketError. The ticket's URL is never logged: it opens a socket until it is used. */
export async function open(api, topic, onMessage) {
  const { url, pingSeconds, reconnectSeconds } = await api.pushTicket(topic);
  const cadence = { pingMs: seconds(pingSeconds, PING_S) * 1000, renewMs: seconds(reconnectSeconds, RENEW_S) * 1000 };
  return kept(await opened(url), onMessage, cadence);
}

function seconds(value, { fallback, least, most }) {
  return Number.isFinite(value) ? Math.min(Math.max(value, least), most) : fallback;
}

function opened(url) {
  return new Promise((resolve, reject) => {
    let socket;
    try {
      socket = new WebSocket(url);
    } catch {
      reject(new SocketError("the server's push URL is not a WebSocket URL"));
      return;
    }
    const fail = (why) => {
      clearTimeout(timer);
      socket.onopen = socket.onerror = socket.onclose = null;
      if (socket.readyState < WebSocket.CLOSING) socket.close();
      reject(new SocketError(`the push socket did not open (${why})`));
    };
    const timer = setTimeout(() => fail(`no answer within ${OPEN_MS / 1000} s`), OPEN_MS);
    socket.onopen = () => {
      clearTimeout(timer);
      socket.onopen = socket.onerror = socket.onclose = null;
      resolve(socket);
    };
    socket.onerror = () => fail("refused or unreachable"); // a script is never told why
    socket.onclose = () => fail("closed");
  });
}

function kept(socket, onMessage, { pingMs, renewMs }) {
  let resolveClosed;
  const closed = new Promise((resolve) => {
    resolveClosed = resolve;
  });
  let pongTimer = null;
  const end = (reason) => {
    clearInterval(pinger);
    clearTimeout(renewer);
    clearTimeout(pongTimer);
    socket.onmessage = socket.onerror = socket.onclose = null;
    if (socket.readyState < WebSocket.CLOSING) socket.close(1000);
    resolveClosed(reason);
  };
  const pinger = setInterval(() => {
    socket.send(PING);
    pongTimer ??= setTimeout(() => end({ dead: true }), PONG_MS);
  }, pingMs);
  const renewer = setTimeout(() => end({ renew: true }), renewMs);
  socket.onmessage = (event) => {
    clearTimeout(pongTimer); // any frame says the connection lives
    pongTimer = null;
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return; // not ours to act on
    }
    onMessage(message);
  };
  socket.onclose = (event) => end({ code: event.code });
  return { closed, close: () => end({ code: 1000 }) };
}
