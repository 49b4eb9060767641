// The drafts overlay (loaded the first time it opens): `#drafts`, every draft kept on the server,
// newest first, with where it goes (Restore puts one back in the compose box, Delete removes it);
// `#scheduled`, the messages waiting to be sent, soonest first (Cancel); `#reminders`, the
// reminders set on messages, soonest first (Delete).
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { describeError } from '../api.ts';
import type { ChatClient } from '../client.ts';
import { deleteDraft, destinationOf, type Draft, type DraftsTab } from '../drafts.ts';
import { channelName, dmName, formatFullDate } from '../format.ts';
import { cancelScheduled, scheduledDestination } from '../scheduled.ts';
import { deleteReminder } from '../reminders.ts';
import type { AppState } from '../state.ts';
import { useCloseOnEscape } from './OverlayKeys.ts';
import type { Destination } from '../types.ts';

interface Props {
  client: ChatClient;
  state: AppState;
  tab: DraftsTab;
  closeHref: string;
}

const TAB_LABELS: Record<DraftsTab, string> = { drafts: 'Drafts', scheduled: 'Scheduled messages', reminders: 'Reminders' };

function whereTo(state: AppState, to: Destination): string {
  return to.kind === 'stream' ? `#${channelName(state, to.streamId)} › ${to.topic}` : dmName(state, to.userIds.join(','));
}

export function DraftsOverlay({ client, state, tab, closeHref }: Props) {
  useCloseOnEscape(closeHref);
  const [error, setError] = useState<string | null>(null);
  function restore(d: Draft) {
    client.composeRequests.set({ to: destinationOf(d), text: d.content, draftId: d.id });
    location.hash = closeHref;
  }
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="drafts-title">
      <div class="overlay-panel drafts-overlay">
        <header class="overlay-header">
          <h1 id="drafts-title">{TAB_LABELS[tab]}</h1>
          <nav class="tabs" aria-label="Lists">
            {(Object.keys(TAB_LABELS) as DraftsTab[]).map((t) => (
              <a key={t} href={`#${t}`} aria-current={t === tab ? 'page' : undefined}>
                {TAB_LABELS[t]}
              </a>
            ))}
          </nav>
          <a class="icon-button" href={closeHref} aria-label="Close">
            ✕
          </a>
        </header>
        <div class="overlay-detail">
          {error && (
            <p class="alert alert-error" role="alert">
              {error}
            </p>
          )}
          {tab === 'drafts' && state.drafts.length === 0 && <p class="hint">No drafts. What you write and do not send is kept here.</p>}
          {tab === 'scheduled' && state.scheduled.length === 0 && <p class="hint">No scheduled messages. "Send later" in the compose box makes one.</p>}
          {tab === 'reminders' && state.reminders.length === 0 && <p class="hint">No reminders. "Remind me about this" in a message's menu sets one.</p>}
          <ul class="drafts">
            {tab === 'drafts' &&
              state.drafts.map((d) => (
                <Entry key={d.id} label="Draft" state={state} to={destinationOf(d)} content={d.content} time={d.timestamp}>
                  <button type="button" class="button button-small" onClick={() => restore(d)}>
                    Restore
                  </button>
                  <button
                    type="button"
                    class="button button-small button-secondary"
                    onClick={() => deleteDraft(client.api, d.id).catch((err) => setError(describeError(err)))}
                  >
                    Delete
                  </button>
                </Entry>
              ))}
            {tab === 'scheduled' &&
              state.scheduled.map((m) => (
                <Entry
                  key={m.scheduled_message_id}
                  label="Scheduled message"
                  state={state}
                  to={scheduledDestination(m)}
                  content={m.content}
                  time={m.scheduled_delivery_timestamp}
                >
                  <button
                    type="button"
                    class="button button-small button-secondary"
                    onClick={() => cancelScheduled(client.api, m.scheduled_message_id).catch((err) => setError(describeError(err)))}
                  >
                    Cancel
                  </button>
                </Entry>
              ))}
            {tab === 'reminders' &&
              state.reminders.map((r) => (
                <Entry
                  key={r.reminder_id}
                  label="Reminder"
                  state={state}
                  to={{ kind: 'dm', userIds: [state.me.userId] }}
                  content={r.content}
                  time={r.scheduled_delivery_timestamp}
                >
                  <a class="button button-small button-secondary" href={`#narrow/near/${r.reminder_target_message_id}`}>
                    Go to message
                  </a>
                  <button
                    type="button"
                    class="button button-small button-secondary"
                    onClick={() => deleteReminder(client.api, r.reminder_id).catch((err) => setError(describeError(err)))}
                  >
                    Delete
                  </button>
                </Entry>
              ))}
          </ul>
        </div>
      </div>
    </div>
  );
}

function Entry({
  label,
  state,
  to,
  content,
  time,
  children,
}: {
  label: string;
  state: AppState;
  to: Destination;
  content: string;
  time: number;
  children: ComponentChildren;
}) {
  return (
    <li class="draft" aria-label={`${label} to ${whereTo(state, to)}`}>
      <div class="draft-meta">
        <strong>{whereTo(state, to)}</strong>
        <time dateTime={new Date(time * 1000).toISOString()}>{formatFullDate(time, state.settings.twenty_four_hour_time)}</time>
      </div>
      <p class="draft-content">{content}</p>
      <div class="actions">{children}</div>
    </li>
  );
}
