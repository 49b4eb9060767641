// Desktop notifications and sounds for new messages, as Zulip's web app decides them: direct
// messages and mentions by the user's settings (enable_desktop_notifications, enable_sounds),
// channel messages by the channel's own choice or else the user's channel default; never for
// one's own messages, read ones, muted topics, or while the user is looking at the page.
import { channelName, userName } from './format.ts';
import { isMessageMuted, type AppState } from './state.ts';
import type { Message } from './types.ts';

const MENTION_FLAGS = ['mentioned', 'stream_wildcard_mentioned', 'topic_wildcard_mentioned', 'wildcard_mentioned'];
const BODY_LENGTH = 150;

/** What a message asks for: a desktop notification, a sound, both or neither. */
export function alertsFor(state: AppState, m: Message): { desktop: boolean; sound: boolean } {
  const none = { desktop: false, sound: false };
  if (m.sender_id === state.me.userId || m.flags.includes('read') || isMessageMuted(state, m)) return none;
  const { settings } = state;
  if (m.type === 'private' || m.flags.some((f) => MENTION_FLAGS.includes(f)))
    return { desktop: settings.enable_desktop_notifications, sound: settings.enable_sounds };
  const sub = state.subs.get(m.stream_id!);
  if (!sub) return none;
  return {
    desktop: sub.desktop_notifications ?? settings.enable_stream_desktop_notifications,
    sound: sub.audible_notifications ?? settings.enable_stream_audible_notifications,
  };
}

const pageInView = () => document.visibilityState === 'visible' && document.hasFocus();

/** The message's text, for the notification's body. */
function plainText(html: string): string {
  const text = new DOMParser().parseFromString(html, 'text/html').body.textContent ?? '';
  return text.length > BODY_LENGTH ? `${text.slice(0, BODY_LENGTH - 1)}…` : text;
}

let audio: AudioContext | null = null;

/** A short two-note chime, made here (no sound file to fetch). */
function chime(): void {
  audio ??= new AudioContext();
  const now = audio.currentTime;
  for (const [i, frequency] of [880, 1320].entries()) {
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = frequency;
    gain.gain.setValueAtTime(0.15, now + i * 0.12);
    gain.gain.exponentialRampToValueAtTime(0.001, now + i * 0.12 + 0.25);
    tone.connect(gain).connect(audio.destination);
    tone.start(now + i * 0.12);
    tone.stop(now + i * 0.12 + 0.25);
  }
}

/** Alerts the user to a message that just came, if their settings ask for it; `open` shows its conversation. */
export function notify(state: AppState, message: Message, open: () => void): void {
  if (pageInView()) return;
  const { desktop, sound } = alertsFor(state, message);
  if (sound) chime();
  if (!desktop || typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
  const title =
    message.type === 'stream'
      ? `${message.sender_full_name} (#${channelName(state, message.stream_id!)} > ${message.subject})`
      : userName(state, message.sender_id);
  const shown = new Notification(title, { body: plainText(message.content), tag: String(message.id) });
  shown.onclick = () => {
    window.focus();
    open();
    shown.close();
  };
}

/** Asks the browser for permission (it must come from a click); true when notifications may show. */
export async function askPermission(): Promise<boolean> {
  if (typeof Notification === 'undefined') return false;
  if (Notification.permission === 'default') await Notification.requestPermission();
  return Notification.permission === 'granted';
}
