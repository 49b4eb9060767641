// One message: sender, time, the server's HTML, "EDITED" or "MOVED", reactions, and the actions on
// it (react, star, quote and reply, mark as unread from here, a reminder, edit history, read
// receipts, a report, and for one's own messages edit and delete).
import { Component, createRef } from 'preact';
import { describeError } from '../api.ts';
import type { ChatClient } from '../client.ts';
import { formatFullDate, formatTime } from '../format.ts';
import { userHash } from '../organization.ts';
import { showUploadedImages } from '../uploads.ts';
import type { MessagePolicy } from '../state.ts';
import type { Message, Reaction, RealmEmoji, User } from '../types.ts';
import { Avatar } from './Avatar.tsx';
import { Emoji } from './Emoji.tsx';
import { TrashIcon } from './Icons.tsx';
import { LazyEmojiPicker } from './LazyEmojiPicker.tsx';
import { LazyMessageDialog } from './LazyMessageDialog.tsx';
import type { MessageDialogKind } from './MessageDialogs.tsx';
import { ReminderForm, reminderNotice } from './ReminderForm.tsx';

interface Props {
  client: ChatClient;
  message: Message;
  /** Same sender as the message above, shortly after: no name and avatar again. */
  continued: boolean;
  mine: boolean;
  canEdit: boolean;
  /** The message the address asked for. */
  near: boolean;
  users: Map<number, User>;
  realmEmoji: Map<string, RealmEmoji>;
  myId: number;
  twentyFourHour: boolean;
  /** What the organization lets the menu offer. */
  policy: MessagePolicy;
}

interface State {
  editing: boolean;
  draft: string | null;
  picking: boolean;
  /** The menu of further actions is open. */
  more: boolean;
  /** The reminder form is open. */
  reminding: boolean;
  /** The dialog open over the page, if any. */
  dialog: MessageDialogKind | null;
  /** What was just done, said under the message ("Reminder set for ..."). */
  notice: string | null;
  error: string | null;
  busy: boolean;
}

function ReactionEmoji({ reaction, realmEmoji }: { reaction: Reaction; realmEmoji: Map<string, RealmEmoji> }) {
  if (reaction.reaction_type === 'realm_emoji') {
    const emoji = realmEmoji.get(reaction.emoji_name);
    if (emoji) return <Emoji name={reaction.emoji_name} url={emoji.source_url} />;
  }
  if (reaction.reaction_type === 'unicode_emoji') return <Emoji name={reaction.emoji_name} code={reaction.emoji_code} />;
  return <span class="emoji">{`:${reaction.emoji_name}:`}</span>;
}

/** Reactions grouped by emoji, in the order they first appeared. */
function groupReactions(reactions: Reaction[]): { first: Reaction; userIds: number[] }[] {
  const groups = new Map<string, { first: Reaction; userIds: number[] }>();
  for (const r of reactions) {
    const key = `${r.reaction_type}:${r.emoji_code}`;
    const group = groups.get(key) ?? { first: r, userIds: [] };
    group.userIds.push(r.user_id);
    groups.set(key, group);
  }
  return [...groups.values()];
}

export class MessageRow extends Component<Props, State> {
  private readonly article = createRef<HTMLElement>();
  state: State = { editing: false, draft: null, picking: false, more: false, reminding: false, dialog: null, notice: null, error: null, busy: false };

  shouldComponentUpdate(next: Props, nextState: State): boolean {
    const p = this.props;
    return (
      nextState !== this.state ||
      next.message !== p.message ||
      next.continued !== p.continued ||
      next.canEdit !== p.canEdit ||
      next.near !== p.near ||
      next.users !== p.users ||
      next.realmEmoji !== p.realmEmoji ||
      next.twentyFourHour !== p.twentyFourHour ||
      next.policy !== p.policy
    );
  }

  componentDidMount(): void {
    showUploadedImages(this.article.current, this.props.client.api);
  }

  componentDidUpdate(_prev: Props, prevState: State): void {
    showUploadedImages(this.article.current, this.props.client.api);
    // The raw content has arrived: editing starts in the box.
    if (prevState.draft === null && this.state.draft !== null) document.getElementById(`edit-${this.props.message.id}`)?.focus();
  }

  private async run(action: () => Promise<void>, after: Partial<State> = {}): Promise<void> {
    this.setState({ busy: true, error: null });
    try {
      await action();
      this.setState({ busy: false, ...after });
    } catch (err) {
      this.setState({ busy: false, error: describeError(err) });
    }
  }

  private startEditing = (): void => {
    this.setState({ editing: true, draft: null, error: null, picking: false });
    this.props.client.rawContent(this.props.message.id).then(
      (draft) => this.setState({ draft }),
      (err) => this.setState({ editing: false, error: describeError(err) }),
    );
  };

  private saveEdit = (): void => {
    const { draft } = this.state;
    if (draft === null || !draft.trim()) return;
    void this.run(() => this.props.client.edit(this.props.message.id, draft), { editing: false, draft: null });
  };

  private remove = (): void => {
    if (!confirm('Delete this message?')) return;
    void this.run(() => this.props.client.remove(this.props.message.id));
  };

  private react = (name: string): void => {
    this.setState({ picking: false });
    void this.run(() => this.props.client.toggleReaction(this.props.message, name));
  };

  private toggleStar = (): void => {
    void this.run(() => this.props.client.setStarred(this.props.message.id, !this.props.message.flags.includes('starred')));
  };

  private quote = (): void => {
    this.setState({ more: false });
    void this.run(() => this.props.client.reply(this.props.message, true));
  };

  private markUnread = (): void => {
    this.setState({ more: false });
    void this.run(() => this.props.client.markUnreadFrom(this.props.message.id));
  };

  private remindDone = (at: Date | null): void => {
    this.setState({ reminding: false, notice: at && reminderNotice(at, this.props.twentyFourHour) });
  };

  private open = (dialog: MessageDialogKind): void => this.setState({ more: false, dialog });

  /** Zulip opens the history from "EDITED"/"MOVED" unless the organization hides it (moves only: for moved messages). */
  private historyVisible(): boolean {
    const { message: m, policy } = this.props;
    if (m.last_edit_timestamp === undefined && m.last_moved_timestamp === undefined) return false;
    return policy.editHistory === 'all' || (policy.editHistory === 'moves_only' && m.last_moved_timestamp !== undefined);
  }

  private onEditKey = (e: KeyboardEvent): void => {
    if (e.key === 'Escape') this.setState({ editing: false, draft: null });
    else if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      this.saveEdit();
    }
  };

  private names(ids: number[]): string {
    return ids.map((id) => (id === this.props.myId ? 'You' : (this.props.users.get(id)?.full_name ?? `User ${id}`))).join(', ');
  }

  render() {
    const { message: m, continued, mine, canEdit, near, users, realmEmoji, myId, twentyFourHour, policy } = this.props;
    const { editing, draft, picking, more, reminding, dialog, notice, error, busy } = this.state;
    const fullDate = (seconds: number) => formatFullDate(seconds, twentyFourHour);
    // Zulip says "EDITED" once the content changed, else "MOVED" once the message changed place.
    const changed =
      m.last_edit_timestamp !== undefined
        ? { label: 'EDITED', title: `Last edited ${fullDate(m.last_edit_timestamp)}` }
        : m.last_moved_timestamp !== undefined
          ? { label: 'MOVED', title: `Last moved ${fullDate(m.last_moved_timestamp)}` }
          : null;
    const historyVisible = this.historyVisible();
    const unread = !m.flags.includes('read');
    const starred = m.flags.includes('starred');
    const sender = users.get(m.sender_id) ?? { user_id: m.sender_id, full_name: m.sender_full_name, avatar_url: m.avatar_url };
    const editId = `edit-${m.id}`;
    const mentioned = m.flags.some((f) => f === 'mentioned' || f.endsWith('wildcard_mentioned'));
    const classes = [
      'message',
      continued && 'continued',
      unread && 'unread',
      mine && 'mine',
      mentioned && 'mentioned',
      starred && 'starred',
      m.localId && 'local-echo',
      near && 'near',
      m.is_me_message && 'me-message',
    ]
      .filter(Boolean)
      .join(' ');
    return (
      <article ref={this.article} class={classes} data-message-id={m.id} tabIndex={-1} aria-label={`${m.sender_full_name}, ${fullDate(m.timestamp)}`}>
        <div class="message-gutter">{!continued && <Avatar user={sender} />}</div>
        <div class="message-body">
          {!continued && (
            <div class="message-meta">
              <a class="sender" href={userHash(m.sender_id)} title={`${m.sender_full_name}: profile`}>
                {m.sender_full_name}
              </a>
              <time dateTime={new Date(m.timestamp * 1000).toISOString()} title={fullDate(m.timestamp)}>
                {formatTime(m.timestamp, twentyFourHour)}
              </time>
            </div>
          )}
          {starred && (
            <span class="star-mark" title="Starred" aria-label="Starred">
              ★
            </span>
          )}
          {editing ? (
            <div class="edit-box">
              <label for={editId} class="visually-hidden">
                Edit message
              </label>
              <textarea
                id={editId}
                value={draft ?? ''}
                disabled={draft === null || busy}
                onInput={(e) => this.setState({ draft: e.currentTarget.value })}
                onKeyDown={this.onEditKey}
                rows={3}
              />
              <div class="actions">
                <button type="button" class="button button-small" onClick={this.saveEdit} disabled={busy || !draft?.trim()}>
                  Save
                </button>
                <button type="button" class="button button-small button-secondary" onClick={() => this.setState({ editing: false, draft: null })}>
                  Cancel
                </button>
                <span class="hint">Ctrl+Enter saves, Esc cancels</span>
              </div>
            </div>
          ) : (
            <div class="message-content rendered" dangerouslySetInnerHTML={{ __html: m.content }} />
          )}
          {changed &&
            !editing &&
            (historyVisible ? (
              <button
                type="button"
                class="edited"
                title={changed.title}
                aria-label={`${changed.label}: view edit history`}
                onClick={() => this.open('history')}
              >
                {changed.label}
              </button>
            ) : (
              <span class="edited" title={changed.title}>
                {changed.label}
              </span>
            ))}
          {m.reactions.length > 0 && (
            <div class="reactions" role="group" aria-label="Reactions">
              {groupReactions(m.reactions).map(({ first, userIds }) => (
                <button
                  type="button"
                  key={`${first.reaction_type}:${first.emoji_code}`}
                  class="reaction"
                  aria-pressed={userIds.includes(myId)}
                  title={`${this.names(userIds)} reacted with :${first.emoji_name}:`}
                  aria-label={`${first.emoji_name}: ${userIds.length}`}
                  onClick={() => this.react(first.emoji_name)}
                >
                  <ReactionEmoji reaction={first} realmEmoji={realmEmoji} /> {userIds.length}
                </button>
              ))}
            </div>
          )}
          {picking && <LazyEmojiPicker label="Add a reaction" realmEmoji={realmEmoji} onPick={this.react} onClose={() => this.setState({ picking: false })} />}
          {more && (
            <div class="message-menu" role="group" aria-label="More actions">
              <button type="button" class="button button-small button-secondary" onClick={this.quote}>
                Quote and reply
              </button>
              <button type="button" class="button button-small button-secondary" onClick={this.markUnread}>
                Mark as unread from here
              </button>
              <button type="button" class="button button-small button-secondary" onClick={() => this.setState({ more: false, reminding: true, notice: null })}>
                Remind me about this
              </button>
              {historyVisible && (
                <button type="button" class="button button-small button-secondary" onClick={() => this.open('history')}>
                  View edit history
                </button>
              )}
              {policy.readReceipts && (
                <button type="button" class="button button-small button-secondary" onClick={() => this.open('receipts')}>
                  View read receipts
                </button>
              )}
              {policy.reporting && (
                <button type="button" class="button button-small button-secondary" onClick={() => this.open('report')}>
                  Report message
                </button>
              )}
            </div>
          )}
          {dialog && <LazyMessageDialog kind={dialog} client={this.props.client} message={m} onClose={() => this.setState({ dialog: null })} />}
          {reminding && <ReminderForm client={this.props.client} messageId={m.id} onDone={this.remindDone} />}
          {notice && (
            <p class="hint" role="status">
              {notice}
            </p>
          )}
          {error && (
            <p class="alert alert-error" role="alert">
              {error}
            </p>
          )}
        </div>
        {!editing && !m.localId && (
          <div class="message-actions">
            <time class="message-time-small" aria-hidden="true">
              {continued ? formatTime(m.timestamp, twentyFourHour) : ''}
            </time>
            <button
              type="button"
              class="icon-button"
              aria-label="Add reaction"
              aria-expanded={picking}
              title="Add reaction"
              onClick={() => this.setState({ picking: !picking })}
            >
              ☺
            </button>
            <button
              type="button"
              class="icon-button"
              aria-label={starred ? 'Unstar message' : 'Star message'}
              aria-pressed={starred}
              title={starred ? 'Unstar' : 'Star'}
              onClick={this.toggleStar}
            >
              {starred ? '★' : '☆'}
            </button>
            {canEdit && (
              <button type="button" class="icon-button" aria-label="Edit message" title="Edit" onClick={this.startEditing}>
                ✎
              </button>
            )}
            {mine && (
              <button type="button" class="icon-button" aria-label="Delete message" title="Delete" onClick={this.remove}>
                <TrashIcon />
              </button>
            )}
            <button
              type="button"
              class="icon-button"
              aria-label="More actions"
              aria-expanded={more}
              title="More actions"
              onClick={() => this.setState({ more: !more, picking: false })}
            >
              ⋮
            </button>
          </div>
        )}
      </article>
    );
  }
}
