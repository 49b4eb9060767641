// A browser as far as logins go: keeps the cookies the server sets and sends them back; and what
// the Zulip apps do with the end of their login flows.
import { createDecipheriv } from 'node:crypto';
import * as assert from 'uvu/assert';
import { encodeForm, type Client, type Reply } from './client.ts';

/** The pads the apps make: 32 random bytes, hex (the mobile one as long as the hex of an API key). */
export const MOBILE_OTP = 'a1'.repeat(8) + '3c'.repeat(8) + '07'.repeat(8) + 'f0'.repeat(8);
export const DESKTOP_OTP = '5e'.repeat(16) + '9b'.repeat(16);

export class BrowserJar {
  readonly cookies = new Map<string, string>();

  constructor(readonly client: Client) {}

  async request(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Reply> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const reply = await this.client.request(method, path, { body, headers: { ...(cookie ? { Cookie: cookie } : {}), ...headers } });
    for (const line of (reply.headers['set-cookie'] as string[] | undefined) ?? []) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const [name, value] = [pair.slice(0, eq), pair.slice(eq + 1)];
      if (attributes.some((a) => a.trim() === 'Max-Age=0')) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return reply;
  }

  get(path: string): Promise<Reply> {
    return this.request('GET', path);
  }

  post(path: string, body: string): Promise<Reply> {
    return this.request('POST', path, body);
  }
}

/** The value of a form's hidden field. */
export function hiddenField(page: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(page);
  assert.ok(match, `no field ${name}`);
  return match[1]!;
}

/** What the mobile app reads from zulip://login: the key is the hex XORed back with its pad. */
export function decodeMobileRedirect(location: string): Record<string, string> {
  const url = new URL(location);
  assert.is(`${url.protocol}//${url.host}`, 'zulip://login');
  const q = url.searchParams;
  const encrypted = Buffer.from(q.get('otp_encrypted_api_key')!, 'hex');
  const pad = Buffer.from(MOBILE_OTP, 'hex');
  const apiKey = Buffer.from(encrypted.map((b, i) => b ^ pad[i]!)).toString('latin1');
  return { realm: q.get('realm')!, email: q.get('email')!, user_id: q.get('user_id')!, api_key: apiKey };
}

/** What the desktop app reads from its flow's page: the login token, decrypted with its pad (AES-256-GCM). */
export function decodeDesktopPage(page: string): string {
  const data = Buffer.from(/id="desktop-data" value="([0-9a-f]+)"/.exec(page)![1]!, 'hex');
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(DESKTOP_OTP, 'hex'), data.subarray(0, 12));
  decipher.setAuthTag(data.subarray(-16));
  return Buffer.concat([decipher.update(data.subarray(12, -16)), decipher.final()]).toString();
}

/** Opens the login page (with `query`) and posts its form with these credentials. */
export async function logIn(jar: BrowserJar, user: { email: string; password: string }, query = ''): Promise<Reply> {
  const form = await jar.get(`/login/${query}`);
  assert.is(form.status, 200, form.text);
  const fields: Record<string, string> = { csrfmiddlewaretoken: hiddenField(form.text, 'csrfmiddlewaretoken'), username: user.email, password: user.password };
  for (const name of ['next', 'mobile_flow_otp', 'desktop_flow_otp']) {
    if (form.text.includes(`name="${name}"`)) fields[name] = hiddenField(form.text, name);
  }
  return jar.post('/accounts/login/', encodeForm(fields));
}
