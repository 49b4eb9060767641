// The REST API as any Zulip client calls it: HTTP Basic with email and API key, parameters in the
// query string (GET, DELETE) or a form body, non-string values JSON-encoded. A browser logged in
// by the server's pages (login, registration) calls the same routes under /json/ with its session
// cookie and Zulip's CSRF token instead. The envelope (errors, parameter encoding, Basic
// credentials) is the client package's.
import { ApiError, basicAuthorization, encodeParams, errorOf, type Call, type Credentials } from '../../packages/client/src/index.ts';

export { ApiError, type Credentials };

/** How requests are authenticated: an API key, or the browser's session cookie. */
export type Auth = Credentials | 'session';

const CSRF_COOKIE = 'csrftoken';

/** The CSRF token the server set in a cookie scripts may read, sent back in a header (Django's way). */
function csrfToken(): string {
  return (
    document.cookie
      .split('; ')
      .find((c) => c.startsWith(`${CSRF_COOKIE}=`))
      ?.slice(CSRF_COOKIE.length + 1) ?? ''
  );
}

/** Where a path goes and what proves who asks. */
function authenticated(
  path: string,
  auth: Auth | undefined,
  method: string,
): { url: string; headers: Record<string, string>; credentials: RequestCredentials } {
  if (auth === 'session') return { url: `/json${path}`, headers: method === 'GET' ? {} : { 'X-CSRFToken': csrfToken() }, credentials: 'same-origin' };
  // credentials: 'omit' keeps the browser's own Basic-auth prompt away from a 401.
  return { url: `/api/v1${path}`, headers: auth ? { Authorization: basicAuthorization(auth) } : {}, credentials: 'omit' };
}

export type Params = Record<string, unknown>;

export async function request<T = any>(method: string, path: string, params: Params = {}, auth?: Auth, signal?: AbortSignal): Promise<T> {
  const query = method === 'GET' || method === 'DELETE';
  const { url, headers, credentials } = authenticated(path, auth, method);
  let response: Response;
  try {
    response = await fetch(`${url}${query && Object.keys(params).length ? `?${encodeParams(params)}` : ''}`, {
      method,
      headers,
      body: query ? undefined : encodeParams(params),
      credentials,
      signal,
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new ApiError('Cannot reach the server', 'NETWORK_ERROR', 0);
  }
  if (!response.ok) throw await errorOf(response);
  return response.json() as Promise<T>;
}

/** The API for one logged-in user. */
export class Api {
  constructor(readonly auth: Auth) {}

  /** The client package's way to call the API (its event connection's requests). */
  readonly call: Call = (method, path, params, signal) => request(method, path, params, this.auth, signal);

  get<T = any>(path: string, params?: Params, signal?: AbortSignal): Promise<T> {
    return request<T>('GET', path, params, this.auth, signal);
  }
  post<T = any>(path: string, params?: Params): Promise<T> {
    return request<T>('POST', path, params, this.auth);
  }
  patch<T = any>(path: string, params?: Params): Promise<T> {
    return request<T>('PATCH', path, params, this.auth);
  }
  delete<T = any>(path: string, params?: Params): Promise<T> {
    return request<T>('DELETE', path, params, this.auth);
  }
  /** A multipart request (POST unless said), for files; `onProgress` hears the share of the body sent so far (0 to 1). */
  upload<T = any>(path: string, form: FormData, onProgress?: (sent: number) => void, method = 'POST'): Promise<T> {
    const { url, headers, credentials } = authenticated(path, this.auth, method);
    // XMLHttpRequest, not fetch: only it tells how much of the body has gone.
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    xhr.withCredentials = credentials !== 'omit';
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    if (onProgress) xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    return new Promise<T>((resolve, reject) => {
      xhr.onerror = () => reject(new ApiError('Cannot reach the server', 'NETWORK_ERROR', 0));
      xhr.onload = () => {
        const response = new Response(xhr.responseText, { status: xhr.status, headers: { 'Retry-After': xhr.getResponseHeader('Retry-After') ?? '' } });
        if (response.ok) resolve(response.json() as Promise<T>);
        else errorOf(response).then(reject);
      };
      xhr.send(form);
    });
  }

  /** An uploaded file or its thumbnail (`/user_uploads/...`), which needs the credentials or the session. */
  async file(path: string): Promise<Blob> {
    const { headers, credentials } = authenticated(path, this.auth, 'GET');
    let response: Response;
    try {
      response = await fetch(path, { headers, credentials });
    } catch {
      throw new ApiError('Cannot reach the server', 'NETWORK_ERROR', 0);
    }
    if (!response.ok) throw await errorOf(response);
    return response.blob();
  }
}

/** Ends the browser's session (the server's logout; its answer is a redirect to the login page, not followed). */
export async function endBrowserSession(): Promise<void> {
  await fetch('/accounts/logout/', { method: 'POST', headers: { 'X-CSRFToken': csrfToken() }, credentials: 'same-origin', redirect: 'manual' });
}

/** A message for people: what went wrong and, for a rate limit, when to try again. */
export function describeError(err: unknown): string {
  if (!(err instanceof ApiError)) return err instanceof Error ? err.message : String(err);
  if (err.status === 429) return `Too many attempts. Try again in ${err.retryAfter ?? 1} second${err.retryAfter === 1 ? '' : 's'}.`;
  return err.message;
}
