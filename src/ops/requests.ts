// What the router tells about each answered request: its route's metrics cell, and one line of
// the access log (method, route pattern, status, duration, user; never parameters or headers).
import { requestId, type ObservedRequest, type RequestObservers, type ResponseObserver } from '../http/exchange.ts';
import { accessLogEnabled, logAccess } from '../log.ts';
import type { RouteCell, ServerMetrics } from './metrics.ts';

/** Methods a request no route took is counted under; any other token is OTHER, so scanners cannot add series. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
export const UNMATCHED_ROUTE = 'unmatched';

class RouteObserver implements ResponseObserver {
  constructor(
    private readonly cell: RouteCell,
    private readonly method: string,
    /** What the access log names: the route's pattern, or the path of a request no route took. */
    private readonly route: string,
  ) {}

  answered(request: ObservedRequest, status: number): void {
    const ms = performance.now() - request.startedAt;
    this.cell.record(status, ms / 1000);
    if (!accessLogEnabled()) return;
    logAccess({ request_id: requestId(request), method: this.method, route: this.route, status, ms: Math.round(ms * 10) / 10, user_id: request.userId });
  }
}

export function requestObservers(metrics: ServerMetrics): RequestObservers {
  return {
    route: (method, pattern) => new RouteObserver(metrics.route(method, pattern), method, pattern),
    unmatched: (method, path) => {
      const known = method.toUpperCase();
      const label = KNOWN_METHODS.has(known) ? known : 'OTHER';
      return new RouteObserver(metrics.route(label, UNMATCHED_ROUTE), label, path);
    },
  };
}
