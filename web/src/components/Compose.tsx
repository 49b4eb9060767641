// The compose box: to a channel and topic or to people, with a Markdown preview rendered by the
// server (POST /messages/render), typing notifications, and Ctrl+Enter to send.
import { Fragment } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { describeError } from '../api.ts';
import type { ChatClient, Destination } from '../client.ts';
import { prepareContent } from '../content.ts';
import type { AppState } from '../state.ts';
import { useStore } from '../store.ts';
import type { User } from '../types.ts';

type Mode = 'stream' | 'dm';

/** People named in the "To" field (emails or full names, comma-separated), or the first name not recognized. */
function resolveRecipients(text: string, users: User[]): { ids: number[] } | { unknown: string } {
  const ids: number[] = [];
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const lower = part.toLowerCase();
    const user =
      users.find((u) => u.email.toLowerCase() === lower || u.delivery_email?.toLowerCase() === lower) ?? users.find((u) => u.full_name.toLowerCase() === lower);
    if (!user) return { unknown: part };
    ids.push(user.user_id);
  }
  return { ids };
}

export function Compose({ client, state }: { client: ChatClient; state: AppState }) {
  const { narrow } = state.view;
  const [mode, setMode] = useState<Mode>('stream');
  const [streamId, setStreamId] = useState<number | null>(null);
  const [topic, setTopic] = useState('');
  const [to, setTo] = useState('');
  const [content, setContent] = useState('');
  const [preview, setPreview] = useState<string | null>(null);
  const [previewing, setPreviewing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const request = useStore(client.composeRequests);
  const users = useMemo(() => [...state.users.values()].filter((u) => u.is_active), [state.users]);
  const subs = useMemo(() => [...state.subs.values()].sort((a, b) => a.name.localeCompare(b.name)), [state.subs]);

  // The conversation on screen is where a message goes, unless the user picks another.
  useEffect(() => {
    if (narrow.kind === 'channel' || narrow.kind === 'topic') {
      setMode('stream');
      if (narrow.streamId !== streamId || narrow.kind === 'topic') setTopic(narrow.kind === 'topic' ? narrow.topic : '');
      setStreamId(narrow.streamId);
    } else if (narrow.kind === 'dm') {
      setMode('dm');
      setTo(narrow.userIds.map((id) => state.users.get(id)?.email ?? '').filter(Boolean).join(', '));
    }
  }, [narrow]);

  // A reply or a quote (client.reply): its conversation, its text added, the box focused.
  useEffect(() => {
    if (!request) return;
    const { to: target, text } = request;
    if (target.kind === 'stream') {
      setMode('stream');
      setStreamId(target.streamId);
      setTopic(target.topic);
    } else {
      setMode('dm');
      setTo(target.userIds.map((id) => state.users.get(id)?.email ?? '').filter(Boolean).join(', '));
    }
    if (text) setContent((old) => (old.trim() ? `${old.trimEnd()}\n\n${text}` : text));
    setPreviewing(false);
    requestAnimationFrame(() => document.getElementById('compose-content')?.focus());
  }, [request]);

  const channel = streamId ?? subs[0]?.stream_id ?? null;
  const recipients = resolveRecipients(to, users);
  const destination: Destination | null =
    mode === 'stream' ? (channel !== null ? { kind: 'stream', streamId: channel, topic: topic.trim() } : null) : 'ids' in recipients && recipients.ids.length ? { kind: 'dm', userIds: recipients.ids } : null;

  function onInput(value: string) {
    setContent(value);
    if (destination) client.typing(destination, value.trim() ? 'start' : 'stop');
  }

  async function togglePreview() {
    if (previewing) return setPreviewing(false);
    setPreviewing(true);
    setPreview(null);
    try {
      setPreview(prepareContent(await client.render(content), state.me.userId));
    } catch (err) {
      setPreview(null);
      setPreviewing(false);
      setError(describeError(err));
    }
  }

  async function send(e?: Event) {
    e?.preventDefault();
    if (!content.trim() || sending) return;
    if (!destination) {
      setError(mode === 'stream' ? 'Choose a channel.' : 'unknown' in recipients ? `Nobody here is called ${recipients.unknown}.` : 'Say who the message is for.');
      return;
    }
    setSending(true);
    setError(null);
    try {
      await client.send(destination, content);
      setContent('');
      setPreviewing(false);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setSending(false);
    }
  }

  // With the Enter-to-send setting, Enter sends and Shift+Enter starts a new line; else Ctrl+Enter sends.
  const enterSends = state.settings.enter_sends;
  function onKeyDown(e: KeyboardEvent) {
    if (e.key === 'Enter' && (enterSends ? !e.shiftKey && !e.ctrlKey && !e.metaKey : e.ctrlKey || e.metaKey)) void send(e);
  }

  const topics = channel !== null ? state.topics.get(channel) ?? [] : [];
  return (
    <form class="compose" onSubmit={send} aria-label="Compose a message">
      <div class="compose-target">
        <div class="segmented" role="radiogroup" aria-label="Send to">
          {(['stream', 'dm'] as const).map((m) => (
            <label key={m} class={mode === m ? 'selected' : ''}>
              <input type="radio" name="compose-mode" value={m} checked={mode === m} onChange={() => setMode(m)} />
              {m === 'stream' ? 'Channel' : 'Direct message'}
            </label>
          ))}
        </div>
        {/* Keyed: Preact would otherwise reuse the topic field for the "To" field, with the topic's attributes. */}
        {mode === 'stream' ? (
          <Fragment key="stream">
            <label for="compose-channel" class="visually-hidden">Channel</label>
            <select id="compose-channel" value={channel ?? ''} onChange={(e) => setStreamId(Number(e.currentTarget.value))}>
              {subs.map((s) => <option key={s.stream_id} value={s.stream_id}>#{s.name}</option>)}
            </select>
            <label for="compose-topic" class="visually-hidden">Topic</label>
            <input id="compose-topic" placeholder="Topic" value={topic} list="compose-topics" onInput={(e) => setTopic(e.currentTarget.value)} maxLength={60} />
            <datalist id="compose-topics">
              {topics.map((t) => <option key={t.name} value={t.name} />)}
            </datalist>
          </Fragment>
        ) : (
          <Fragment key="dm">
            <label for="compose-to" class="visually-hidden">To</label>
            <input id="compose-to" placeholder="To: names or emails, separated by commas" value={to} list="compose-people" onInput={(e) => setTo(e.currentTarget.value)} />
            <datalist id="compose-people">
              {users.map((u) => <option key={u.user_id} value={u.email}>{u.full_name}</option>)}
            </datalist>
          </Fragment>
        )}
      </div>
      {previewing ? (
        <div class="compose-preview rendered" aria-live="polite" aria-label="Preview" tabIndex={0} dangerouslySetInnerHTML={{ __html: preview ?? '<p class="hint">Rendering…</p>' }} />
      ) : (
        <>
        <label for="compose-content" class="visually-hidden">Message</label>
        <textarea
          id="compose-content"
          rows={3}
          placeholder={`Message (Markdown; ${enterSends ? 'Enter' : 'Ctrl+Enter'} sends)`}
          aria-keyshortcuts="c"
          value={content}
          onInput={(e) => onInput(e.currentTarget.value)}
          onKeyDown={onKeyDown}
          onBlur={() => destination && client.typing(destination, 'stop')}
        />
        </>
      )}
      {error && <p class="alert alert-error" role="alert">{error}</p>}
      <div class="compose-actions">
        <button type="button" class="button button-secondary" aria-pressed={previewing} onClick={togglePreview} disabled={!content.trim() && !previewing}>
          Preview
        </button>
        <button type="submit" class="button" disabled={sending || !content.trim()}>
          {sending ? 'Sending…' : 'Send'}
        </button>
      </div>
    </form>
  );
}
