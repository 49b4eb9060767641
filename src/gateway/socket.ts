// The WebSocket gateway (beyond Zulip): `GET /api/v1/events/socket?queue_id=Q&last_event_id=N`
// reads an event queue made by POST /register over one connection. Each event is pushed as a
// JSON text frame as soon as it is queued; the client acknowledges with `{"last_event_id": N}`,
// which prunes the queue, and after a reconnect it passes the last id it received to resume
// with no gap and no duplicate. Protocol details: docs/api.md, "WebSocket events".
import type uWS from 'uWebSockets.js';
import { z } from 'zod';
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import type { Scope } from '../api/route.ts';
import { ApiError, badRequest } from '../errors.ts';
import type { ClientOrigin, TrustedProxies } from '../http/client-address.ts';
import { authenticateBasic } from '../http/credentials.ts';
import { markAborted, openPending, requestOrigin, writeResponse, type PendingResponse, type RequestObservers } from '../http/exchange.ts';
import type { Gate } from '../http/route.ts';
import { RequestLog } from '../log.ts';
import { queuePlacement, type QueuePlacement } from './placement.ts';
import { deliveredEvent } from './long-poll.ts';
import { CLOSE_REASONS, type SocketData, type SocketSource } from './socket-source.ts';

export const SOCKET_PATH = '/api/v1/events/socket';
export { CLOSE_REASONS };
const SWITCHING_PROTOCOLS = 101;
/** A socket that says nothing this long is closed; uWS pings it before then, so a proxy's read timeout must be longer. */
export const SOCKET_IDLE_SECONDS = 120;

/** What a client sends: an acknowledgement (other keys are ignored). */
export const clientFrame = z.looseObject({ last_event_id: z.number().int() });
export const frameError = z.strictObject({ result: z.literal('error'), msg: z.string(), code: z.literal('BAD_REQUEST') });
/** What the server sends: each event as GET /events would return it, or the answer to a bad client frame. */
export const serverFrame = z.union([deliveredEvent, frameError]);
/** The largest client frame read: an acknowledgement is a few dozen bytes. A larger one closes the socket with 1009. */
export const MAX_CLIENT_FRAME_BYTES = 16 * 1024;
/**
 * What uWS buffers of one client message before handing it over. uWS drops a larger one without a
 * close frame (the client sees 1006) and cannot be told otherwise, so this is well above
 * MAX_CLIENT_FRAME_BYTES: below it, an oversized frame gets its 1009 and close frame from us.
 */
const UWS_MAX_PAYLOAD_BYTES = 1024 * 1024;
const BAD_FRAME = JSON.stringify({ result: 'error', msg: 'Expected {"last_event_id": <integer>}', code: 'BAD_REQUEST' } satisfies z.infer<typeof frameError>);

function rejectUpgrade(pending: PendingResponse, err: ApiError): void {
  writeResponse(
    pending,
    err.status,
    { ...err.headers, 'Content-Type': 'application/json' },
    JSON.stringify({ result: 'error', msg: err.message, code: err.code, ...err.extra }),
  );
}

const WEBSOCKET_VERSION = '13';
/** Base64 of 16 bytes (RFC 6455, 4.1). */
const WEBSOCKET_KEY = /^[A-Za-z0-9+/]{22}==$/;

const upgradeRequired = (msg: string) => new ApiError(msg, 'BAD_REQUEST', 426, {}, { Upgrade: 'websocket', 'Sec-WebSocket-Version': WEBSOCKET_VERSION });

const hasToken = (header: string | undefined, token: string) =>
  (header ?? '')
    .toLowerCase()
    .split(',')
    .some((t) => t.trim() === token);

/**
 * What RFC 6455 (4.2.1, 4.2.2) has a server refuse before anything else; null for a sound handshake.
 * uWS takes any request with a 24-character key for an upgrade, so the rest is checked here.
 */
function handshakeError(headers: Record<string, string>): ApiError | null {
  if (!hasToken(headers.upgrade, 'websocket') || !hasToken(headers.connection, 'upgrade')) return upgradeRequired('This endpoint speaks WebSocket only');
  if (headers['sec-websocket-version']?.trim() !== WEBSOCKET_VERSION) {
    return upgradeRequired(`Unsupported WebSocket version; this server speaks version ${WEBSOCKET_VERSION}`);
  }
  if (!WEBSOCKET_KEY.test(headers['sec-websocket-key']?.trim() ?? '')) return badRequest('Missing or malformed Sec-WebSocket-Key');
  return null;
}

function readHeaders(req: uWS.HttpRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  req.forEach((k, v) => (headers[k] = v));
  return headers;
}

interface Handshake {
  headers: Record<string, string>;
  query: URLSearchParams;
  origin: ClientOrigin;
}

/** Who is connecting and to which queue (Basic credentials, or the queue id alone), here or on another node. */
async function resolveSource(app: App, gate: Gate<Scope, User>, placement: QueuePlacement, { headers, query, origin }: Handshake): Promise<SocketSource> {
  const refused = handshakeError(headers);
  if (refused) throw refused;
  const queueId = query.get('queue_id');
  if (!queueId) throw new ApiError("Missing 'queue_id' argument", 'REQUEST_VARIABLE_MISSING', 400, { var_name: 'queue_id' });
  let userId: number | undefined;
  if (headers.authorization) {
    const scope = gate.scope({ host: headers.host ?? '', scheme: origin.scheme });
    userId = (await authenticateBasic(gate, scope, headers.authorization, () => origin.ip, app.limits?.ip ?? null)).id;
  }
  return placement.openSocket(queueId, userId, query.get('last_event_id'));
}

export function attachSocketGateway(app: App, gate: Gate<Scope, User>, proxies: TrustedProxies, uws: uWS.TemplatedApp, observers: RequestObservers): void {
  const placement = queuePlacement(app);
  // The upgrade is a request like any other for the metrics and the access log (101 when it succeeds).
  const observer = observers.route('GET', SOCKET_PATH);
  uws.ws<SocketData>(SOCKET_PATH, {
    idleTimeout: SOCKET_IDLE_SECONDS,
    sendPingsAutomatically: true,
    maxPayloadLength: UWS_MAX_PAYLOAD_BYTES,
    // Far above WS_MAX_BUFFERED_BYTES, so uWS never drops a frame silently; we close slow clients ourselves.
    maxBackpressure: 64 * 1024 * 1024,
    upgrade: (res, req, context) => {
      const pending = openPending(res, observer);
      const log = new RequestLog(pending.seq);
      res.onAborted(() => markAborted(pending));
      const headers = readHeaders(req);
      const handshake = { headers, query: new URLSearchParams(req.getQuery() ?? ''), origin: requestOrigin(res, req, proxies) };
      resolveSource(app, gate, placement, handshake).then(
        (source) => {
          if (pending.aborted) return source.closed();
          pending.done = true;
          pending.userId = source.userId ?? null;
          res.cork(() => {
            res.upgrade<SocketData>(
              { source, log },
              headers['sec-websocket-key']!,
              headers['sec-websocket-protocol'] ?? '',
              headers['sec-websocket-extensions'] ?? '',
              context,
            );
          });
          observer.answered(pending, SWITCHING_PROTOCOLS);
        },
        (err) => {
          if (err instanceof ApiError) return rejectUpgrade(pending, err);
          log.error('websocket upgrade failed', { error: String(err) });
          rejectUpgrade(pending, new ApiError('Internal server error', 'BAD_REQUEST', 500));
        },
      );
    },
    open: (ws) => ws.getUserData().source.open(ws),
    message: (ws, message) => {
      if (message.byteLength > MAX_CLIENT_FRAME_BYTES) return ws.end(CLOSE_REASONS.TOO_BIG.code, CLOSE_REASONS.TOO_BIG.reason);
      let frame: unknown;
      try {
        frame = JSON.parse(Buffer.from(message).toString('utf8'));
      } catch {
        frame = undefined;
      }
      const ack = clientFrame.safeParse(frame);
      if (!ack.success) {
        ws.send(BAD_FRAME);
        return;
      }
      const { source, log } = ws.getUserData();
      source.acknowledge(ack.data.last_event_id, (msg) => void ws.send(JSON.stringify({ result: 'error', msg, code: 'BAD_REQUEST' })), log);
    },
    close: (ws) => ws.getUserData().source.closed(),
  });
  // uWS hands a request to the handlers above only if it carries a 24-character key; the rest of
  // the requests for this path get their RFC answer here.
  uws.any(SOCKET_PATH, (res, req) => {
    const pending = openPending(res, observer);
    res.onAborted(() => markAborted(pending));
    rejectUpgrade(pending, handshakeError(readHeaders(req)) ?? upgradeRequired('This endpoint speaks WebSocket only'));
  });
}
