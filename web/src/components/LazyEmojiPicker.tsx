// The emoji picker, fetched (with the emoji catalog) the first time one opens.
import { useLazy } from '../lazy.ts';
import type { EmojiPickerProps } from './EmojiPicker.tsx';

export function LazyEmojiPicker(props: EmojiPickerProps) {
  const Picker = useLazy(() => import('./EmojiPicker.tsx').then((m) => m.EmojiPicker), true);
  return Picker ? (
    <Picker {...props} />
  ) : (
    <p class="hint emoji-picker" role="status">
      Loading emoji…
    </p>
  );
}
