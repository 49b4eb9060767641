// What every settings form says after a change: saved, or what went wrong.
import { useState } from 'preact/hooks';
import { describeError } from '../../api.ts';

export type SaveOutcome = { ok: boolean; text: string } | null;

/** Runs a change, then says it is saved or what went wrong. */
export function useSave(): [SaveOutcome, (action: () => Promise<unknown>) => Promise<void>] {
  const [outcome, setOutcome] = useState<SaveOutcome>(null);
  const save = async (action: () => Promise<unknown>) => {
    setOutcome(null);
    try {
      await action();
      setOutcome({ ok: true, text: 'Saved.' });
    } catch (err) {
      setOutcome({ ok: false, text: describeError(err) });
    }
  };
  return [outcome, save];
}

export const Outcome = ({ outcome }: { outcome: SaveOutcome }) =>
  outcome ? (
    <p class={`alert ${outcome.ok ? 'alert-info' : 'alert-error'}`} role={outcome.ok ? 'status' : 'alert'}>
      {outcome.text}
    </p>
  ) : null;
