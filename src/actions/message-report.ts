// POST /messages/{id}/report (Zulip's report_message_backend and send_message_report): the
// Notification Bot posts the report, with the reported message quoted in a spoiler, to the
// organization's moderation request channel.
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { MAX_MESSAGE_LENGTH } from '../domain/channel-settings.ts';
import { badRequest } from '../errors.ts';
import { directMessageSlug, messageLinkSyntax } from '../markdown/link-syntax.ts';
import { accessMessage, memberIds, type FullMessage } from '../queries/messages.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { isoTimestamp } from '../queries/users.ts';
import { sendNotification } from './messages.ts';
import { silentMention, truncate } from './messages-content.ts';
import { REPORT_REASONS, type ReportType } from '../domain/report-reasons.ts';

export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;
/** The quoted message leaves room for the description and the report's own words. */
const MAX_REPORTED_SNIPPET_LENGTH = MAX_MESSAGE_LENGTH - MAX_REPORT_DESCRIPTION_LENGTH - 500;

/** A fence longer than any the quoted text opens, so the quote cannot be closed from inside. */
function unusedFence(content: string): string {
  let length = 3;
  for (const m of content.matchAll(/^ {0,3}(`{3,})/gm)) length = Math.max(length, m[1]!.length + 1);
  return '`'.repeat(length);
}

/** "A", "A and B", "A, B, and C". */
function listMentions(mentions: string[]): string {
  const sorted = [...mentions].sort();
  const last = sorted.pop()!;
  const rest = sorted.join(', ') + (sorted.length > 1 ? ',' : '');
  return `${rest} and ${last}`;
}

async function reportHeader(app: App, reporter: User, m: FullMessage): Promise<string> {
  const by = `${silentMention(reporter)} reported`;
  const sender = silentMention(m.sender);
  const at = `at <time:${isoTimestamp(m.dateSent)}>.`;
  if (m.directGroup === null) return `${by} a message sent by ${sender} ${at}`;
  const members = memberIds(m.directGroup.memberKey);
  if (members.length <= 2) {
    if (m.senderId !== reporter.id) return `${by} a direct message sent by ${sender} ${at}`;
    // Reporting one's own direct message names whom it was sent to.
    const otherId = members.find((id) => id !== reporter.id);
    const other = otherId === undefined ? reporter : await app.prisma.user.findUniqueOrThrow({ where: { id: otherId } });
    return `${by} a direct message sent by ${sender} to ${silentMention(other)} ${at}`;
  }
  const others = await app.prisma.user.findMany({ where: { id: { in: members.filter((id) => id !== m.senderId) } } });
  return `${by} a direct message sent by ${sender} to ${listMentions(others.map(silentMention))} ${at}`;
}

function originalMessageLink(app: App, realm: RealmInfo, m: FullMessage): string {
  if (m.channel) return `Original message at ${messageLinkSyntax(m.channel.id, m.channel.name, m.topic, m.id)}`;
  return `[Original message](${app.realms.url(realm)}/#narrow/dm/${directMessageSlug(memberIds(m.directGroup!.memberKey))}/near/${m.id})`;
}

/** The report, in Zulip's words. */
async function reportContent(app: App, realm: RealmInfo, reporter: User, m: FullMessage, type: ReportType, description: string): Promise<string> {
  const quoted = truncate(m.content, MAX_REPORTED_SNIPPET_LENGTH, '\n[message truncated]');
  const fence = unusedFence(quoted);
  return [
    await reportHeader(app, reporter, m),
    '```quote',
    `**${REPORT_REASONS[type]}**. ${description}`,
    '```',
    '',
    `${fence} spoiler ${originalMessageLink(app, realm, m)}`,
    quoted,
    fence,
  ].join('\n');
}

export async function reportMessage(app: App, realm: RealmInfo, reporter: User, messageId: number, type: ReportType, description: string): Promise<void> {
  if (type === 'other' && description === '') throw badRequest('An explanation is required.');
  const channelId = realm.settings.moderation_request_channel_id;
  if (channelId === -1) throw badRequest('Message reporting is not enabled in this organization.');
  const { message } = await accessMessage(app, realm, reporter, messageId);
  const channel = await app.prisma.channel.findUniqueOrThrow({ where: { id: channelId } });
  const topic = channel.topicsPolicy === 'empty_topic_only' ? '' : `${message.sender.fullName} moderation`;
  await sendNotification(app, realm, channel, topic, await reportContent(app, realm, reporter, message, type, description), new Set());
}
