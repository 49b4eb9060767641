// The `?` overlay: every keyboard shortcut of the page, closed by Esc, `?` or its button.
import { useEffect, useRef } from 'preact/hooks';

export const SHORTCUTS: [keys: string, what: string][] = [
  ['/', 'Search'],
  ['c', 'New message in the conversation on screen'],
  ['r', 'Reply to the selected message (or the last one)'],
  ['n', 'Next topic with unread messages'],
  ['j or ↓, k or ↑', 'Next or previous message'],
  ['Esc', 'Close this, a menu or the sidebar; leave the compose box'],
  ['Ctrl+Enter', 'Send the message, save an edit'],
  ['?', 'This list'],
];

export function KeyboardHelp({ onClose }: { onClose: () => void }) {
  const closeRef = useRef<HTMLButtonElement>(null);
  useEffect(() => closeRef.current?.focus(), []);
  return (
    <div class="overlay" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="shortcuts-title">
        <h2 id="shortcuts-title">Keyboard shortcuts</h2>
        <table class="shortcuts">
          <tbody>
            {SHORTCUTS.map(([keys, what]) => (
              <tr key={keys}>
                <th scope="row">
                  <kbd>{keys}</kbd>
                </th>
                <td>{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <button type="button" class="button button-secondary" ref={closeRef} onClick={onClose}>
          Close
        </button>
      </div>
    </div>
  );
}
