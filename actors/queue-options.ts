// What a client asked for when it registered a queue: the filter on event types and messages,
// and the capabilities that change event shapes. Shared by every queue with the same choices.
import { EMPTY_TOPIC_DISPLAY_NAME } from '../src/domain/realm-settings.ts';

export const CAPABILITIES = [
  'notification_settings_null',
  'bulk_message_deletion',
  'user_avatar_url_field_optional',
  'stream_typing_notifications',
  'user_settings_object',
  'linkifier_url_template',
  'user_list_incomplete',
  'include_deactivated_groups',
  'archived_channels',
  'empty_topic_name',
  'simplified_presence_events',
  'individual_emoji_changes',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

export interface QueueOptions {
  eventTypes: readonly string[] | null;
  /** [operator, operand] pairs, operators lower-cased and `stream` read as `channel`. */
  narrow: readonly (readonly [string, string])[];
  allPublicStreams: boolean;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  capabilities: readonly Capability[];
  idleTimeoutSecs: number;
}

export function hasCapability(options: QueueOptions, capability: Capability): boolean {
  return options.capabilities.includes(capability);
}

/** The topic as this client should see it: "" only for clients that understand the empty topic. */
export function displayTopicFor(options: QueueOptions, topic: string): string {
  return topic === '' && !hasCapability(options, 'empty_topic_name') ? EMPTY_TOPIC_DISPLAY_NAME : topic;
}

/**
 * One object per distinct set of options in use, so ten thousand alike queues share one. Clients
 * choose the options (narrows, event types), so an entry lives only as long as a queue holds it.
 */
export class OptionsPool {
  private readonly entries = new Map<string, { options: QueueOptions; queues: number }>();

  /** The shared object for `options`, held until `release` by the queue it was taken for. */
  acquire(options: QueueOptions): QueueOptions {
    const normalized: QueueOptions = { ...options, capabilities: [...options.capabilities].sort() };
    const key = JSON.stringify(normalized);
    const entry = this.entries.get(key);
    if (entry) {
      entry.queues++;
      return entry.options;
    }
    this.entries.set(key, { options: Object.freeze(normalized), queues: 1 });
    return normalized;
  }

  release(options: QueueOptions): void {
    // The shared object serializes to its own key: it was frozen in normalized form.
    const key = JSON.stringify(options);
    const entry = this.entries.get(key);
    if (entry && --entry.queues === 0) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
