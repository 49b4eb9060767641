// uWebSockets.js, checked to be the native build, with the bits its bundled typings lack.
import uWS from 'uWebSockets.js';

// If the native binary fails to load, the package silently falls back to a slow JS version.
if (!('_cfg' in uWS)) throw new Error('uWebSockets.js native module did not load (unsupported platform or Node ABI)');

export const LISTEN_EXCLUSIVE_PORT: number = (uWS as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number }).LIBUS_LISTEN_EXCLUSIVE_PORT;

type ListenCallback = (socket: uWS.us_listen_socket | false) => void;

/** `listen(host, port, options, cb)`, which the binary has and the typings omit. */
export function listenExclusive(app: uWS.TemplatedApp, host: string, port: number, cb: ListenCallback): void {
  (app as unknown as { listen(h: string, p: number, o: number, c: ListenCallback): void }).listen(host, port, LISTEN_EXCLUSIVE_PORT, cb);
}

/** Closes the app and every connection it holds (also missing from the typings). */
export function closeApp(app: uWS.TemplatedApp): void {
  (app as unknown as { close(): void }).close();
}

export default uWS;
