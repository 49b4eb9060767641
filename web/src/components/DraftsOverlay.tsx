// The drafts overlay (`#drafts`, loaded the first time it opens): every draft kept on the server,
// newest first, with where it goes; Restore puts one back in the compose box, Delete removes it.
import { useState } from 'preact/hooks';
import { describeError } from '../api.ts';
import type { ChatClient } from '../client.ts';
import { deleteDraft, destinationOf, type Draft } from '../drafts.ts';
import { channelName, dmName, formatFullDate } from '../format.ts';
import type { AppState } from '../state.ts';
import { useCloseOnEscape } from './OverlayKeys.ts';

interface Props {
  client: ChatClient;
  state: AppState;
  closeHref: string;
}

function whereTo(state: AppState, d: Draft): string {
  const to = destinationOf(d);
  return to.kind === 'stream' ? `#${channelName(state, to.streamId)} › ${to.topic}` : dmName(state, to.userIds.join(','));
}

export function DraftsOverlay({ client, state, closeHref }: Props) {
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
          <h1 id="drafts-title">Drafts</h1>
          <a class="icon-button" href={closeHref} aria-label="Close">✕</a>
        </header>
        <div class="overlay-detail">
          {error && <p class="alert alert-error" role="alert">{error}</p>}
          {state.drafts.length === 0 && <p class="hint">No drafts. What you write and do not send is kept here.</p>}
          <ul class="drafts">
            {state.drafts.map((d) => (
              <li key={d.id} class="draft" aria-label={`Draft to ${whereTo(state, d)}`}>
                <div class="draft-meta">
                  <strong>{whereTo(state, d)}</strong>
                  <time dateTime={new Date(d.timestamp * 1000).toISOString()}>{formatFullDate(d.timestamp)}</time>
                </div>
                <p class="draft-content">{d.content}</p>
                <div class="actions">
                  <button type="button" class="button button-small" onClick={() => restore(d)}>Restore</button>
                  <button type="button" class="button button-small button-secondary" onClick={() => deleteDraft(client.api, d.id).catch((err) => setError(describeError(err)))}>
                    Delete
                  </button>
                </div>
              </li>
            ))}
          </ul>
        </div>
      </div>
    </div>
  );
}
