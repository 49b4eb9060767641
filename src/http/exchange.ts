// One request and its response on uWS: what was read from the request before the handler returned
// (uWS frees the request then), and the one way a response is written, which also tells the
// request's observer (metrics, access log) how it was answered.
import type uWS from 'uWebSockets.js';
import type { ClientOrigin, TrustedProxies } from './client-address.ts';
import { requestIdOf } from '../log.ts';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  302: 'Found',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Told once how each request of a route was answered; made once per route at start, not per request. */
export interface ResponseObserver {
  /** After the response was written, or with CLIENT_CLOSED when the client left before it. */
  answered(request: ObservedRequest, status: number): void;
}

/** Where observers come from: the layer above (metrics, access log) makes them. */
export interface RequestObservers {
  /** For every request to one route; asked once per route at start. */
  route(method: string, pattern: string): ResponseObserver;
  /** For a request no route takes: a 404, or a 405 for a method its path lacks. */
  unmatched(method: string, path: string): ResponseObserver;
}

export interface ObservedRequest {
  /** performance.now() when the request arrived. */
  readonly startedAt: number;
  /** The request's number in this process; requestId() makes its id in the logs from it. */
  readonly seq: number;
  /** The authenticated user, once known. */
  userId: number | null;
}

/** The status the logs and metrics give a request whose client left before the answer (nginx's 499). */
export const CLIENT_CLOSED = 499;

/** A response that is written at most once, and not at all after the client left. */
export interface PendingResponse extends ObservedRequest {
  res: uWS.HttpResponse;
  aborted: boolean;
  done: boolean;
  observer: ResponseObserver;
}

export interface Exchange extends PendingResponse {
  abortHandlers: (() => void)[];
  host: string;
  authorization: string;
  contentType: string;
  userAgent: string;
  /** The Accept-Encoding header: large JSON answers are compressed by it. */
  acceptEncoding: string;
  /** The client's origin once read (clientOrigin): with the request behind a trusted proxy, else on first use. */
  origin: ClientOrigin | null;
  proxies: TrustedProxies;
  /** Cookies and the CSRF header, read for /json/ routes and routes with `cookies`. */
  cookie?: string;
  csrfHeader?: string;
  /** A `rawBody` route's body and headers (read while the request is at hand, as uWS requires). */
  rawBody?: Buffer;
  allHeaders?: Record<string, string>;
}

export function statusLine(status: number): string {
  return `${status} ${STATUS_TEXT[status] ?? 'Status'}`;
}

let lastSeq = 0;

export const requestId = (request: ObservedRequest): string => requestIdOf(request.seq);

export function openPending(res: uWS.HttpResponse, observer: ResponseObserver): PendingResponse {
  return { res, aborted: false, done: false, startedAt: performance.now(), seq: ++lastSeq, userId: null, observer };
}

/** Copies what the router needs from the request; only a few headers, since every long-poll passes here. */
export function openExchange(res: uWS.HttpResponse, req: uWS.HttpRequest, proxies: TrustedProxies, observer: ResponseObserver): Exchange {
  return {
    res,
    aborted: false,
    done: false,
    startedAt: performance.now(),
    seq: ++lastSeq,
    userId: null,
    observer,
    abortHandlers: [],
    host: req.getHeader('host'),
    authorization: req.getHeader('authorization'),
    contentType: req.getHeader('content-type'),
    userAgent: req.getHeader('user-agent'),
    acceptEncoding: req.getHeader('accept-encoding'),
    // Forwarding headers can be read only now; the socket's address as long as the response is open.
    origin: proxies.any ? requestOrigin(res, req, proxies) : null,
    proxies,
  };
}

/** What a request whose address was never read before it was answered or its client left reads as. */
const UNKNOWN_ORIGIN: ClientOrigin = { ip: '', scheme: null };
const NO_HEADER = (): string => '';

/**
 * The client's address and scheme. Without trusted proxies the address is the socket's, read from
 * uWS on first use: most requests never need it (a known user's rate limit is the user's, and a
 * long-poll uses neither), and uWS makes an ArrayBuffer for it each time, the costliest step of a
 * re-parked long-poll's exchange. The router reads it before each wait (a body, a user's first
 * lookup, a handler's promise), while uWS still holds the response; a handler that answers later
 * through `answer` reads `ip` before it returns, if it needs it.
 */
export function clientOrigin(ex: Exchange): ClientOrigin {
  if (ex.origin === null) ex.origin = ex.aborted || ex.done ? UNKNOWN_ORIGIN : ex.proxies.origin(peerAddress(ex.res), NO_HEADER);
  return ex.origin;
}

/** Every header of the request (a header sent on several lines joined with commas). */
export function allHeaders(req: uWS.HttpRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  req.forEach((key, value) => {
    headers[key] = headers[key] === undefined ? value : `${headers[key]},${value}`;
  });
  return headers;
}

type ForwardingHeaders = Record<'x-forwarded-for' | 'x-forwarded-proto', string>;
const NO_FORWARDING: ForwardingHeaders = { 'x-forwarded-for': '', 'x-forwarded-proto': '' };

function forwardingHeaders(req: uWS.HttpRequest): ForwardingHeaders {
  const found = { ...NO_FORWARDING };
  req.forEach((key, v) => {
    // A header sent on several lines is one comma-separated list (RFC 9110, 5.3).
    if (key === 'x-forwarded-for' || key === 'x-forwarded-proto') found[key] = found[key] ? `${found[key]},${v}` : v;
  });
  return found;
}

const peerAddress = (res: uWS.HttpResponse) => Buffer.from(res.getRemoteAddressAsText()).toString();

/** The client's address and scheme; the forwarding headers are believed only from a trusted proxy. */
export function requestOrigin(res: uWS.HttpResponse, req: uWS.HttpRequest, proxies: TrustedProxies): ClientOrigin {
  const forwarded = proxies.any ? forwardingHeaders(req) : NO_FORWARDING;
  return proxies.origin(peerAddress(res), (name) => forwarded[name]);
}

/** A response body: text, bytes, or bytes in pieces sent one after another (shared, never joined). */
export type ResponseBody = string | Buffer | readonly Buffer[];

/** Writes a whole response in one corked batch; a no-op if the client already left. */
export function writeResponse(
  ex: PendingResponse,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: ResponseBody,
  cookies: readonly string[] = [],
): void {
  if (ex.aborted || ex.done) return;
  ex.done = true;
  const { res } = ex;
  res.cork(() => {
    // uWS writes 200 OK itself: one call less into it for most answers.
    if (status !== 200) res.writeStatus(statusLine(status));
    for (const k in headers) res.writeHeader(k, headers[k]!);
    for (const c of cookies) res.writeHeader('Set-Cookie', c);
    if (typeof body === 'string' || Buffer.isBuffer(body)) res.end(body);
    else writePieces(res, body as readonly Buffer[]);
  });
  ex.observer.answered(ex, status);
}

/**
 * Sends the pieces as one body of their total length, each as much as the socket takes now
 * (tryEnd); the rest when it drains (onWritable), from the offset uWS reports. uWS copies
 * nothing the socket did not take, so a slow client holds the shared pieces, not a copy of
 * the answer.
 */
function writePieces(res: uWS.HttpResponse, pieces: readonly Buffer[]): void {
  let total = 0;
  for (const piece of pieces) total += piece.length;
  let index = 0;
  let start = 0; // where pieces[index] starts in the body
  const sendFrom = (offset: number): boolean => {
    for (; index < pieces.length; start += pieces[index]!.length, index++) {
      const piece = pieces[index]!;
      if (offset >= start + piece.length) continue;
      const [ok] = res.tryEnd(offset > start ? piece.subarray(offset - start) : piece, total);
      if (!ok) return false;
      offset = start + piece.length;
    }
    return true;
  };
  if (total === 0) res.end();
  else if (!sendFrom(0)) res.onWritable(sendFrom);
}

/** The client left before its answer: the observer hears it once, as CLIENT_CLOSED. */
export function markAborted(ex: PendingResponse): void {
  ex.aborted = true;
  if (!ex.done) ex.observer.answered(ex, CLIENT_CLOSED);
  ex.done = true;
}
