// The search box: words and operators (search.ts), with suggestions that complete the word being
// typed (arrows and Enter, or a click). A query that names a view exactly opens that view.
import type { RefObject } from 'preact';
import { useLayoutEffect, useState } from 'preact/hooks';
import type { ChatClient } from '../client.ts';
import { suggest, viewOfQuery, type SuggestionSource } from '../search.ts';
import type { AppState } from '../state.ts';

function suggestionSource(state: AppState): SuggestionSource {
  const subs = [...state.subs.values()];
  return {
    channels: subs.map((s) => s.name).sort((a, b) => a.localeCompare(b)),
    people: [...state.users.values()].filter((u) => u.is_active).map((u) => ({ name: u.full_name, email: u.email })),
    topics: (channel) => {
      const sub = subs.find((s) => s.name.toLowerCase() === channel.toLowerCase());
      return (sub && state.topics.get(sub.stream_id)?.map((t) => t.name)) ?? [];
    },
  };
}

export function SearchBox({ client, state, inputRef }: { client: ChatClient; state: AppState; inputRef: RefObject<HTMLInputElement | null> }) {
  const { narrow } = state.view;
  const [value, setValue] = useState('');
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  // Before the new view is painted, so what is typed once it shows is never wiped by this.
  useLayoutEffect(() => setValue(narrow.kind === 'search' ? narrow.query : ''), [narrow]);
  const suggestions = open ? suggest(value, suggestionSource(state)) : [];

  function go(query: string) {
    setOpen(false);
    const directory = {
      channelId: (name: string) => [...state.subs.values()].find((s) => s.name.toLowerCase() === name.toLowerCase())?.stream_id,
      userId: (email: string) => [...state.users.values()].find((u) => u.email.toLowerCase() === email.toLowerCase())?.user_id,
    };
    location.hash = client.hashOf(viewOfQuery(query, directory) ?? { kind: 'search', query: query.trim() });
  }

  function choose(suggestion: string) {
    setValue(suggestion);
    setActive(-1);
    // An operator still needs its operand: the box stays open for it.
    if (suggestion.endsWith(':')) inputRef.current?.focus();
    else go(suggestion);
  }

  function onKeyDown(e: KeyboardEvent) {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      setOpen(true);
      const step = e.key === 'ArrowDown' ? 1 : -1;
      setActive((i) => (suggestions.length ? (i + step + suggestions.length) % suggestions.length : -1));
    } else if (e.key === 'Enter' && active >= 0 && suggestions[active]) {
      e.preventDefault();
      choose(suggestions[active]!);
    } else if (e.key === 'Escape') {
      setOpen(false);
    }
  }

  return (
    <form
      class="search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        go(value);
      }}
    >
      <label for="search-input" class="visually-hidden">
        Search messages
      </label>
      <input
        id="search-input"
        ref={inputRef}
        type="search"
        placeholder="Search ( / )"
        aria-keyshortcuts="/"
        autocomplete="off"
        aria-autocomplete="list"
        aria-expanded={suggestions.length > 0}
        aria-controls="search-suggestions"
        aria-activedescendant={active >= 0 && suggestions[active] ? `search-suggestion-${active}` : undefined}
        value={value}
        onInput={(e) => {
          setValue(e.currentTarget.value);
          setOpen(true);
          setActive(-1);
        }}
        onKeyDown={onKeyDown}
        onBlur={() => setOpen(false)}
      />
      {suggestions.length > 0 && (
        <ul id="search-suggestions" class="search-suggestions" role="listbox" aria-label="Suggestions">
          {suggestions.map((s, i) => (
            // mousedown, not click: the input keeps its focus.
            <li
              key={s}
              id={`search-suggestion-${i}`}
              role="option"
              aria-selected={i === active}
              onMouseDown={(e) => {
                e.preventDefault();
                choose(s);
              }}
            >
              {s}
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}
