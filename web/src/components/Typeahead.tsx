// A list of suggestions under a text field, worked from the field: arrows move, Tab or Enter
// picks, Esc closes until the text asks for something else; a click picks too.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export interface Typeahead<T> {
  open: boolean;
  active: number;
  /** Handles the field's key if the list is open and the key is the list's; true if so. */
  onKeyDown(e: KeyboardEvent): boolean;
  /** The attributes that tie the field to its list, for screen readers. */
  aria: Record<string, string | boolean | undefined>;
  items: T[];
}

/** `query` names what is being completed (null: nothing); the list shows while it has items and Esc did not close it. */
export function useTypeahead<T>(id: string, items: T[], query: string | null, pick: (item: T) => void): Typeahead<T> {
  const [active, setActive] = useState(0);
  const [closedFor, setClosedFor] = useState<string | null>(null);
  useEffect(() => setActive(0), [query]);
  const open = query !== null && query !== closedFor && items.length > 0;
  const current = Math.min(active, items.length - 1);
  function onKeyDown(e: KeyboardEvent): boolean {
    if (!open || e.ctrlKey || e.metaKey || e.altKey) return false;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') setActive((current + (e.key === 'ArrowDown' ? 1 : -1) + items.length) % items.length);
    else if ((e.key === 'Enter' && !e.shiftKey) || (e.key === 'Tab' && !e.shiftKey)) pick(items[current]!);
    else if (e.key === 'Escape') setClosedFor(query);
    else return false;
    e.preventDefault();
    // The page's own keys (Esc leaves the compose box) wait for the list to close.
    e.stopPropagation();
    return true;
  }
  const aria = {
    role: 'combobox',
    'aria-autocomplete': 'list',
    'aria-expanded': open,
    'aria-controls': id,
    'aria-activedescendant': open ? `${id}-${current}` : undefined,
  };
  return { open, active: current, onKeyDown, aria, items };
}

export function TypeaheadList<T>({
  id,
  label,
  typeahead,
  pick,
  render,
}: {
  id: string;
  label: string;
  typeahead: Typeahead<T>;
  pick: (item: T) => void;
  render: (item: T) => ComponentChildren;
}) {
  if (!typeahead.open) return null;
  return (
    <ul id={id} class="typeahead" role="listbox" aria-label={label}>
      {typeahead.items.map((item, i) => (
        // mousedown, not click: the field keeps its focus.
        <li key={i} id={`${id}-${i}`} role="option" aria-selected={i === typeahead.active} onMouseDown={(e) => (e.preventDefault(), pick(item))}>
          {render(item)}
        </li>
      ))}
    </ul>
  );
}
