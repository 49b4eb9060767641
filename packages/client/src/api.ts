// Calling the REST API as any Zulip client does: HTTP Basic with email and API key, parameters in
// the query string (GET, DELETE) or a form body, non-string values JSON-encoded. A client with
// another way to call (a browser's session cookie) passes its own `Call` instead.

export type Params = Record<string, unknown>;

/** One API request: the path after `/api/v1` (`/register`); resolves to the success body. */
export type Call = (method: 'GET' | 'POST' | 'DELETE', path: string, params: Params, signal?: AbortSignal) => Promise<unknown>;

export interface Credentials {
  email: string;
  apiKey: string;
}

/** An error answer of the API, or the network's failure (status 0). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
    /** Seconds to wait before trying again (429 answers). */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

/** Base64 of the UTF-8 bytes, as Basic auth wants for non-ASCII emails. */
function base64(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export function basicAuthorization({ email, apiKey }: Credentials): string {
  return `Basic ${base64(`${email}:${apiKey}`)}`;
}

/** Parameters as the API reads them: strings as they are, anything else JSON-encoded. */
export function encodeParams(params: Params): URLSearchParams {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  return form;
}

/** The ApiError an unsuccessful response stands for. */
export async function errorOf(response: Response): Promise<ApiError> {
  let body: { msg?: string; code?: string; 'retry-after'?: number } = {};
  try {
    body = await response.json();
  } catch {
    // not JSON (a proxy's error page): the status says enough
  }
  const header = Number(response.headers.get('Retry-After'));
  const retryAfter = response.status === 429 ? Math.ceil(body['retry-after'] ?? (header || 1)) : null;
  return new ApiError(body.msg || `The server answered ${response.status}`, body.code ?? 'BAD_REQUEST', response.status, retryAfter);
}

export interface BasicCallOptions {
  /** The server's URL, such as `https://chat.example.com`. */
  server: string;
  credentials: Credentials;
  /** Headers added to every request. */
  headers?: Record<string, string>;
  /** A fetch of your own (defaults to the global one). */
  fetch?: typeof fetch;
}

/** A Call on `fetch` with Basic credentials. */
export function basicCall({ server, credentials, headers = {}, fetch: fetchImpl = globalThis.fetch }: BasicCallOptions): Call {
  const base = `${server.replace(/\/+$/, '')}/api/v1`;
  const authorization = basicAuthorization(credentials);
  return async (method, path, params, signal) => {
    const inQuery = method !== 'POST';
    const form = encodeParams(params);
    const query = inQuery && form.toString() ? `?${form}` : '';
    let response: Response;
    try {
      response = await fetchImpl(`${base}${path}${query}`, {
        method,
        headers: { ...headers, Authorization: authorization },
        body: inQuery ? undefined : form,
        signal,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new ApiError('Cannot reach the server', 'NETWORK_ERROR', 0);
    }
    if (!response.ok) throw await errorOf(response);
    return response.json();
  };
}
