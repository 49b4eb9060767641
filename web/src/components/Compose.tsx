// The compose box: to a channel and topic (with the channel's topics as suggestions) or to people
// (pills, picked by name or email, or a whole group), with Zulip's typeahead in the message (`@`,
// `#`, `>`, `:`), an emoji picker, files attached by a button, dropped or pasted (with their
// progress, ending as Zulip's `[name](/user_uploads/...)` link), a Markdown preview rendered by the server (POST /messages/render), typing
// notifications, and Ctrl+Enter (or Enter, as the user's setting says) to send.
import { Fragment } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { describeError } from '../api.ts';
import type { ChatClient } from '../client.ts';
import { prepareContent } from '../content.ts';
import { deleteDraft, saveDraft } from '../drafts.ts';
import { formatFullDate } from '../format.ts';
import { scheduleMessage } from '../scheduled.ts';
import { customEmoji, loadEmojiCatalog } from '../emoji.ts';
import type { AppState } from '../state.ts';
import { useStore } from '../store.ts';
import { applySuggestion, completionAt, MAX_SUGGESTIONS, rankBy, suggestionsFor, type CompletionSource, type Suggestion } from '../typeahead.ts';
import type { User, UserGroup, Destination, EmojiEntry } from '../types.ts';
import { showUploadedImages, uploadFile } from '../uploads.ts';
import { Avatar } from './Avatar.tsx';
import { Emoji } from './Emoji.tsx';
import { PaperclipIcon } from './Icons.tsx';
import { LazyEmojiPicker } from './LazyEmojiPicker.tsx';
import { TypeaheadList, useTypeahead } from './Typeahead.tsx';

type Mode = 'stream' | 'dm';

/** An hour from now, as a datetime-local value (local time, to the minute): what "Send later" offers first. */
function inAnHour(): string {
  const at = new Date(Date.now() + 3600_000);
  at.setMinutes(at.getMinutes() - at.getTimezoneOffset());
  return at.toISOString().slice(0, 16);
}

/** How long typing pauses before what is written is saved as a draft. */
const DRAFT_SAVE_DELAY_MS = 1000;

/** People named by what is left typed in the "To" field (emails or full names, comma-separated), or the first name not recognized. */
function resolveRecipients(text: string, users: User[]): { ids: number[] } | { unknown: string } {
  const ids: number[] = [];
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const lower = part.toLowerCase();
    const user =
      users.find((u) => u.email.toLowerCase() === lower || u.delivery_email?.toLowerCase() === lower) ?? users.find((u) => u.full_name.toLowerCase() === lower);
    if (!user) return { unknown: part };
    ids.push(user.user_id);
  }
  return { ids };
}

/** A person or a group offered as a direct-message recipient (a group adds its members). */
type Recipient = { kind: 'user'; user: User } | { kind: 'group'; group: UserGroup };

export function Compose({ client, state }: { client: ChatClient; state: AppState }) {
  const { narrow } = state.view;
  const [mode, setMode] = useState<Mode>('stream');
  const [streamId, setStreamId] = useState<number | null>(null);
  const [topic, setTopic] = useState('');
  const [focused, setFocused] = useState<'topic' | 'to' | null>(null);
  const [recipientIds, setRecipientIds] = useState<number[]>([]);
  const [to, setTo] = useState('');
  const [content, setContent] = useState('');
  const [caret, setCaret] = useState(0);
  const [emoji, setEmoji] = useState<EmojiEntry[] | null>(null);
  const [pickingEmoji, setPickingEmoji] = useState(false);
  /** Files on their way, by a number of their own: name and share sent. */
  const [uploads, setUploads] = useState<Map<number, { name: string; sent: number }>>(new Map());
  const uploadCount = useRef(0);
  const [dropping, setDropping] = useState(false);
  /** "Send later": the chosen time (a datetime-local value) while its form is open. */
  const [sendAt, setSendAt] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [preview, setPreview] = useState<string | null>(null);
  const [previewing, setPreviewing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const textarea = useRef<HTMLTextAreaElement>(null);
  const previewBox = useRef<HTMLDivElement>(null);
  /** Where the caret goes once the text set by a pick is rendered. */
  const pendingCaret = useRef<number | null>(null);
  /** The draft on the server that holds what is being written, once saved. */
  const draftId = useRef<number | null>(null);
  /** Draft saves and deletions, one after another (a second POST would make a second draft). */
  const draftWork = useRef<Promise<unknown>>(Promise.resolve());
  /** The text and caret as last rendered, for changes that land later (uploads). */
  const latest = useRef({ content, caret });
  latest.current = { content, caret };
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
      setRecipientIds(narrow.userIds);
      setTo('');
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
      setRecipientIds(target.userIds);
      setTo('');
    }
    if (request.draftId !== undefined) {
      draftId.current = request.draftId;
      setContent(text);
    } else if (text) setContent((old) => (old.trim() ? `${old.trimEnd()}\n\n${text}` : text));
    setPreviewing(false);
    requestAnimationFrame(() => textarea.current?.focus());
  }, [request]);

  useEffect(() => showUploadedImages(previewBox.current, client.api), [preview]);

  useLayoutEffect(() => {
    if (pendingCaret.current === null || !textarea.current) return;
    textarea.current.setSelectionRange(pendingCaret.current, pendingCaret.current);
    pendingCaret.current = null;
  }, [content]);

  const channel = streamId ?? subs[0]?.stream_id ?? null;
  useEffect(() => {
    if (channel !== null) client.loadTopics(channel);
  }, [channel]);
  const leftover = resolveRecipients(to, users);
  const recipients = 'ids' in leftover ? [...new Set([...recipientIds, ...leftover.ids])] : null;
  const destination: Destination | null =
    mode === 'stream'
      ? channel !== null
        ? { kind: 'stream', streamId: channel, topic: topic.trim() }
        : null
      : recipients?.length
        ? { kind: 'dm', userIds: recipients }
        : null;

  // What is written is kept as a draft a moment after typing stops; an emptied box deletes it.
  const destinationKey = JSON.stringify(destination);
  useEffect(() => {
    if (!content.trim()) {
      forgetDraft();
      return;
    }
    if (!destination) return;
    const timer = setTimeout(() => {
      draftWork.current = draftWork.current
        .then(() => saveDraft(client.api, draftId.current, destination, content))
        .then(
          (id) => (draftId.current = id),
          (err) => console.warn('saving a draft', describeError(err)),
        );
    }, DRAFT_SAVE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [content, destinationKey]);
  function forgetDraft() {
    draftWork.current = draftWork.current.then(() => {
      const id = draftId.current;
      draftId.current = null;
      return id !== null ? deleteDraft(client.api, id).catch((err) => console.warn('deleting a draft', describeError(err))) : undefined;
    });
  }

  // The message's own typeahead: what the text before the caret is completing.
  const completion = previewing ? null : completionAt(content.slice(0, caret), content.slice(caret));
  const source: CompletionSource = {
    users,
    groups: [...state.groups.values()],
    channels: [...state.channels.values()].sort((a, b) => a.name.localeCompare(b.name)),
    toChannel: mode === 'stream',
    topics: (id) => state.topics.get(id)?.map((t) => t.name),
    emoji: emoji && [...customEmoji(state.realmEmoji), ...emoji],
  };
  const suggestions = completion ? suggestionsFor(completion, source) : [];
  useEffect(() => {
    if (completion?.kind === 'emoji' && !emoji)
      loadEmojiCatalog().then(
        (categories) => setEmoji(categories.flatMap((c) => c.emoji)),
        (err) => setError(describeError(err)),
      );
    if (completion?.kind === 'topic') {
      const named = source.channels.find((c) => c.name.toLowerCase() === completion.channel.toLowerCase());
      if (named) client.loadTopics(named.stream_id);
    }
  }, [completion?.kind, completion?.kind === 'topic' && completion.channel]);
  function pickSuggestion(s: Suggestion) {
    if (!completion) return;
    const before = applySuggestion(content.slice(0, caret), completion, s);
    pendingCaret.current = before.length;
    setCaret(before.length);
    setContent(before + content.slice(caret));
  }
  const contentTypeahead = useTypeahead(
    'compose-typeahead',
    suggestions,
    completion && `${completion.kind}:${completion.start}:${completion.query}`,
    pickSuggestion,
  );

  // The topic field suggests the channel's topics.
  const knownTopics = channel !== null ? (state.topics.get(channel)?.map((t) => t.name) ?? []) : [];
  const topicSuggestions = rankBy(knownTopics, topic, (t) => [t])
    .filter((t) => t !== topic)
    .slice(0, MAX_SUGGESTIONS);
  function pickTopic(name: string) {
    setTopic(name);
    textarea.current?.focus();
  }
  const topicTypeahead = useTypeahead('compose-topic-typeahead', topicSuggestions, focused === 'topic' ? `topic:${topic}` : null, pickTopic);

  // The "To" field suggests people (not yet chosen) and groups, by name or email.
  const candidates: Recipient[] = to.trim()
    ? [
        ...rankBy(
          users.filter((u) => !recipientIds.includes(u.user_id)),
          to.trim(),
          (u) => [u.full_name, u.email],
        ).map((user) => ({ kind: 'user' as const, user })),
        ...rankBy(
          [...state.groups.values()].filter((g) => !g.is_system_group && !g.deactivated),
          to.trim(),
          (g) => [g.name],
        ).map((group) => ({ kind: 'group' as const, group })),
      ].slice(0, MAX_SUGGESTIONS)
    : [];
  function pickRecipient(r: Recipient) {
    const active = new Set(users.map((u) => u.user_id));
    const added = r.kind === 'user' ? [r.user.user_id] : r.group.members.filter((id) => active.has(id) && id !== state.me.userId);
    setRecipientIds((ids) => [...new Set([...ids, ...added])]);
    setTo('');
  }
  const toTypeahead = useTypeahead('compose-to-typeahead', candidates, focused === 'to' ? `to:${to}` : null, pickRecipient);

  /** Puts text at the caret (a space before it unless one is there) and the caret after it. */
  function insertAtCaret(text: string) {
    const before = content.slice(0, caret);
    const joined = `${before === '' || /\s$/.test(before) ? before : `${before} `}${text}`;
    pendingCaret.current = joined.length;
    setCaret(joined.length);
    setContent(joined + content.slice(caret));
    textarea.current?.focus();
  }

  /** Replaces text that is already there (an upload's placeholder), the caret staying where it was in the text around it. */
  function replaceText(from: string, to: string): boolean {
    const { content: text, caret: at } = latest.current;
    const start = text.indexOf(from);
    if (start < 0) return false;
    const next = text.slice(0, start) + to + text.slice(start + from.length);
    const caretThen = at > start ? at + to.length - from.length : at;
    latest.current = { content: next, caret: caretThen };
    pendingCaret.current = caretThen;
    setCaret(caretThen);
    setContent(next);
    return true;
  }

  /** Uploads files, each standing in the text as Zulip's `[Uploading name…]()` until its link replaces it. */
  function attach(files: File[]) {
    if (!files.length) return;
    const jobs = files.map((file) => ({ file, id: ++uploadCount.current, placeholder: `[Uploading ${file.name}…]()` }));
    insertAtCaret(`${jobs.map((j) => j.placeholder).join(' ')} `);
    const progress = (id: number, name: string, sent: number) => setUploads((m) => new Map(m).set(id, { name, sent }));
    for (const { file, id, placeholder } of jobs) {
      progress(id, file.name, 0);
      uploadFile(client.api, file, (sent) => progress(id, file.name, sent))
        .then(
          (link) => replaceText(placeholder, link),
          (err) => {
            replaceText(`${placeholder} `, '') || replaceText(placeholder, '');
            setError(`${file.name}: ${describeError(err)}`);
          },
        )
        .finally(() =>
          setUploads((m) => {
            const left = new Map(m);
            left.delete(id);
            return left;
          }),
        );
    }
  }

  function onDrag(e: DragEvent, over: boolean) {
    if (!e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    setDropping(over);
  }

  function onInput(e: Event) {
    const field = e.currentTarget as HTMLTextAreaElement;
    setContent(field.value);
    setCaret(field.selectionStart);
    if (destination) client.typing(destination, field.value.trim() ? 'start' : 'stop');
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
    if (!content.trim() || sending || uploads.size) return;
    if (!destination) {
      setError(mode === 'stream' ? 'Choose a channel.' : 'unknown' in leftover ? `Nobody here is called ${leftover.unknown}.` : 'Say who the message is for.');
      return;
    }
    setSending(true);
    setError(null);
    try {
      await client.send(destination, content);
      setContent('');
      setCaret(0);
      setPreviewing(false);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setSending(false);
    }
  }

  /** Schedules what is written for `sendAt` (POST /scheduled_messages); the box empties as on sending. */
  async function schedule(e: Event) {
    e.preventDefault();
    if (!sendAt || !destination || !content.trim() || uploads.size) return;
    const at = new Date(sendAt);
    setError(null);
    try {
      await scheduleMessage(client.api, destination, content, at);
      setContent('');
      setCaret(0);
      setSendAt(null);
      setNotice(`Scheduled for ${formatFullDate(at.getTime() / 1000, state.settings.twenty_four_hour_time)}.`);
    } catch (err) {
      setError(describeError(err));
    }
  }

  // With the Enter-to-send setting, Enter sends and Shift+Enter starts a new line; else Ctrl+Enter sends.
  const enterSends = state.settings.enter_sends;
  function onKeyDown(e: KeyboardEvent) {
    if (contentTypeahead.onKeyDown(e)) return;
    if (e.key === 'Enter' && (enterSends ? !e.shiftKey && !e.ctrlKey && !e.metaKey : e.ctrlKey || e.metaKey)) void send(e);
  }
  const followCaret = (e: Event) => setCaret((e.currentTarget as HTMLTextAreaElement).selectionStart);

  function onToKey(e: KeyboardEvent) {
    if (toTypeahead.onKeyDown(e)) return;
    // Backspace in an empty field takes the last person out.
    if (e.key === 'Backspace' && !to) setRecipientIds((ids) => ids.slice(0, -1));
  }

  return (
    <form
      class={`compose${dropping ? ' dropping' : ''}`}
      onSubmit={send}
      aria-label="Compose a message"
      onDragOver={(e) => onDrag(e, true)}
      onDragLeave={(e) => onDrag(e, false)}
      onDrop={(e) => {
        onDrag(e, false);
        attach([...(e.dataTransfer?.files ?? [])]);
      }}
    >
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
            <label for="compose-channel" class="visually-hidden">
              Channel
            </label>
            <select id="compose-channel" value={channel ?? ''} onChange={(e) => setStreamId(Number(e.currentTarget.value))}>
              {subs.map((s) => (
                <option key={s.stream_id} value={s.stream_id}>
                  #{s.name}
                </option>
              ))}
            </select>
            <div class="typeahead-field">
              <label for="compose-topic" class="visually-hidden">
                Topic
              </label>
              <input
                id="compose-topic"
                placeholder="Topic"
                autocomplete="off"
                value={topic}
                maxLength={60}
                {...topicTypeahead.aria}
                onInput={(e) => setTopic(e.currentTarget.value)}
                onKeyDown={(e) => topicTypeahead.onKeyDown(e)}
                onFocus={() => setFocused('topic')}
                onBlur={() => setFocused(null)}
              />
              <TypeaheadList id="compose-topic-typeahead" label="Topics" typeahead={topicTypeahead} pick={pickTopic} render={(t) => t} />
            </div>
          </Fragment>
        ) : (
          <div key="dm" class="typeahead-field pill-field" onClick={(e) => e.target === e.currentTarget && document.getElementById('compose-to')?.focus()}>
            {recipientIds.map((id) => {
              const name = state.users.get(id)?.full_name ?? `User ${id}`;
              return (
                <span key={id} class="pill" data-user-id={id}>
                  {name}
                  <button type="button" class="pill-remove" aria-label={`Remove ${name}`} onClick={() => setRecipientIds((ids) => ids.filter((i) => i !== id))}>
                    ×
                  </button>
                </span>
              );
            })}
            <label for="compose-to" class="visually-hidden">
              To
            </label>
            <input
              id="compose-to"
              placeholder={recipientIds.length ? 'Add another person' : 'To: a name, an email or a group'}
              autocomplete="off"
              value={to}
              {...toTypeahead.aria}
              onInput={(e) => setTo(e.currentTarget.value)}
              onKeyDown={onToKey}
              onFocus={() => setFocused('to')}
              onBlur={() => setFocused(null)}
            />
            <TypeaheadList
              id="compose-to-typeahead"
              label="People and groups"
              typeahead={toTypeahead}
              pick={pickRecipient}
              render={(r) =>
                r.kind === 'user' ? (
                  <>
                    <Avatar user={r.user} size="small" /> {r.user.full_name} <span class="hint">{r.user.email}</span>
                  </>
                ) : (
                  <>
                    {r.group.name} <span class="hint">group of {r.group.members.length}</span>
                  </>
                )
              }
            />
          </div>
        )}
      </div>
      {previewing ? (
        <div
          ref={previewBox}
          class="compose-preview rendered"
          aria-live="polite"
          aria-label="Preview"
          tabIndex={0}
          dangerouslySetInnerHTML={{ __html: preview ?? '<p class="hint">Rendering…</p>' }}
        />
      ) : (
        <div class="typeahead-field">
          <label for="compose-content" class="visually-hidden">
            Message
          </label>
          <textarea
            id="compose-content"
            ref={textarea}
            rows={3}
            placeholder={`Message (Markdown; ${enterSends ? 'Enter' : 'Ctrl+Enter'} sends)`}
            aria-keyshortcuts="c"
            value={content}
            {...contentTypeahead.aria}
            onInput={onInput}
            onKeyDown={onKeyDown}
            onKeyUp={followCaret}
            onClick={followCaret}
            onPaste={(e) => {
              const files = [...(e.clipboardData?.files ?? [])];
              if (!files.length) return;
              e.preventDefault();
              attach(files);
            }}
            onBlur={() => destination && client.typing(destination, 'stop')}
          />
          <TypeaheadList
            id="compose-typeahead"
            label="Suggestions"
            typeahead={contentTypeahead}
            pick={pickSuggestion}
            render={(s) => (
              <>
                {s.emoji && <Emoji name={s.label} {...s.emoji} />}
                <span class="label">{s.label}</span>
                {s.detail && <span class="hint">{s.detail}</span>}
              </>
            )}
          />
        </div>
      )}
      {uploads.size > 0 && (
        <ul class="upload-progress" aria-label="Uploads">
          {[...uploads].map(([id, u]) => (
            <li key={id}>
              <span>Uploading {u.name}</span>
              <progress max={1} value={u.sent} aria-label={`Uploading ${u.name}`} />
            </li>
          ))}
        </ul>
      )}
      {error && (
        <p class="alert alert-error" role="alert">
          {error}
        </p>
      )}
      {notice && (
        <p class="alert alert-info" role="status">
          {notice} <a href="#scheduled">Scheduled messages</a>
        </p>
      )}
      {sendAt !== null && (
        <div class="send-later" role="group" aria-label="Send later">
          <label for="compose-send-at">Send at</label>
          <input id="compose-send-at" type="datetime-local" required value={sendAt} onInput={(e) => setSendAt(e.currentTarget.value)} />
          <button type="button" class="button button-small" disabled={!sendAt || !content.trim() || uploads.size > 0} onClick={schedule}>
            Schedule
          </button>
          <button type="button" class="button button-small button-secondary" onClick={() => setSendAt(null)}>
            Cancel
          </button>
        </div>
      )}
      {pickingEmoji && !previewing && (
        <LazyEmojiPicker
          label="Insert an emoji"
          realmEmoji={state.realmEmoji}
          onPick={(name) => (setPickingEmoji(false), insertAtCaret(`:${name}: `))}
          onClose={() => (setPickingEmoji(false), textarea.current?.focus())}
        />
      )}
      <div class="compose-actions">
        <button
          type="button"
          class="button button-secondary compose-emoji"
          aria-label="Insert an emoji"
          title="Insert an emoji"
          aria-expanded={pickingEmoji}
          disabled={previewing}
          onClick={() => setPickingEmoji(!pickingEmoji)}
        >
          ☺
        </button>
        <label class="button button-secondary compose-attach" title="Attach files (or drop them here, or paste them)">
          <PaperclipIcon />
          <span class="visually-hidden">Attach files</span>
          <input
            type="file"
            multiple
            class="visually-hidden"
            disabled={previewing}
            onChange={(e) => {
              attach([...(e.currentTarget.files ?? [])]);
              e.currentTarget.value = '';
            }}
          />
        </label>
        <button type="button" class="button button-secondary" aria-pressed={previewing} onClick={togglePreview} disabled={!content.trim() && !previewing}>
          Preview
        </button>
        <button
          type="button"
          class="button button-secondary"
          aria-expanded={sendAt !== null}
          disabled={!content.trim()}
          onClick={() => (setNotice(null), setSendAt(sendAt === null ? inAnHour() : null))}
        >
          Send later
        </button>
        <button type="submit" class="button" disabled={sending || uploads.size > 0 || !content.trim()}>
          {sending ? 'Sending…' : uploads.size ? 'Uploading…' : 'Send'}
        </button>
      </div>
    </form>
  );
}
