// "Ann is typing…" for the conversation on screen.
import { userName } from '../format.ts';
import { dmKey } from '../narrow.ts';
import { placeKey, type AppState } from '../state.ts';

export function TypingNotice({ state }: { state: AppState }) {
  const { narrow } = state.view;
  const place =
    narrow.kind === 'topic'
      ? placeKey({ streamId: narrow.streamId, topic: narrow.topic })
      : narrow.kind === 'dm'
        ? placeKey({ dm: dmKey(narrow.userIds, state.me.userId) })
        : null;
  const now = Date.now();
  const who = place ? [...(state.typing.get(place) ?? [])].filter(([, until]) => until > now).map(([id]) => userName(state, id)) : [];
  const text =
    who.length === 0 ? '' : who.length === 1 ? `${who[0]} is typing…` : who.length <= 3 ? `${who.join(', ')} are typing…` : 'Several people are typing…';
  return (
    <p class="typing-notice" aria-live="polite">
      {text}
    </p>
  );
}
