// The cryptography of E2EE push notifications (Zulip's push_key): a device's key is one byte
// naming the cryptosystem, then the key; 0x31 is libsodium's secretbox (XSalsa20 and Poly1305)
// with a 32-byte key, the only one there is. A notification is the JSON payload sealed with that
// key under a random nonce, sent as standard Base64 of nonce followed by ciphertext (PyNaCl's
// layout, which Zulip's mobile app opens).
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

// Loaded when the first notification is sealed or opened, not at start: libsodium costs about
// 13 MB of memory, which a server without push never needs.
let loaded: typeof import('sodium-native') | undefined;
const loadSodium = () => (loaded ??= createRequire(import.meta.url)('sodium-native') as typeof import('sodium-native'));

/** The first byte of a push key for crypto_secretbox_easy. */
export const SECRETBOX_PREFIX = 0x31;
/** The prefix and secretbox's 32-byte key (crypto_secretbox_KEYBYTES). */
const PUSH_KEY_BYTES = 1 + 32;

/** Decodes strict standard Base64 (RFC 4648, padded), or null for anything else. */
export function decodeBase64(text: string): Buffer | null {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) return null;
  return Buffer.from(text, 'base64');
}

/** The push key's bytes when they are a secretbox key as Zulip accepts it, else null. */
export function parsePushKey(text: string): Buffer | null {
  const bytes = decodeBase64(text);
  return bytes && bytes.length === PUSH_KEY_BYTES && bytes[0] === SECRETBOX_PREFIX ? bytes : null;
}

/** `payload` as JSON, sealed for the device holding `pushKey` (prefix and key, as stored). */
export function encryptNotification(pushKey: Uint8Array, payload: unknown): string {
  const sodium = loadSodium();
  const key = Buffer.from(pushKey.subarray(1));
  const message = Buffer.from(JSON.stringify(payload), 'utf8');
  const nonce = Buffer.alloc(sodium.crypto_secretbox_NONCEBYTES);
  sodium.randombytes_buf(nonce);
  const sealed = Buffer.alloc(message.length + sodium.crypto_secretbox_MACBYTES);
  sodium.crypto_secretbox_easy(sealed, message, nonce, key);
  key.fill(0);
  return Buffer.concat([nonce, sealed]).toString('base64');
}

/** What the phone does with a notification: opens `encrypted` with its key and parses the JSON; null when the key does not open it. */
export function openNotification(pushKey: Uint8Array, encrypted: string): unknown {
  const sodium = loadSodium();
  const bytes = Buffer.from(encrypted, 'base64');
  if (bytes.length < sodium.crypto_secretbox_NONCEBYTES + sodium.crypto_secretbox_MACBYTES) return null;
  const nonce = bytes.subarray(0, sodium.crypto_secretbox_NONCEBYTES);
  const sealed = bytes.subarray(sodium.crypto_secretbox_NONCEBYTES);
  const plain = Buffer.alloc(sealed.length - sodium.crypto_secretbox_MACBYTES);
  if (!sodium.crypto_secretbox_open_easy(plain, sealed, nonce, Buffer.from(pushKey.subarray(1)))) return null;
  return JSON.parse(plain.toString('utf8'));
}

/**
 * A token id as Zulip stores it: the first 8 bytes of the SHA-256 of the FCM/APNs token, read as
 * a big-endian signed 64-bit integer. Clients send those bytes in Base64.
 */
export function tokenIdOf(token: string): bigint {
  return createHash('sha256').update(token, 'utf8').digest().readBigInt64BE();
}

export function encodeTokenId(id: bigint): string {
  const bytes = Buffer.alloc(8);
  bytes.writeBigInt64BE(id);
  return bytes.toString('base64');
}
