// Writing work for the push relay (the PushOutbox table), always inside the transaction of the
// change that causes it, so the work exists exactly when the change committed; the push worker
// (src/push/worker.ts) is woken after the commit and sends it in the background. Without a relay
// (PUSH_RELAY_URL unset) nothing is written: there is nobody to send to.
import type { App } from '../app.ts';
import type { Prisma } from '../db/generated/client.ts';
import { FLAG_BITS, PUSH_NOTIFIED } from '../domain/message-flags.ts';
import { onCommit } from './transaction.ts';

export type PushKind = 'message' | 'remove' | 'register' | 'test' | 'legacy_test';

export interface PushWork {
  kind: PushKind;
  realmId: number;
  userId: number;
  data: Prisma.InputJsonObject;
}

/** Records push work in the current action's transaction; the worker starts on it after the commit. */
export async function enqueuePush(app: App, ...work: PushWork[]): Promise<void> {
  if (!app.config.PUSH_RELAY_URL || work.length === 0) return;
  // The times in UTC, as the worker compares them, whatever the session's time zone.
  const now = new Date();
  await app.prisma.pushOutbox.createMany({ data: work.map((w) => ({ ...w, nextAttemptAt: now, createdAt: now })) });
  onCommit(() => app.pushes.wake(new Date()));
}

/**
 * Messages the user was notified of on their phones and that should no longer show there (read,
 * or deleted): their mark is cleared and a removal notification queued (Zulip's
 * do_clear_mobile_push_notifications_for_ids). `messageIds` null: every read message of the user.
 */
export async function withdrawNotifications(app: App, realmId: number, userId: number, messageIds: readonly number[] | null): Promise<void> {
  if (!app.config.PUSH_RELAY_URL || messageIds?.length === 0) return;
  const rows = await app.prisma.$queryRawUnsafe<{ messageId: number }[]>(
    `UPDATE "UserMessage" SET flags = flags & ~${PUSH_NOTIFIED}
      WHERE "userId" = $1 AND (flags & ${PUSH_NOTIFIED}) <> 0 AND (flags & ${FLAG_BITS.read}) <> 0 ${messageIds ? 'AND "messageId" = ANY($2::int[])' : ''}
      RETURNING "messageId"`,
    ...(messageIds ? [userId, messageIds] : [userId]),
  );
  if (rows.length === 0) return;
  await enqueuePush(app, { kind: 'remove', realmId, userId, data: { message_ids: rows.map((r) => r.messageId).sort((a, b) => a - b) } });
}

/** Removal notifications for deleted messages, from the UserMessage rows the deletion removed. */
export async function withdrawDeleted(app: App, realmId: number, rows: readonly { userId: number; messageId: number; flags: number }[]): Promise<void> {
  const byUser = new Map<number, number[]>();
  for (const r of rows) if (r.flags & PUSH_NOTIFIED) byUser.set(r.userId, [...(byUser.get(r.userId) ?? []), r.messageId]);
  await enqueuePush(
    app,
    ...[...byUser].map(([userId, ids]): PushWork => ({ kind: 'remove', realmId, userId, data: { message_ids: ids.sort((a, b) => a - b) } })),
  );
}
