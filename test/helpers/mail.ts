// The mail a test server wrote to DATA_DIR/mail.log (no SMTP_URL in tests), read as an operator would.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { RunningServer } from '../../src/server.ts';

export interface LoggedMail {
  to: string;
  subject: string;
  text: string;
  /** The link on a line of its own in the text. */
  link: string;
}

/** Every message in the log, oldest first, once the outbox has written what was queued. */
export async function loggedMail(server: RunningServer): Promise<LoggedMail[]> {
  await server.app.mail.flush();
  const file = path.join(server.app.config.DATA_DIR, 'mail.log');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split(/^-{72}\n/m)
    .filter((entry) => entry.trim() !== '')
    .map((entry) => {
      const [head = '', ...body] = entry.split('\n\n');
      const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(head)?.[1] ?? '';
      const text = body.join('\n\n').trimEnd();
      return { to: field('To'), subject: field('Subject'), text, link: /^https?:\/\/\S+$/m.exec(text)?.[0] ?? '' };
    });
}

/** The messages sent to `to`, oldest first. */
export async function mailTo(server: RunningServer, to: string): Promise<LoggedMail[]> {
  return (await loggedMail(server)).filter((m) => m.to === to);
}
