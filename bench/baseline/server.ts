// Raw uWebSockets.js with no application logic: the machine's ceiling for the
// long-poll fan-out and WebSocket broadcast the chat server does, and (given a saved answer's
// file as its argument) for POST /api/v1/register answered with those bytes and no work at all.
// Run as a child process; prints {"port":N} on stdout once listening.
import { readFileSync } from 'node:fs';
import uWS from 'uWebSockets.js';

if (!('_cfg' in uWS)) throw new Error('uWebSockets.js native binary did not load (JS fallback is not a baseline)');

const BROADCAST_TOPIC = 'all';
const parked = new Set<uWS.HttpResponse>();
let eventId = 0;

function readBody(res: uWS.HttpResponse, done: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(chunk.slice(0))); // uWS reuses the ArrayBuffer: copy it
    if (isLast) done(Buffer.concat(chunks));
  });
}

// Shaped like a Zulip GET /events response so clients parse the same bytes.
function eventsBody(payload: string, id: number): string {
  return `{"result":"success","msg":"","queue_id":"baseline","events":[{"type":"message","id":${id},"message":${payload}}]}`;
}

const registerAnswer = process.argv[2] ? readFileSync(process.argv[2]) : undefined;

/** The whole answer, as much as the socket takes now and the rest when it drains (as the server writes). */
function sendAll(res: uWS.HttpResponse, body: Buffer, aborted: () => boolean): void {
  const sendFrom = (offset: number) => aborted() || res.tryEnd(body.subarray(offset), body.length)[0];
  if (!sendFrom(0)) res.onWritable(sendFrom);
}

const app = uWS
  .App()
  .post('/api/v1/register', (res) => {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    if (!registerAnswer) return void res.cork(() => res.writeStatus('404 Not Found').end());
    res.cork(() => sendAll(res.writeHeader('Content-Type', 'application/json'), registerAnswer, () => aborted));
  })
  .get('/poll', (res) => {
    parked.add(res);
    res.onAborted(() => parked.delete(res));
  })
  // Harness instrumentation so the load generator publishes only when every poll is parked
  // (a queue-less server drops events for clients between polls).
  .get('/parked', (res) => {
    res.end(String(parked.size));
  })
  .post('/publish', (res) => {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    readBody(res, (body) => {
      const id = eventId++;
      const waiting = [...parked];
      parked.clear();
      if (!aborted) res.cork(() => res.end(`{"result":"success","msg":"","id":${id},"parked":${waiting.length}}`));
      const payload = body.toString() || '{}';
      const frame = eventsBody(payload, id);
      app.publish(BROADCAST_TOPIC, frame);
      // Completing parked responses inside the publisher's handler is ~9x slower: defer.
      setImmediate(() => {
        for (const parkedRes of waiting) {
          parkedRes.cork(() => parkedRes.writeHeader('Content-Type', 'application/json').end(frame));
        }
      });
    });
  })
  .ws('/ws', {
    idleTimeout: 0,
    maxBackpressure: 1024 * 1024,
    open: (ws) => {
      ws.subscribe(BROADCAST_TOPIC);
    },
    message: () => {
      /* clients ack; the baseline has nothing to do with it */
    },
  });

// The typings lack listen(host, port, options, cb) and the module-level option constant,
// which the binary has (the declared ListenOptions enum is undefined at run time).
type ListenWithHost = (host: string, port: number, options: number, cb: (socket: uWS.us_listen_socket | false) => void) => void;
const EXCLUSIVE_PORT = (uWS as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number }).LIBUS_LISTEN_EXCLUSIVE_PORT;
(app.listen as unknown as ListenWithHost).call(app, '127.0.0.1', 0, EXCLUSIVE_PORT, (socket) => {
  if (!socket) {
    console.error('baseline: listen failed');
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ port: uWS.us_socket_local_port(socket as unknown as uWS.us_socket) })}\n`);
});
