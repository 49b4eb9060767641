// An HTTP client that talks to the server the way zulip-js and the Python client do: Basic auth,
// form-encoded bodies with JSON-encoded non-string values, or multipart.
import http from 'node:http';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
  text: string;
}

export type Params = Record<string, unknown>;

/** Python-client encoding: strings as they are, everything else as JSON. */
export function encodeForm(params: Params): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) form.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  return form.toString();
}

export function multipart(
  params: Params,
  files: { field: string; filename: string; contentType: string; data: Buffer }[] = [],
): { body: Buffer; contentType: string } {
  const boundary = `----test${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(params)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${typeof v === 'string' ? v : JSON.stringify(v)}\r\n`));
  }
  for (const f of files) {
    // An empty contentType sends the part without one, as the Python client does.
    const type = f.contentType ? `Content-Type: ${f.contentType}\r\n` : '';
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${f.field}"; filename="${f.filename}"\r\n${type}\r\n`),
      f.data,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

// Idle sockets are closed well before the server's own 10 s idle timeout: a request sent on a socket
// the server is closing at that moment fails with "socket hang up".
const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4000 });

export class Client {
  constructor(
    readonly port: number,
    readonly host: string,
    readonly credentials?: { email: string; apiKey: string },
  ) {}

  withCredentials(email: string, apiKey: string): Client {
    return new Client(this.port, this.host, { email, apiKey });
  }

  /** One raw request; `headers` override the defaults (Host, Authorization). */
  request(
    method: string,
    path: string,
    opts: { body?: string | Buffer; contentType?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { Host: this.host };
    if (this.credentials) headers.Authorization = `Basic ${Buffer.from(`${this.credentials.email}:${this.credentials.apiKey}`).toString('base64')}`;
    if (opts.body !== undefined) {
      headers['Content-Type'] = opts.contentType ?? 'application/x-www-form-urlencoded';
      headers['Content-Length'] = String(Buffer.byteLength(opts.body));
    }
    Object.assign(headers, opts.headers);
    for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: this.port, method, path, headers, agent, timeout: opts.timeoutMs ?? 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON (file downloads): keep the text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      if (opts.body !== undefined) req.write(opts.body);
      req.end();
    });
  }

  get(path: string, params: Params = {}, opts?: { headers?: Record<string, string>; timeoutMs?: number }): Promise<Reply> {
    const query = encodeForm(params);
    return this.request('GET', `/api/v1${path}${query ? `?${query}` : ''}`, opts);
  }

  post(path: string, params: Params = {}, opts?: { headers?: Record<string, string>; timeoutMs?: number }): Promise<Reply> {
    return this.request('POST', `/api/v1${path}`, { body: encodeForm(params), ...opts });
  }

  patch(path: string, params: Params = {}, opts?: { timeoutMs?: number }): Promise<Reply> {
    return this.request('PATCH', `/api/v1${path}`, { body: encodeForm(params), ...opts });
  }

  delete(path: string, params: Params = {}): Promise<Reply> {
    return this.request('DELETE', `/api/v1${path}`, { body: encodeForm(params) });
  }

  /** zulip-js style: PATCH/DELETE parameters in the query string. */
  withQuery(method: 'PATCH' | 'DELETE', path: string, params: Params = {}): Promise<Reply> {
    return this.request(method, `/api/v1${path}?${encodeForm(params)}`);
  }

  postMultipart(path: string, params: Params, files?: Parameters<typeof multipart>[1]): Promise<Reply> {
    const { body, contentType } = multipart(params, files);
    return this.request('POST', `/api/v1${path}`, { body, contentType });
  }

  postJson(path: string, params: Params): Promise<Reply> {
    return this.request('POST', `/api/v1${path}`, { body: JSON.stringify(params), contentType: 'application/json' });
  }
}
