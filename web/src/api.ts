// The REST API as any Zulip client calls it: HTTP Basic with email and API key, parameters in the
// query string (GET, DELETE) or a form body, non-string values JSON-encoded.

export interface Credentials {
  email: string;
  apiKey: string;
}

export type Params = Record<string, unknown>;

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

function encode(params: Params): URLSearchParams {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  return form;
}

async function errorOf(response: Response): Promise<ApiError> {
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

export async function request<T = any>(method: string, path: string, params: Params = {}, credentials?: Credentials, signal?: AbortSignal): Promise<T> {
  const query = method === 'GET' || method === 'DELETE';
  const url = `/api/v1${path}${query && Object.keys(params).length ? `?${encode(params)}` : ''}`;
  const headers: Record<string, string> = {};
  if (credentials) headers.Authorization = `Basic ${base64(`${credentials.email}:${credentials.apiKey}`)}`;
  let response: Response;
  try {
    // credentials: 'omit' keeps the browser's own Basic-auth prompt away from a 401.
    response = await fetch(url, { method, headers, body: query ? undefined : encode(params), credentials: 'omit', signal });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new ApiError('Cannot reach the server', 'NETWORK_ERROR', 0);
  }
  if (!response.ok) throw await errorOf(response);
  return response.json() as Promise<T>;
}

/** The API for one logged-in user. */
export class Api {
  constructor(readonly credentials: Credentials) {}

  get<T = any>(path: string, params?: Params, signal?: AbortSignal): Promise<T> {
    return request<T>('GET', path, params, this.credentials, signal);
  }
  post<T = any>(path: string, params?: Params): Promise<T> {
    return request<T>('POST', path, params, this.credentials);
  }
  patch<T = any>(path: string, params?: Params): Promise<T> {
    return request<T>('PATCH', path, params, this.credentials);
  }
  delete<T = any>(path: string, params?: Params): Promise<T> {
    return request<T>('DELETE', path, params, this.credentials);
  }
  /** A multipart request (POST unless said), for files. */
  async upload<T = any>(path: string, form: FormData, method = 'POST'): Promise<T> {
    const { email, apiKey } = this.credentials;
    let response: Response;
    try {
      response = await fetch(`/api/v1${path}`, { method, headers: { Authorization: `Basic ${base64(`${email}:${apiKey}`)}` }, body: form, credentials: 'omit' });
    } catch {
      throw new ApiError('Cannot reach the server', 'NETWORK_ERROR', 0);
    }
    if (!response.ok) throw await errorOf(response);
    return response.json() as Promise<T>;
  }
}

/** A message for people: what went wrong and, for a rate limit, when to try again. */
export function describeError(err: unknown): string {
  if (!(err instanceof ApiError)) return err instanceof Error ? err.message : String(err);
  if (err.status === 429) return `Too many attempts. Try again in ${err.retryAfter ?? 1} second${err.retryAfter === 1 ? '' : 's'}.`;
  return err.message;
}
