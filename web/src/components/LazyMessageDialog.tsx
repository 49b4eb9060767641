// A message's dialogs (read receipts, edit history, report), fetched the first time one opens.
import { useLazy } from '../lazy.ts';
import type { MessageDialogProps } from './MessageDialogs.tsx';

export function LazyMessageDialog(props: MessageDialogProps) {
  const Dialog = useLazy(() => import('./MessageDialogs.tsx').then((m) => m.MessageDialog), true);
  return Dialog ? <Dialog {...props} /> : null;
}
