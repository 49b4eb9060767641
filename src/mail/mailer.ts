// The server's outgoing mail (invitations, sign-up confirmations, missed-message and digest emails). Actions queue a message after
// their transaction committed and go on; the outbox delivers in the background, one at a time, as
// Zulip's email_senders worker does. Through SMTP when SMTP_URL is set; otherwise, and for any
// message SMTP refused, it is appended to DATA_DIR/mail.log, so an operator can always find a link.
import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../config.ts';
import { log as processLog, type Log } from '../log.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** An HTML alternative to `text` (notification emails); the mail log keeps the text. */
  html?: string;
  /** Extra headers (List-Unsubscribe). */
  headers?: Record<string, string>;
}

export class Outbox {
  /** Where mail goes, in words, for the start banner. */
  readonly description: string;
  readonly logFile: string;
  private readonly transport: Transporter | null;
  private readonly from: string;
  private tail: Promise<void> = Promise.resolve();

  constructor(config: Pick<Config, 'SMTP_URL' | 'DATA_DIR' | 'mailFrom'>) {
    this.logFile = path.join(config.DATA_DIR, 'mail.log');
    this.from = config.mailFrom;
    // Nodemailer waits up to 10 minutes on a silent server; the outbox and a shutdown cannot.
    this.transport = config.SMTP_URL
      ? nodemailer.createTransport({ url: config.SMTP_URL, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 })
      : null;
    // The URL's credentials stay out of the banner.
    this.description = config.SMTP_URL ? `sent through SMTP at ${new URL(config.SMTP_URL).host}` : `not sent (no SMTP_URL): written to ${this.logFile}`;
  }

  /** Queues a message; it leaves after those queued before it. A failure is told to `log` (the log of the request that queued it). */
  send(mail: Mail, log: Log = processLog): void {
    this.tail = this.tail.then(() => this.deliver(mail, log));
  }

  /** Resolves once every queued message has been sent or logged. */
  flush(): Promise<void> {
    return this.tail;
  }

  async close(): Promise<void> {
    await this.flush();
    this.transport?.close();
  }

  private async deliver(mail: Mail, log: Log): Promise<void> {
    try {
      if (!this.transport) return await this.append(mail, null);
      try {
        await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, headers: mail.headers });
      } catch (err) {
        log.error('mail not sent', { to: mail.to, error: String(err) });
        await this.append(mail, `not sent: ${String(err)}`);
      }
    } catch (err) {
      // The log file itself failed (a full disk): say so, and keep the outbox going.
      log.error('mail lost', { to: mail.to, subject: mail.subject, error: String(err) });
    }
  }

  private async append(mail: Mail, problem: string | null): Promise<void> {
    await mkdir(path.dirname(this.logFile), { recursive: true });
    // One line per header, whatever a value holds (an organization's name is anyone's text).
    const line = (name: string, value: string) => `${name}: ${value.replace(/[\r\n]+/g, ' ')}`;
    const head = [line('Date', new Date().toISOString()), line('From', this.from), line('To', mail.to), line('Subject', mail.subject)];
    if (problem) head.push(line('X-Delivery', problem));
    // Links in it are secrets: readable by the server's user only.
    await appendFile(this.logFile, `${'-'.repeat(72)}\n${head.join('\n')}\n\n${mail.text}\n\n`, { mode: 0o600 });
  }
}
