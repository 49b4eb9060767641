// The operator's endpoints, beside the API and outside its router (no organization, no Basic
// auth, no rate limit, no access log line per probe): /health/live and /health/ready for load
// balancers and orchestrators, and /metrics for Prometheus when METRICS_TOKEN is set.
import { createHash, timingSafeEqual } from 'node:crypto';
import type uWS from 'uWebSockets.js';
import type { App } from '../app.ts';
import { statusLine } from '../http/exchange.ts';
import { log } from '../log.ts';

export const LIVE_PATH = '/health/live';
export const READY_PATH = '/health/ready';
export const METRICS_PATH = '/metrics';

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const json = (status: number, body: unknown): Reply => ({ status, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

/** Answers with what `produce` resolves to, unless the client left meanwhile. */
function respond(res: uWS.HttpResponse, produce: () => Promise<Reply>): void {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  produce().then(
    (reply) => {
      if (aborted) return;
      res.cork(() => {
        res.writeStatus(statusLine(reply.status));
        res.writeHeader('Cache-Control', 'no-store');
        for (const [k, v] of Object.entries(reply.headers)) res.writeHeader(k, v);
        res.end(reply.body);
      });
    },
    (err: unknown) => {
      log.error('operations endpoint failed', { error: err instanceof Error ? err.stack : String(err) });
      if (!aborted) res.cork(() => res.writeStatus(statusLine(500)).end());
    },
  );
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether an Authorization header carries the token, compared in constant time. */
function bearerMatches(header: string, token: Buffer): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match !== null && timingSafeEqual(digest(match[1]!), token);
}

export function attachOperations(app: App, uws: uWS.TemplatedApp): void {
  // Alive as long as the event loop answers: never the database's fault, so an orchestrator does
  // not restart servers during a database outage.
  uws.get(LIVE_PATH, (res) => respond(res, async () => json(200, { status: 'live' })));
  uws.get(READY_PATH, (res) =>
    respond(res, async () => {
      const { ready, checks } = await app.readiness.report();
      return json(ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable', checks });
    }),
  );
  const token = app.config.METRICS_TOKEN;
  if (token === undefined) return;
  const expected = digest(token);
  uws.get(METRICS_PATH, (res, req) => {
    const authorized = bearerMatches(req.getHeader('authorization'), expected);
    respond(res, async (): Promise<Reply> => {
      if (!authorized) return { status: 401, headers: { 'WWW-Authenticate': 'Bearer realm="metrics"', 'Content-Type': 'text/plain' }, body: 'Unauthorized\n' };
      return { status: 200, headers: { 'Content-Type': app.metrics.contentType }, body: await app.metrics.text() };
    });
  });
}
