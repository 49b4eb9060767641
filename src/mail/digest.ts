// Digest emails (Zulip's enqueue_emails / send_digest_email): on its organization's digest weekday
// (realm digest_emails_enabled, digest_weekday, 0 = Monday, UTC), a member who wants them
// (enable_digest_emails) and has not been active for DIGEST_AWAY_DAYS gets one email of what
// happened in their channels meanwhile: the busiest topics of the past week with their first
// messages, and the channels created. At most one a week: the DigestEmail row is claimed in one
// statement before the email is built, so with several processes each user gets it once. Nothing
// is sent when nothing happened. Checked every DIGEST_CHECK_SECONDS by the notification email
// worker (src/mail/missed-messages.ts).
import type { App } from '../app.ts';
import type { Message, User } from '../db/generated/client.ts';
import { userSettingsSchema } from '../domain/user-settings.ts';
import { log } from '../log.ts';
import { html, Html } from '../pages/html.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { absoluteLinks, channelNarrowUrl, footer, unsubscribeHeaders, unsubscribeUrl } from './email-parts.ts';

const DAY_MS = 86_400_000;
/** Zulip's DIGEST_CUTOFF: who was active more recently than this gets no digest. */
const DIGEST_AWAY_DAYS = 5;
/** A week, less a day so that a weekly check running a little early still finds the user due. */
const DIGEST_EVERY_MS = 6 * DAY_MS;
const HOT_TOPICS = 4;
const MESSAGES_PER_TOPIC = 2;

const lastCheck = new WeakMap<App, number>();

/** Sends the digests due now, at most every DIGEST_CHECK_SECONDS; resolves to the next check. */
export async function sendDueDigests(app: App): Promise<Date> {
  const every = app.config.DIGEST_CHECK_SECONDS * 1000;
  const last = lastCheck.get(app);
  if (last !== undefined && Date.now() < last + every) return new Date(last + every);
  lastCheck.set(app, Date.now());
  // Zulip's weekdays start on Monday.
  const weekday = (new Date().getUTCDay() + 6) % 7;
  const realms = await app.prisma.realm.findMany({ where: { deactivated: false }, select: { id: true } });
  for (const { id } of realms) {
    const realm = app.realms.byId(id);
    if (!realm?.settings.digest_emails_enabled || realm.settings.digest_weekday !== weekday) continue;
    for (const user of await awayUsers(app, realm)) {
      if (app.notificationEmails.stopping) break;
      try {
        await sendDigest(app, realm, user);
      } catch (err) {
        log.error('digest email failed', { userId: user.id, error: err instanceof Error ? err.stack : String(err) });
      }
    }
  }
  return new Date(Date.now() + every);
}

/** Members who want digests, were away DIGEST_AWAY_DAYS, and got none this week: claimed for this process. */
async function awayUsers(app: App, realm: RealmInfo): Promise<User[]> {
  const awaySince = new Date(Date.now() - DIGEST_AWAY_DAYS * DAY_MS);
  const candidates = await app.prisma.user.findMany({
    where: { realmId: realm.id, isActive: true, isBot: false, isImportedStub: false, NOT: { presence: { is: { lastActiveTime: { gte: awaySince } } } } },
    orderBy: { id: 'asc' },
  });
  const wanting = candidates.filter((u) => userSettingsSchema.parse(u.settings ?? {}).enable_digest_emails);
  if (wanting.length === 0) return [];
  const claimed = await app.prisma.$queryRawUnsafe<{ userId: number }[]>(
    `INSERT INTO "DigestEmail" ("userId", "sentAt") SELECT unnest($1::int[]), now() AT TIME ZONE 'UTC'
       ON CONFLICT ("userId") DO UPDATE SET "sentAt" = EXCLUDED."sentAt"
       WHERE "DigestEmail"."sentAt" < (now() AT TIME ZONE 'UTC') - $2 * interval '1 millisecond'
     RETURNING "userId"`,
    wanting.map((u) => u.id),
    DIGEST_EVERY_MS,
  );
  const ids = new Set(claimed.map((c) => c.userId));
  return wanting.filter((u) => ids.has(u.id));
}

type TopicMessage = Pick<Message, 'id' | 'channelId' | 'topic' | 'content' | 'renderedContent'> & { sender: { fullName: string } };

async function sendDigest(app: App, realm: RealmInfo, user: User): Promise<void> {
  const since = new Date(Date.now() - 7 * DAY_MS);
  const subscriptions = await app.prisma.subscription.findMany({
    where: { userId: user.id, active: true },
    select: { channelId: true, channel: { select: { name: true } } },
  });
  const channelName = new Map(subscriptions.map((s) => [s.channelId, s.channel.name]));
  // The week's messages start at the smallest id sent in it, read from the date index's recent
  // block ranges (`id + 0`: min(id) alone is planned as a walk of the primary key from the oldest
  // message until one is recent, all of history); each read below starts its index there.
  const [{ firstId }] = await app.prisma.$queryRaw<{ firstId: number | null }[]>`SELECT min(id + 0) AS "firstId" FROM "Message" WHERE "dateSent" >= ${since}`;
  // The busiest topics: most messages in the week, in channels the user is subscribed to.
  const hot =
    firstId === null
      ? []
      : await app.prisma.$queryRawUnsafe<{ channelId: number; topic: string; count: number }[]>(
          `SELECT "channelId", upper(topic) AS topic, count(*)::int AS count FROM "Message"
      WHERE "realmId" = $1 AND "channelId" = ANY($2::int[]) AND id >= $4 AND "dateSent" >= $3
      GROUP BY "channelId", upper(topic) ORDER BY count(*) DESC, max(id) DESC LIMIT ${HOT_TOPICS}`,
          realm.id,
          [...channelName.keys()],
          since,
          firstId,
        );
  const topics = await Promise.all(
    hot.map(async (h) => ({
      ...h,
      messages: await app.prisma.$queryRaw<TopicMessage[]>`
      SELECT m.id, m."channelId", m.topic, m.content, m."renderedContent", json_build_object('fullName', u."fullName") AS sender
        FROM "Message" m JOIN "User" u ON u.id = m."senderId"
       WHERE m."channelId" = ${h.channelId} AND upper(m.topic) = ${h.topic} AND m.id >= ${firstId} AND m."dateSent" >= ${since}
       ORDER BY m.id LIMIT ${MESSAGES_PER_TOPIC}`,
    })),
  );
  const newChannels = await app.prisma.channel.findMany({
    where: { realmId: realm.id, inviteOnly: false, isArchived: false, dateCreated: { gte: since } },
    orderBy: { id: 'asc' },
    select: { id: true, name: true },
  });
  if (topics.length === 0 && newChannels.length === 0) return;
  const realmUrl = app.realms.url(realm);
  const unsubscribe = unsubscribeUrl(app, realm, user.id, 'digest');
  const end = footer(realm, realmUrl, `You are receiving this digest because you have been away from ${realm.name}.`, unsubscribe);
  const topicHtml = topics.map((t) => {
    const { topic } = t.messages[0]!;
    const name = channelName.get(t.channelId)!;
    return html`<h3><a href="${channelNarrowUrl(realmUrl, t.channelId, name, topic)}">#${name} &gt; ${topic}</a> (${t.count} ${t.count === 1 ? 'message' : 'messages'})</h3>${t.messages.map(
      (m) => html`<div><b>${m.sender.fullName}</b>${new Html(absoluteLinks(realmUrl, m.renderedContent))}</div>`,
    )}`;
  });
  const channelHtml = newChannels.map((c) => html`<li><a href="${channelNarrowUrl(realmUrl, c.id, c.name)}">#${c.name}</a></li>`);
  const body = html`<div><p>Here is what happened in ${realm.name} while you were away.</p>${
    topics.length ? html`<h2>Hot conversations</h2>${topicHtml}` : ''
  }${channelHtml.length ? html`<h2>New channels</h2><ul>${channelHtml}</ul>` : ''}${end.html}</div>`;
  const text = [
    `Here is what happened in ${realm.name} while you were away.`,
    '',
    ...(topics.length
      ? [
          'Hot conversations:',
          ...topics.flatMap((t) => {
            const name = channelName.get(t.channelId)!;
            const { topic } = t.messages[0]!;
            return [
              `#${name} > ${topic} (${t.count} ${t.count === 1 ? 'message' : 'messages'}): ${channelNarrowUrl(realmUrl, t.channelId, name, topic)}`,
              ...t.messages.map((m) => `  ${m.sender.fullName}: ${m.content}`),
            ];
          }),
          '',
        ]
      : []),
    ...(newChannels.length ? ['New channels:', ...newChannels.map((c) => `#${c.name}: ${channelNarrowUrl(realmUrl, c.id, c.name)}`), ''] : []),
    end.text,
  ].join('\n');
  const subject = `${realm.name} digest: what you missed`;
  app.mail.send({ to: user.deliveryEmail, subject, text, html: body.markup, headers: unsubscribeHeaders(unsubscribe) });
}
