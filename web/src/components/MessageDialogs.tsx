// The dialogs a message's menu opens, a chunk of their own fetched on first use: who has read the
// message, its edit history, and a report to the organization's moderators.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ChatClient } from '../client.ts';
import { prepareContent } from '../content.ts';
import { channelName, formatFullDate, userName } from '../format.ts';
import { messageHistory, readReceipts, reportMessage, type Snapshot } from '../message-details.ts';
import { REPORT_REASONS, type ReportType } from '../../../src/domain/report-reasons.ts';
import type { Message } from '../types.ts';
import { ErrorLine, useAction } from './Action.tsx';
import { Avatar } from './Avatar.tsx';

export type MessageDialogKind = 'receipts' | 'history' | 'report';

export interface MessageDialogProps {
  kind: MessageDialogKind;
  client: ChatClient;
  message: Message;
  onClose: () => void;
}

/** Zulip's web app asks again while its read receipts stay open. */
const RECEIPTS_REFRESH_MS = 60_000;

function Dialog({ title, onClose, children }: { title: string; onClose: () => void; children: preact.ComponentChildren }) {
  const closeRef = useRef<HTMLButtonElement>(null);
  useEffect(() => closeRef.current?.focus(), []);
  // Keys stay in the dialog: the message list under it would take arrows for moving between messages.
  const onKeyDown = (e: KeyboardEvent) => {
    e.stopPropagation();
    if (e.key === 'Escape') onClose();
  };
  const titleId = `dialog-title-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <div class="overlay" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div class="dialog message-dialog" role="dialog" aria-modal="true" aria-labelledby={titleId} onKeyDown={onKeyDown}>
        <header class="message-dialog-header">
          <h2 id={titleId}>{title}</h2>
          <button type="button" class="icon-button" ref={closeRef} aria-label="Close" onClick={onClose}>
            ×
          </button>
        </header>
        {children}
      </div>
    </div>
  );
}

const useAppState = (client: ChatClient) => client.store.get()!;

function ReadReceipts({ client, message, onClose }: MessageDialogProps) {
  const state = useAppState(client);
  const [ids, setIds] = useState<number[] | null>(null);
  const [error, run] = useAction();
  // Zulip's web app does not ask about Notification Bot's messages: everyone gets them already read.
  const fromNotificationBot = message.sender_email.startsWith('notification-bot@') && state.users.get(message.sender_id)?.is_system_bot === true;
  useEffect(() => {
    if (fromNotificationBot) return;
    const load = () => run(async () => setIds(await readReceipts(client.api, message.id)));
    void load();
    const timer = setInterval(load, RECEIPTS_REFRESH_MS);
    return () => clearInterval(timer);
  }, [message.id]);
  // Each reader as elsewhere in the client: their avatar (or initials) and their name.
  const readers = (ids ?? [])
    .map((id) => ({ user_id: id, full_name: userName(state, id), avatar_url: state.users.get(id)?.avatar_url ?? null }))
    .sort((a, b) => a.full_name.localeCompare(b.full_name));
  return (
    <Dialog title="Read receipts" onClose={onClose}>
      <ErrorLine error={error} />
      {fromNotificationBot ? (
        <p role="status">Read receipts are not available for Notification Bot messages.</p>
      ) : ids === null ? (
        !error && <p class="hint">Loading…</p>
      ) : (
        <p role="status">
          {ids.length === 0 ? 'No one has read this message yet.' : `This message has been read by ${ids.length} ${ids.length === 1 ? 'person' : 'people'}:`}
        </p>
      )}
      {readers.length > 0 && (
        <ul class="read-receipts" aria-label="Read by">
          {readers.map((reader) => (
            <li key={reader.user_id}>
              <Avatar user={reader} size="small" />
              <span class="read-receipt-name">{reader.full_name}</span>
            </li>
          ))}
        </ul>
      )}
    </Dialog>
  );
}

/** How a history entry names what happened (Zulip's "Posted by", "Edited by", "Moved by"). */
function whatHappened(s: Snapshot, first: boolean): string {
  if (first) return 'Posted by';
  const moved = s.prev_topic !== undefined || s.prev_stream !== undefined;
  if (moved && s.prev_rendered_content !== undefined) return 'Edited and moved by';
  return moved ? 'Moved by' : 'Edited by';
}

function EditHistory({ client, message, onClose }: MessageDialogProps) {
  const state = useAppState(client);
  const [history, setHistory] = useState<Snapshot[] | null>(null);
  const [error, run] = useAction();
  useEffect(() => void run(async () => setHistory(await messageHistory(client.api, message.id))), [message.id]);
  const movesOnly = state.messagePolicy.editHistory === 'moves_only';
  const twentyFourHour = state.settings.twenty_four_hour_time;
  // With "moves only", content edits are left out, as Zulip does.
  const shown = (history ?? [])
    .map((s, i) => ({ s, first: i === 0 }))
    .filter(({ s, first }) => !movesOnly || first || s.prev_topic !== undefined || s.prev_stream !== undefined);
  return (
    <Dialog title="Message edit history" onClose={onClose}>
      <ErrorLine error={error} />
      {history === null && !error && <p class="hint">Loading…</p>}
      <ol class="edit-history">
        {shown.map(({ s, first }) => (
          <li key={s.timestamp} class="edit-history-entry">
            <p class="edit-history-meta">
              <time dateTime={new Date(s.timestamp * 1000).toISOString()}>{formatFullDate(s.timestamp, twentyFourHour)}</time>
              {' · '}
              {whatHappened(s, first)} {s.user_id === null ? 'someone' : userName(state, s.user_id)}
            </p>
            {s.prev_stream !== undefined && s.stream !== undefined && (
              <p class="edit-history-move">
                Channel: <del>#{channelName(state, s.prev_stream)}</del> → <ins>#{channelName(state, s.stream)}</ins>
              </p>
            )}
            {s.prev_topic !== undefined && (
              <p class="edit-history-move">
                Topic: <del>{s.prev_topic}</del> → <ins>{s.topic}</ins>
              </p>
            )}
            {(first || (!movesOnly && s.content_html_diff !== undefined)) && (
              <div
                class="message-content rendered"
                dangerouslySetInnerHTML={{ __html: prepareContent(first ? s.rendered_content : s.content_html_diff!, state.me.userId) }}
              />
            )}
          </li>
        ))}
      </ol>
    </Dialog>
  );
}

function ReportForm({ client, message, onClose }: MessageDialogProps) {
  const [reason, setReason] = useState<ReportType>('spam');
  const [explanation, setExplanation] = useState('');
  const [sent, setSent] = useState(false);
  const [error, run] = useAction();
  const id = (name: string) => `report-${name}-${message.id}`;
  async function submit(e: Event) {
    e.preventDefault();
    if (await run(() => reportMessage(client.api, message.id, reason, explanation.trim()))) setSent(true);
  }
  return (
    <Dialog title="Report message" onClose={onClose}>
      {sent ? (
        <p role="status">Your report has been sent to the moderators.</p>
      ) : (
        <form class="report-form" aria-label="Report message" onSubmit={submit}>
          <p class="hint">Reporting a message sent by {message.sender_full_name}. The organization's moderators will see the report with the message.</p>
          <label for={id('reason')}>Reason</label>
          <select id={id('reason')} value={reason} onChange={(e) => setReason(e.currentTarget.value as ReportType)}>
            {(Object.keys(REPORT_REASONS) as ReportType[]).map((t) => (
              <option key={t} value={t}>
                {REPORT_REASONS[t]}
              </option>
            ))}
          </select>
          <label for={id('explanation')}>{reason === 'other' ? 'Explanation' : 'Explanation (optional)'}</label>
          <textarea
            id={id('explanation')}
            rows={3}
            maxLength={1000}
            required={reason === 'other'}
            value={explanation}
            onInput={(e) => setExplanation(e.currentTarget.value)}
          />
          <ErrorLine error={error} />
          <div class="actions">
            <button type="submit" class="button button-small" disabled={reason === 'other' && !explanation.trim()}>
              Submit
            </button>
            <button type="button" class="button button-small button-secondary" onClick={onClose}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}

const DIALOGS = { receipts: ReadReceipts, history: EditHistory, report: ReportForm } as const;

export function MessageDialog(props: MessageDialogProps) {
  const Shown = DIALOGS[props.kind];
  return <Shown {...props} />;
}
