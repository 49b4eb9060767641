// Two views of conversations rather than messages: the Inbox (every conversation with unread
// messages, direct ones first, then by channel) and Recent conversations (newest first, with who
// took part and when), each row a link to the conversation.
import type { ChatClient } from '../client.ts';
import { channelName, dmName, formatFullDate, formatTime, recipientKey } from '../format.ts';
import { messageDmKey } from '../narrow.ts';
import { isMessageMuted, isTopicMuted, topicKey, unreadCounts, type AppState } from '../state.ts';
import type { Message, Narrow } from '../types.ts';

function Count({ count }: { count: number | undefined }) {
  return count ? (
    <span class="unread-count" aria-label={`${count} unread`} data-unread={count}>
      {count}
    </span>
  ) : null;
}

interface InboxTopic {
  name: string;
  count: number;
  newest: number;
}

export function Inbox({ client, state }: { client: ChatClient; state: AppState }) {
  const dms = new Map<string, { count: number; newest: number }>();
  const channels = new Map<number, Map<string, InboxTopic>>();
  for (const [id, place] of state.unread) {
    if (place.kind === 'dm') {
      const row = dms.get(place.key) ?? { count: 0, newest: 0 };
      dms.set(place.key, { count: row.count + 1, newest: Math.max(row.newest, id) });
      continue;
    }
    if (isTopicMuted(state, place.streamId, place.topic)) continue;
    const topics = channels.get(place.streamId) ?? new Map<string, InboxTopic>();
    const key = topicKey(place.streamId, place.topic);
    const row = topics.get(key) ?? { name: place.topic, count: 0, newest: 0 };
    topics.set(key, { ...row, count: row.count + 1, newest: Math.max(row.newest, id) });
    channels.set(place.streamId, topics);
  }
  const link = (narrow: Narrow) => client.hashOf(narrow);
  const byNewest = <T extends { newest: number }>(a: T, b: T) => b.newest - a.newest;
  if (dms.size === 0 && channels.size === 0)
    return (
      <div class="conversations">
        <p class="list-note empty">No unread messages. You're all caught up!</p>
      </div>
    );
  return (
    <div class="conversations inbox" id="messages" tabIndex={0}>
      {dms.size > 0 && (
        <section aria-label="Direct messages">
          <h2>Direct messages</h2>
          <ul>
            {[...dms]
              .sort((a, b) => byNewest(a[1], b[1]))
              .map(([key, row]) => (
                <li key={key}>
                  <a href={link({ kind: 'dm', userIds: key.split(',').map(Number) })}>{dmName(state, key)}</a>
                  <Count count={row.count} />
                </li>
              ))}
          </ul>
        </section>
      )}
      {[...channels]
        .sort((a, b) => channelName(state, a[0]).localeCompare(channelName(state, b[0])))
        .map(([streamId, topics]) => (
          <section key={streamId} aria-label={`#${channelName(state, streamId)}`} style={{ '--channel-color': state.subs.get(streamId)?.color }}>
            <h2>
              <a href={link({ kind: 'channel', streamId })}>#{channelName(state, streamId)}</a>
              <Count count={[...topics.values()].reduce((n, t) => n + t.count, 0)} />
            </h2>
            <ul>
              {[...topics.values()].sort(byNewest).map((t) => (
                <li key={t.name}>
                  <a href={link({ kind: 'topic', streamId, topic: t.name })}>{t.name}</a>
                  <Count count={t.count} />
                </li>
              ))}
            </ul>
          </section>
        ))}
    </div>
  );
}

export function RecentConversations({ client, state }: { client: ChatClient; state: AppState }) {
  const { view } = state;
  const myId = state.me.userId;
  const counts = unreadCounts(state);
  // Newest first: each conversation once, with its newest message and who wrote in it.
  const rows = new Map<string, { newest: Message; senders: Set<number> }>();
  for (let i = view.messages.length - 1; i >= 0; i--) {
    const m = view.messages[i]!;
    if (m.localId || isMessageMuted(state, m)) continue;
    const key = recipientKey(m);
    const row = rows.get(key) ?? { newest: m, senders: new Set<number>() };
    row.senders.add(m.sender_id);
    rows.set(key, row);
  }
  if (view.loading === 'initial')
    return (
      <div class="conversations">
        <p class="list-note" role="status">
          Loading conversations…
        </p>
      </div>
    );
  if (view.error) {
    return (
      <div class="conversations alert alert-error" role="alert">
        Could not load conversations: {view.error}{' '}
        <button type="button" class="button button-small" onClick={() => client.reloadView()}>
          Try again
        </button>
      </div>
    );
  }
  return (
    <div class="conversations recent" id="messages" tabIndex={0}>
      {rows.size === 0 && <p class="list-note empty">No conversations yet.</p>}
      <table>
        <thead>
          <tr>
            <th scope="col">Where</th>
            <th scope="col">Conversation</th>
            <th scope="col">Unread</th>
            <th scope="col">Participants</th>
            <th scope="col">Last message</th>
          </tr>
        </thead>
        <tbody>
          {[...rows.values()].map(({ newest: m, senders }) => {
            const dm = m.type === 'private' ? messageDmKey(m, myId) : null;
            const narrow: Narrow =
              dm !== null ? { kind: 'dm', userIds: dm.split(',').map(Number) } : { kind: 'topic', streamId: m.stream_id!, topic: m.subject };
            return (
              <tr key={recipientKey(m)} data-conversation={dm ?? `${m.stream_id}:${m.subject}`}>
                <td>
                  {dm !== null ? (
                    'Direct message'
                  ) : (
                    <a href={client.hashOf({ kind: 'channel', streamId: m.stream_id! })}>#{channelName(state, m.stream_id!)}</a>
                  )}
                </td>
                <td>
                  <a href={client.hashOf(narrow)} class="conversation-link">
                    {dm !== null ? dmName(state, dm) : m.subject}
                  </a>
                </td>
                <td>
                  <Count count={dm !== null ? counts.dms.get(dm) : counts.topics.get(topicKey(m.stream_id!, m.subject))} />
                </td>
                <td>{[...senders].map((id) => state.users.get(id)?.full_name ?? m.sender_full_name).join(', ')}</td>
                <td>
                  <time dateTime={new Date(m.timestamp * 1000).toISOString()} title={formatFullDate(m.timestamp, state.settings.twenty_four_hour_time)}>
                    {formatTime(m.timestamp, state.settings.twenty_four_hour_time)}
                  </time>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
