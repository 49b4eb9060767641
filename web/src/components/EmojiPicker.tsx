// The emoji picker (loaded the first time one opens): search by name, or browse Zulip's categories
// (Popular first, the organization's custom emoji last). Images load as they scroll into sight.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { customEmoji, emojiImageUrl } from '../emoji.ts';
import { categories } from '../emoji/catalog.ts';
import { searchEmoji } from '../typeahead.ts';
import type { RealmEmoji, EmojiEntry } from '../types.ts';

export interface EmojiPickerProps {
  /** The dialog's name ("Add a reaction", "Insert an emoji"). */
  label: string;
  realmEmoji: Map<string, RealmEmoji>;
  onPick(name: string): void;
  onClose(): void;
}

/** Zulip's popular emoji, offered first. */
const POPULAR = ['+1', 'tada', 'slight_smile', 'heart', 'working_on_it', 'octopus'];
const MAX_RESULTS = 80;

const byName = new Map(categories.flatMap((c) => c.emoji.flatMap((e) => e.names.map((n) => [n, e] as const))));

function Cell({ entry, name, onPick }: { entry: EmojiEntry; name: string; onPick(name: string): void }) {
  return (
    <button type="button" class="emoji-cell" aria-label={name} title={`:${name}:`} onClick={() => onPick(name)}>
      {entry.url ? <img class="emoji" src={entry.url} alt="" loading="lazy" /> : <span class="emoji" data-code={entry.code} />}
    </button>
  );
}

/** Gives the emoji in `grid` their image once they come near its visible part. */
function useImagesInSight(grid: { current: HTMLElement | null }, key: unknown): void {
  useEffect(() => {
    const root = grid.current;
    if (!root) return;
    const observer = new IntersectionObserver(
      (entries) => {
        for (const { target, isIntersecting } of entries) {
          if (!isIntersecting) continue;
          const span = target as HTMLElement;
          span.style.backgroundImage = `url(${emojiImageUrl(span.dataset.code!)})`;
          observer.unobserve(span);
        }
      },
      { root, rootMargin: '64px' },
    );
    for (const span of root.querySelectorAll('span.emoji[data-code]:not([style])')) observer.observe(span);
    return () => observer.disconnect();
  }, [key]);
}

export function EmojiPicker({ label, realmEmoji, onPick, onClose }: EmojiPickerProps) {
  const [query, setQuery] = useState('');
  const grid = useRef<HTMLDivElement>(null);
  const custom = useMemo(() => customEmoji(realmEmoji), [realmEmoji]);
  const sections = useMemo(
    () => [
      { name: 'Popular', emoji: POPULAR.map((n) => byName.get(n)).filter((e): e is EmojiEntry => e !== undefined) },
      ...categories,
      ...(custom.length ? [{ name: 'Custom', emoji: custom }] : []),
    ],
    [custom],
  );
  const results = query.trim() ? searchEmoji(query.trim(), [...custom, ...categories.flatMap((c) => c.emoji)], MAX_RESULTS) : null;
  useImagesInSight(grid, results ? query : null);

  function onKeyDown(e: KeyboardEvent) {
    if (e.key === 'Escape') {
      e.stopPropagation();
      onClose();
    } else if (e.key === 'Enter' && e.target instanceof HTMLInputElement) {
      e.preventDefault();
      if (results?.[0]) onPick(results[0].name);
    }
  }

  return (
    <div class="emoji-picker" role="dialog" aria-label={label} onKeyDown={onKeyDown}>
      <input
        type="search"
        class="emoji-search"
        aria-label="Search emoji"
        placeholder="Search emoji"
        autoFocus
        value={query}
        onInput={(e) => setQuery(e.currentTarget.value)}
      />
      {!results && (
        <nav class="emoji-categories" aria-label="Emoji categories">
          {sections.map((s) => (
            <button
              key={s.name}
              type="button"
              class="button button-small button-secondary"
              onClick={() => grid.current?.querySelector(`[data-category="${s.name}"]`)?.scrollIntoView({ block: 'start' })}
            >
              {s.name}
            </button>
          ))}
        </nav>
      )}
      <div class="emoji-grid" ref={grid}>
        {results ? (
          results.length ? (
            <div class="emoji-cells" role="group" aria-label="Search results">
              {results.map(({ entry, name }) => (
                <Cell key={name} entry={entry} name={name} onPick={onPick} />
              ))}
            </div>
          ) : (
            <p class="hint">No emoji is called that.</p>
          )
        ) : (
          sections.map((s) => (
            <section key={s.name} data-category={s.name} aria-label={s.name}>
              <h3>{s.name}</h3>
              <div class="emoji-cells">
                {s.emoji.map((entry) => (
                  <Cell key={entry.code} entry={entry} name={entry.names[0]!} onPick={onPick} />
                ))}
              </div>
            </section>
          ))
        )}
      </div>
    </div>
  );
}
