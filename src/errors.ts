// The one error type of the API, below every layer: actions, queries and auth throw it without
// reaching into the transport; the router turns it into Zulip's envelope (`result`, `msg`, `code`
// and any extra keys) with the status the reference gives.

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string = 'BAD_REQUEST',
    readonly status: number = 400,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (msg: string, extra: Record<string, unknown> = {}) => new ApiError(msg, 'BAD_REQUEST', 400, extra);

export const badQueueId = (queueId: string) => new ApiError(`Bad event queue ID: ${queueId}`, 'BAD_EVENT_QUEUE_ID', 400, { queue_id: queueId });

export const unauthorized = (msg: string) => new ApiError(msg, 'UNAUTHORIZED', 401, {}, { 'WWW-Authenticate': 'Basic realm="zulip"' });

/** The user's organization was deactivated (Zulip's RealmDeactivatedError); `headers` for a Basic-auth challenge. */
export const realmDeactivated = (headers: Record<string, string> = {}) =>
  new ApiError('This organization has been deactivated', 'REALM_DEACTIVATED', 401, {}, headers);

/** The account was deactivated (Zulip's UserDeactivatedError, the code clients branch on); `headers` for a Basic-auth challenge. */
export const userDeactivated = (headers: Record<string, string> = {}) => new ApiError('Account is deactivated', 'USER_DEACTIVATED', 401, {}, headers);

export const notLoggedIn = () => unauthorized('Not logged in: API authentication or user session required');

/**
 * Zulip answers 404 only for a few resources (drafts, snippets, scheduled messages, emoji), and
 * with the generic code: its ResourceNotFoundError has no code of its own.
 */
export const notFound = (msg: string) => new ApiError(msg, 'BAD_REQUEST', 404);

/** A URL no route serves: the router's own answer, also for paths a route's pattern matches too loosely. */
export const routeNotFound = () => new ApiError('Not Found', 'NOT_FOUND', 404);

/** No organization at the request's host (Zulip's InvalidSubdomainError). */
export const invalidSubdomain = () => new ApiError('Invalid subdomain', 'NONEXISTENT_SUBDOMAIN', 404);

export const missingArgument = (name: string) => new ApiError(`Missing '${name}' argument`, 'REQUEST_VARIABLE_MISSING', 400, { var_name: name });

export const invalidArgument = (msg: string, name: string) => new ApiError(msg, 'BAD_REQUEST', 400, { var_name: name });

/**
 * Zulip's RATE_LIMIT_HIT: the body keeps the exact seconds, the Retry-After header whole seconds
 * rounded up (RFC 9110 allows only digits there, and a client retrying early would be refused again).
 */
export const rateLimitHit = (retryAfterSeconds: number, headers: Record<string, string> = {}) =>
  new ApiError(
    'API usage exceeded rate limit',
    'RATE_LIMIT_HIT',
    429,
    { 'retry-after': retryAfterSeconds },
    {
      ...headers,
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    },
  );

export const notAllowed = (msg = 'Must be an organization administrator') => new ApiError(msg, 'UNAUTHORIZED_PRINCIPAL', 400);

/** A login refused with a page (single sign-on, JWT): the message says what went wrong without the internals. */
export class LoginRefusal extends Error {}
