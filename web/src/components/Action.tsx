// What the overlays' forms share: an action run with its error kept to show, and the line showing it.
import { useState } from 'preact/hooks';
import { describeError } from '../api.ts';

/** Runs an action, keeping its error to show; resolves to whether it succeeded. */
export function useAction(): [string | null, (action: () => Promise<unknown>) => Promise<boolean>] {
  const [error, setError] = useState<string | null>(null);
  const run = async (action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
      return true;
    } catch (err) {
      setError(describeError(err));
      return false;
    }
  };
  return [error, run];
}

export const ErrorLine = ({ error }: { error: string | null }) =>
  error ? (
    <p class="alert alert-error" role="alert">
      {error}
    </p>
  ) : null;
