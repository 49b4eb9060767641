// The narrow's messages: grouped by conversation and day, older ones loaded when scrolled near
// the top, unread ones marked read once seen, the position kept while messages come and go.
import { Component, Fragment, type RefObject } from 'preact';
import { describeError } from '../api.ts';
import type { ChatClient } from '../client.ts';
import { toggleSpoiler } from '../content.ts';
import { channelName, dayOf, dmName, formatDay, recipientKey } from '../format.ts';
import { messageDmKey } from '../narrow.ts';
import type { AppState } from '../state.ts';
import type { Message } from '../types.ts';
import { MessageRow } from './MessageRow.tsx';

interface Props {
  client: ChatClient;
  state: AppState;
  listRef: RefObject<HTMLDivElement | null>;
}

/** Where the reader was before an update: at the bottom, or looking at a message at some height. */
interface Position {
  atBottom: boolean;
  anchorId: string | null;
  anchorTop: number;
}

/** Keys that move between messages, and which way. */
const MOVES: Record<string, 1 | -1> = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 };

/** Older messages are fetched when the reader comes this close to the top (px). */
const LOAD_MARGIN = 600;

function RecipientHeader({ client, state, message }: { client: ChatClient; state: AppState; message: Message }) {
  if (message.type === 'stream') {
    const streamId = message.stream_id!;
    const color = state.subs.get(streamId)?.color;
    return (
      <div class="recipient-header" style={color ? { '--channel-color': color } : undefined}>
        <a href={client.hashOf({ kind: 'channel', streamId })} class="recipient-channel">
          #{channelName(state, streamId)}
        </a>
        <span aria-hidden="true"> › </span>
        <a href={client.hashOf({ kind: 'topic', streamId, topic: message.subject })} class="recipient-topic">
          {message.subject}
        </a>
      </div>
    );
  }
  const key = messageDmKey(message, state.me.userId);
  return (
    <div class="recipient-header recipient-dm">
      <a href={client.hashOf({ kind: 'dm', userIds: key.split(',').map(Number) })}>Direct messages with {dmName(state, key)}</a>
    </div>
  );
}

export class MessageList extends Component<Props> {
  private frame = 0;

  private get list(): HTMLDivElement | null {
    return this.props.listRef.current;
  }

  componentDidMount(): void {
    window.addEventListener('focus', this.markVisibleRead);
    document.addEventListener('visibilitychange', this.markVisibleRead);
    if (!this.props.state.view.loading) this.scrollToStart();
  }

  componentWillUnmount(): void {
    window.removeEventListener('focus', this.markVisibleRead);
    document.removeEventListener('visibilitychange', this.markVisibleRead);
    cancelAnimationFrame(this.frame);
  }

  getSnapshotBeforeUpdate(): Position {
    const el = this.list;
    if (!el) return { atBottom: true, anchorId: null, anchorTop: 0 };
    const top = el.getBoundingClientRect().top;
    const anchor = [...el.querySelectorAll<HTMLElement>('.message')].find((m) => m.getBoundingClientRect().bottom > top);
    return {
      atBottom: el.scrollHeight - el.scrollTop - el.clientHeight < 40,
      anchorId: anchor?.dataset.messageId ?? null,
      anchorTop: anchor?.getBoundingClientRect().top ?? 0,
    };
  }

  componentDidUpdate(prev: Props, _state: unknown, before: Position): void {
    const el = this.list;
    const view = this.props.state.view;
    const prevView = prev.state.view;
    if (!el || view === prevView) return;
    if (prevView.loading === 'initial' && view.loading !== 'initial') this.scrollToStart();
    else if (view.messages !== prevView.messages) {
      const grewAtEnd = view.messages.at(-1)?.id !== prevView.messages.at(-1)?.id;
      const anchor = before.anchorId ? el.querySelector<HTMLElement>(`.message[data-message-id="${before.anchorId}"]`) : null;
      if (before.atBottom && grewAtEnd && view.foundNewest) el.scrollTop = el.scrollHeight;
      else if (anchor) el.scrollTop += anchor.getBoundingClientRect().top - before.anchorTop;
    }
    this.afterLayout();
  }

  /** After loading: the requested message, else the first unread one, else the newest. */
  private scrollToStart(): void {
    const el = this.list;
    if (!el) return;
    const { view } = this.props.state;
    const target = view.near ?? view.messages.find((m) => !m.flags.includes('read'))?.id;
    const node = target !== undefined ? el.querySelector<HTMLElement>(`.message[data-message-id="${target}"]`) : null;
    if (node) el.scrollTop = Math.max(0, node.offsetTop - el.clientHeight / 3);
    else el.scrollTop = el.scrollHeight;
    this.afterLayout();
  }

  /** Reads what is on screen, and fetches more when the list does not fill it or the reader is near an end. */
  private afterLayout(): void {
    const el = this.list;
    const { client, state } = this.props;
    const { view } = state;
    if (!el || view.loading || view.error) return;
    this.markVisibleRead();
    if (!view.foundOldest && el.scrollTop < LOAD_MARGIN) void client.loadOlder();
    else if (!view.foundNewest && el.scrollHeight - el.scrollTop - el.clientHeight < LOAD_MARGIN) void client.loadNewer();
  }

  private onScroll = (): void => {
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => this.afterLayout());
  };

  private markVisibleRead = (): void => {
    const el = this.list;
    const { view } = this.props.state;
    if (!el || document.visibilityState !== 'visible' || view.loading === 'initial' || view.narrow.kind === 'search' || view.readingPaused) return;
    const box = el.getBoundingClientRect();
    const seen: number[] = [];
    for (const node of el.querySelectorAll<HTMLElement>('.message.unread')) {
      const r = node.getBoundingClientRect();
      const bottomShown = r.bottom <= box.bottom + 1 && r.bottom > box.top;
      const fillsView = r.top <= box.top && r.bottom >= box.bottom;
      if (bottomShown || fillsView) seen.push(Number(node.dataset.messageId));
    }
    if (seen.length) this.props.client.markRead(seen);
  };

  /** Spoilers open and close; links to uploads go through a temporary URL (they need credentials). */
  private onClick = (e: MouseEvent): void => {
    const target = e.target as Element;
    if (target.closest('.message-content') && toggleSpoiler(target)) return;
    const link = target.closest<HTMLAnchorElement>('.message-content a[href^="/user_uploads/"]');
    if (!link) return;
    e.preventDefault();
    this.props.client.openUpload(link.getAttribute('href')!).catch((err) => alert(describeError(err)));
  };

  private onKeyDown = (e: KeyboardEvent): void => {
    const target = e.target as HTMLElement;
    if ((e.key === 'Enter' || e.key === ' ') && target.classList.contains('spoiler-header')) {
      e.preventDefault();
      toggleSpoiler(target);
    } else if (e.key in MOVES && !e.ctrlKey && !e.metaKey && !e.altKey && !['INPUT', 'TEXTAREA'].includes(target.tagName)) {
      e.preventDefault();
      this.moveFocus(target, MOVES[e.key]!);
    }
  };

  /** j and k: the next or previous message (from the list itself: the first or last one on screen). */
  private moveFocus(from: HTMLElement, step: 1 | -1): void {
    const el = this.list;
    if (!el) return;
    const messages = [...el.querySelectorAll<HTMLElement>('.message')];
    const current = from.closest<HTMLElement>('.message');
    let next: HTMLElement | undefined;
    if (current) next = messages[messages.indexOf(current) + step];
    else {
      const box = el.getBoundingClientRect();
      const onScreen = messages.filter((m) => m.getBoundingClientRect().bottom > box.top && m.getBoundingClientRect().top < box.bottom);
      next = step === 1 ? onScreen[0] : onScreen.at(-1);
    }
    if (!next) return;
    next.focus({ preventScroll: true });
    next.scrollIntoView({ block: 'nearest' });
  }

  render() {
    const { client, state, listRef } = this.props;
    const { view } = state;
    const myId = state.me.userId;
    const now = Date.now() / 1000;
    const canEdit = (m: Message) => m.sender_id === myId && state.allowEditing && (!state.editLimitSeconds || now - m.timestamp < state.editLimitSeconds);
    return (
      <div
        class="message-list"
        id="messages"
        ref={listRef}
        tabIndex={0}
        role="log"
        aria-label="Messages"
        aria-busy={view.loading !== null}
        onScroll={this.onScroll}
        onClick={this.onClick}
        onKeyDown={this.onKeyDown}
      >
        {view.loading === 'older' && (
          <p class="list-note" role="status">
            Loading older messages…
          </p>
        )}
        {view.foundOldest && view.messages.length > 0 && <p class="list-note">This is the beginning of the conversation.</p>}
        {view.messages.map((m, i) => {
          const prev = view.messages[i - 1];
          const newDay = !prev || dayOf(prev.timestamp) !== dayOf(m.timestamp);
          const newRecipient = !prev || newDay || recipientKey(prev) !== recipientKey(m);
          const continued = !newRecipient && prev!.sender_id === m.sender_id && m.timestamp - prev!.timestamp < 300;
          return (
            <Fragment key={m.id}>
              {newDay && (
                <div class="date-divider">
                  <span>{formatDay(m.timestamp)}</span>
                </div>
              )}
              {newRecipient && <RecipientHeader client={client} state={state} message={m} />}
              <MessageRow
                client={client}
                message={m}
                continued={continued}
                mine={m.sender_id === myId}
                canEdit={canEdit(m)}
                near={view.near === m.id}
                users={state.users}
                realmEmoji={state.realmEmoji}
                myId={myId}
                twentyFourHour={state.settings.twenty_four_hour_time}
                policy={state.messagePolicy}
              />
            </Fragment>
          );
        })}
        {view.loading === 'initial' && (
          <p class="list-note" role="status">
            Loading messages…
          </p>
        )}
        {view.loading === 'newer' && (
          <p class="list-note" role="status">
            Loading newer messages…
          </p>
        )}
        {!view.loading && !view.error && view.messages.length === 0 && (
          <p class="list-note empty">{view.narrow.kind === 'search' ? 'No messages match your search.' : 'No messages here yet. Say hello!'}</p>
        )}
        {view.error && (
          <div class="alert alert-error list-error" role="alert">
            Could not load messages: {view.error}{' '}
            <button type="button" class="button button-small" onClick={() => client.reloadView()}>
              Try again
            </button>
          </div>
        )}
      </div>
    );
  }
}
