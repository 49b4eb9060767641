// What overlays (channels, settings) share: Escape leads back to the conversation under them.
import { useEffect } from 'preact/hooks';

export function useCloseOnEscape(closeHref: string): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') location.hash = closeHref;
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [closeHref]);
}
