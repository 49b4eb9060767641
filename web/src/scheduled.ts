// Scheduled messages ("send later", Zulip's /scheduled_messages): scheduling what the compose box
// holds, and cancelling; register's `scheduled_messages` and their events keep the list.
import type { Api } from './api.ts';
import type { Destination } from './types.ts';

export interface ScheduledMessage {
  scheduled_message_id: number;
  type: 'stream' | 'private';
  /** The channel's id, or the people's ids. */
  to: number | number[];
  topic?: string;
  content: string;
  scheduled_delivery_timestamp: number;
  failed: boolean;
}

export const scheduledDestination = (m: ScheduledMessage): Destination =>
  m.type === 'stream' ? { kind: 'stream', streamId: m.to as number, topic: m.topic ?? '' } : { kind: 'dm', userIds: m.to as number[] };

export async function scheduleMessage(api: Api, to: Destination, content: string, at: Date): Promise<void> {
  const when = Math.floor(at.getTime() / 1000);
  const target = to.kind === 'stream' ? { type: 'stream', to: to.streamId, topic: to.topic } : { type: 'direct', to: to.userIds };
  await api.post('/scheduled_messages', { ...target, content, scheduled_delivery_timestamp: when });
}

export async function cancelScheduled(api: Api, id: number): Promise<void> {
  await api.delete(`/scheduled_messages/${id}`);
}
