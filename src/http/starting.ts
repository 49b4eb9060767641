// The port, taken at once while the server starts (the embedded PostgreSQL, the migrations): a
// client that reconnects after a restart gets a 503 it retries, with Retry-After, not a refused
// connection after its retries have run out. Each answer closes its connection, so the client's
// next attempt reaches the real server once it has taken the port over.
import type { Config } from '../config.ts';
import uWS, { closeApp, listenExclusive } from './uws.ts';

export interface StartingListener {
  port: number;
  /** Releases the port for the real server. */
  close(): void;
}

const RETRY_AFTER_SECONDS = '1';
const BODY = JSON.stringify({ result: 'error', msg: 'The server is starting', code: 'SERVER_RESTARTING' });

export function listenWhileStarting(config: Pick<Config, 'HOST' | 'PORT'>): Promise<StartingListener> {
  const uws = uWS.App();
  uws.any('/*', (res, req) => {
    // The API's clients read Zulip's JSON error; browsers and probes get text.
    const api = /^\/(api|json)\//.test(req.getUrl());
    res.cork(() => {
      res
        .writeStatus('503 Service Unavailable')
        .writeHeader('Retry-After', RETRY_AFTER_SECONDS)
        .writeHeader('Connection', 'close')
        .writeHeader('Content-Type', api ? 'application/json' : 'text/plain; charset=utf-8')
        .end(api ? BODY : 'The server is starting; try again in a moment.\n', true);
    });
  });
  return new Promise((resolve, reject) => {
    listenExclusive(uws, config.HOST, config.PORT, (socket) => {
      if (!socket) return reject(new Error(`cannot listen on ${config.HOST}:${config.PORT}`));
      resolve({
        port: uWS.us_socket_local_port(socket),
        close() {
          uWS.us_listen_socket_close(socket);
          closeApp(uws);
        },
      });
    });
  });
}
