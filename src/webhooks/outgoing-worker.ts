// The outgoing-webhook worker (Zulip's outgoing_webhooks queue and zerver/lib/outgoing_webhook.py):
// drains OutgoingWebhookCall, whose rows are written with the messages that mention an
// outgoing-webhook bot in a channel or are sent to it directly (actions/messages.ts). For each it
// POSTs the message to the bot's URL, in Zulip's format or Slack's, and posts the answer back as
// the bot into the same conversation. It runs under a DeliveryScheduler, off the request, and
// claims rows as every table-backed queue does (src/db/outbox.ts), so in a cluster each call is
// made once, and a call queued before a restart is made after it.
//
// Failures as Zulip reports them: a timeout or a connection error is retried with backoff, up to
// MAX_REQUEST_RETRIES times, then the conversation hears "Failure! Bot is unavailable"; an answer
// other than 2xx, or a 2xx one that is not usable JSON, fails at once. Each failure also reaches
// the bot's owner as a direct message from the bot.
import type { App } from '../app.ts';
import { defaultReadBySender, deliverMessage } from '../actions/messages.ts';
import { prepareInternalMessage, type Addressee } from '../actions/messages-prepare.ts';
import { backoff, claimDue, nextLook, removeDone, retryLater } from '../db/outbox.ts';
import type { BotService, User } from '../db/generated/client.ts';
import { INTERFACES } from '../domain/bots.ts';
import { ApiError } from '../errors.ts';
import { log } from '../log.ts';
import { directMessageSlug } from '../markdown/link-syntax.ts';
import { encodeStream, hashUtilEncode } from '../markdown/links.ts';
import { conversationUsers, loadMessages, memberIds, messageObject, type FullMessage } from '../queries/messages.ts';
import { compiledLinkifiers } from '../queries/linkifiers.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { apiEmail } from '../queries/users.ts';
import { ZULIP_VERSION } from '../version.ts';

/** Zulip's MAX_REQUEST_RETRIES: a call that timed out or could not connect is tried this many more times. */
const MAX_REQUEST_RETRIES = 3;
/** Calls made at once: a slow bot must not hold up the others. */
const BATCH = 20;
const POLL_MS = 10_000;
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 60_000;
/** What is read of an answer; a bot's reply is a message, far smaller. */
const MAX_RESPONSE_BYTES = 1024 * 1024;
const RESPONSE_CLIENT = 'OutgoingWebhookResponse';

interface CallRow {
  id: number;
  realmId: number;
  botId: number;
  messageId: number;
  trigger: string;
  attempts: number;
}

/** Everything one call needs, loaded once. */
interface Call {
  row: CallRow;
  realm: RealmInfo;
  bot: User;
  service: BotService;
  message: FullMessage;
  /** The message as Zulip's outgoing webhooks see it (Markdown content, rendered_content beside it). */
  messageDict: Record<string, unknown>;
}

/** The request could not be made or did not finish: worth trying again. */
class Unreachable extends Error {}

/** Sends what is due; resolves to when to look again. */
export async function drainOutgoingWebhooks(app: App): Promise<Date | null> {
  const leaseMs = app.config.OUTGOING_WEBHOOK_TIMEOUT_SECONDS * 1000 + 60_000;
  for (;;) {
    if (app.outgoingWebhooks.stopping) return null;
    const rows = await claimDue<CallRow>(app, 'OutgoingWebhookCall', 'id, "realmId", "botId", "messageId", trigger, attempts', BATCH, leaseMs);
    if (rows.length === 0) break;
    await Promise.all(
      rows.map(async (row) => {
        let done = true;
        try {
          done = await handle(app, row);
        } catch (err) {
          // A fault of this call (a bug, the database) is logged; the call is not made twice.
          log.error('outgoing webhook call failed', { id: row.id, bot: row.botId, error: err instanceof Error ? err.stack : String(err) });
        }
        if (done) await removeDone(app, 'OutgoingWebhookCall', [row.id]);
        else await retryLater(app, 'OutgoingWebhookCall', [row.id], backoff(row.attempts, FIRST_RETRY_MS, MAX_RETRY_MS));
      }),
    );
  }
  return nextLook(app, 'OutgoingWebhookCall', POLL_MS);
}

/** Makes one call; false when it should be tried again later. */
async function handle(app: App, row: CallRow): Promise<boolean> {
  const call = await loadCall(app, row);
  if (!call) return true;
  const slack = call.service.interface === INTERFACES.SLACK;
  if (slack && !call.message.channel) {
    await failWithMessage(app, call, "Slack outgoing webhooks don't support direct messages.");
    return true;
  }
  let answer: { status: number; body: Buffer };
  try {
    answer = await post(app, call.service.baseUrl, slack ? slackRequest(app, call) : genericRequest(app, call));
  } catch (err) {
    if (!(err instanceof Unreachable)) throw err;
    if (row.attempts <= MAX_REQUEST_RETRIES) {
      log.info('outgoing webhook call failed; retrying later', { id: row.id, bot: row.botId, attempts: row.attempts, error: err.message });
      return false;
    }
    log.warn('outgoing webhook call given up after retries', { id: row.id, bot: row.botId });
    await failWithMessage(app, call, 'Bot is unavailable');
    await notifyBotOwner(app, call, { failure: err.message });
    return true;
  }
  if (answer.status < 200 || answer.status >= 300) {
    log.warn('outgoing webhook answered with an error status', { id: row.id, bot: row.botId, status: answer.status });
    await failWithMessage(app, call, `Third party responded with ${answer.status}`);
    await notifyBotOwner(app, call, { status: answer.status, content: answer.body.length > 0 ? pyRepr(answer.body, 'bytes') : undefined });
    return true;
  }
  const text = answer.body.toString('utf8');
  try {
    const content = replyContent(text, slack);
    if (content !== null) await reply(app, call, content);
  } catch (err) {
    if (!(err instanceof BadAnswer)) throw err;
    await failWithMessage(app, call, err.message);
    await notifyBotOwner(app, call, {
      failure: `The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> ${err.message}`,
      content: text ? pyRepr(text, 'str') : undefined,
    });
  }
  return true;
}

async function loadCall(app: App, row: CallRow): Promise<Call | null> {
  // An organization another process created may not be known here yet.
  const realm = app.realms.byId(row.realmId) ?? (await app.realms.reload(row.realmId));
  if (!realm) return null;
  const [bot, service, [message]] = await Promise.all([
    app.prisma.user.findUnique({ where: { id: row.botId } }),
    app.prisma.botService.findUnique({ where: { botId: row.botId } }),
    loadMessages(app, [row.messageId]),
  ]);
  // A bot deactivated or turned into another kind, or a message deleted, since: nothing to do.
  if (!bot?.isActive || !service || !message) return null;
  const { raw_content: raw, ...dict } = messageObject(app, realm, message, await conversationUsers(app, [message]), await compiledLinkifiers(app, realm.id));
  const messageDict = { ...dict, content: raw, content_type: 'text/x-markdown', rendered_content: message.renderedContent };
  return { row, realm, bot, service, message, messageDict };
}

/** Zulip's GenericOutgoingWebhookService request: JSON. */
function genericRequest(app: App, call: Call): { type: string; body: string } {
  const body = {
    data: call.message.content,
    message: call.messageDict,
    bot_email: apiEmail(app, call.realm, call.bot),
    bot_full_name: call.bot.fullName,
    token: call.service.token,
    trigger: call.row.trigger,
  };
  return { type: 'application/json', body: JSON.stringify(body) };
}

/** Zulip's SlackOutgoingWebhookService request: Slack's legacy outgoing-webhook form fields. */
function slackRequest(app: App, call: Call): { type: string; body: string } {
  const m = call.message;
  const ts = String(call.messageDict.timestamp);
  const fields: [string, string][] = [
    ['token', call.service.token],
    ['team_id', `T${call.realm.id}`],
    ['team_domain', new URL(app.realms.url(call.realm)).host],
    ['channel_id', `C${m.channel!.id}`],
    ['channel_name', m.channel!.name],
    ['thread_ts', ts],
    ['timestamp', ts],
    ['user_id', `U${m.senderId}`],
    ['user_name', m.sender.fullName],
    ['text', m.content],
    ['trigger_word', call.row.trigger],
    ['service_id', String(call.bot.id)],
  ];
  return { type: 'application/x-www-form-urlencoded', body: new URLSearchParams(fields).toString() };
}

async function post(app: App, url: string, request: { type: string; body: string }): Promise<{ status: number; body: Buffer }> {
  const seconds = app.config.OUTGOING_WEBHOOK_TIMEOUT_SECONDS;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': request.type, 'User-Agent': `ZulipOutgoingWebhook/${ZULIP_VERSION}` },
      body: request.body,
      signal: AbortSignal.timeout(seconds * 1000),
    });
    return { status: response.status, body: await readCapped(response) };
  } catch (err) {
    if (err instanceof Error && err.name === 'TimeoutError') throw new Unreachable(`Request timed out after ${seconds} seconds.`);
    throw new Unreachable('A connection error occurred. Is my bot server down?');
  }
}

/** The answer's body, up to MAX_RESPONSE_BYTES: a bot cannot make the server hold more. */
async function readCapped(response: Response): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    const part = Buffer.from(chunk as Uint8Array).subarray(0, MAX_RESPONSE_BYTES - size);
    chunks.push(part);
    size += part.length;
    if (size >= MAX_RESPONSE_BYTES) {
      await response.body.cancel().catch(() => {});
      break;
    }
  }
  return Buffer.concat(chunks);
}

/** A 2xx answer the server cannot use; its message is Zulip's. */
class BadAnswer extends Error {}

/** What the bot answered to post back, or null for nothing (Zulip's process_success_response). */
function replyContent(text: string, slack: boolean): string | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new BadAnswer('Invalid JSON in response');
  }
  // Bot servers from before 2021 answered "" for "no response required".
  if (json === '') return null;
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new BadAnswer('Invalid response format');
  const answer = json as Record<string, unknown>;
  let content: unknown;
  if (slack) content = answer.text;
  else if (answer.response_not_required) return null;
  else content = 'response_string' in answer ? answer.response_string : answer.content;
  if (content === undefined || content === null) return null;
  const str = typeof content === 'string' ? content : JSON.stringify(content);
  return str.trim() === '' ? null : str;
}

/** Posts as the bot into the conversation of the triggering message, past the channel's posting rules (Zulip's send_response_message). */
async function reply(app: App, call: Call, content: string): Promise<void> {
  const m = call.message;
  const to: Addressee = m.channel ? { kind: 'channel', channel: m.channel.id, topic: m.topic } : { kind: 'direct', users: memberIds(m.directGroup!.memberKey) };
  await sendAsBot(app, call, to, content);
}

async function sendAsBot(app: App, call: Call, to: Addressee, content: string): Promise<void> {
  const prepared = await prepareInternalMessage(app, call.realm, call.bot, to, content);
  await deliverMessage(app, call.realm, prepared, { client: RESPONSE_CLIENT, readBySender: defaultReadBySender(RESPONSE_CLIENT) });
}

/** Zulip's fail_with_message: "Failure! ..." in the conversation, unless it has gone (a channel deleted meanwhile). */
async function failWithMessage(app: App, call: Call, failure: string): Promise<void> {
  try {
    await reply(app, call, `Failure! ${failure}`);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
  }
}

/** Zulip's message_link_url. */
function messageUrl(app: App, realm: RealmInfo, m: FullMessage): string {
  const narrow = m.channel
    ? `channel/${encodeStream(m.channel.id, m.channel.name)}/topic/${hashUtilEncode(m.topic)}`
    : `dm/${directMessageSlug(memberIds(m.directGroup!.memberKey))}`;
  return `${app.realms.url(realm)}/#narrow/${narrow}/near/${m.id}`;
}

/** Zulip's notify_bot_owner: the bot tells its owner what went wrong, in a direct message. */
async function notifyBotOwner(app: App, call: Call, what: { status?: number; failure?: string; content?: string }): Promise<void> {
  if (call.bot.botOwnerId === null) return;
  let text = `[A message](${messageUrl(app, call.realm, call.message)}) to your bot @_**${call.bot.fullName}** triggered an outgoing webhook.`;
  if (what.failure) text += `\n${what.failure}`;
  else if (what.status) text += `\nThe webhook got a response with status code *${what.status}*.`;
  if (what.content) text += `\nThe response contains the following payload:\n\`\`\`\n${what.content}\n\`\`\``;
  await sendAsBot(app, call, { kind: 'direct', users: [call.bot.botOwnerId] }, text);
}

/**
 * Python's repr() of the answer, as Zulip's notice shows it: `b'...'` for bytes (non-ASCII as
 * \xNN), `'...'` for text (control characters as \xNN); double quotes when the text has a single
 * quote and no double one.
 */
function pyRepr(value: Buffer | string, kind: 'bytes' | 'str'): string {
  const text = typeof value === 'string' ? value : value.toString('latin1');
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\' || ch === quote) out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || (code >= 0x7f && code <= 0xa0) || (kind === 'bytes' && code > 0x7f)) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${kind === 'bytes' ? 'b' : ''}${quote}${out}${quote}`;
}
