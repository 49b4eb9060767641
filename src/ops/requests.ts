// What the router tells about each answered request: its route's metrics cell, and one line of
// the access log (method, route pattern, status, duration, user; never parameters or headers).
import type { ObservedRequest, RequestObservers, ResponseObserver } from '../http/exchange.ts';
import { AccessLog, accessLogEnabled } from '../log.ts';
import type { RouteCell, ServerMetrics } from './metrics.ts';

/** Methods a request no route took is counted under; any other token is OTHER, so scanners cannot add series. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
export const UNMATCHED_ROUTE = 'unmatched';

class RouteObserver implements ResponseObserver {
  private readonly accessLog: AccessLog;

  constructor(
    private readonly cell: RouteCell,
    method: string,
    /** What the access log names: the route's pattern, or the path of a request no route took. */
    route: string,
  ) {
    this.accessLog = new AccessLog(method, route);
  }

  answered(request: ObservedRequest, status: number): void {
    const ms = performance.now() - request.startedAt;
    this.cell.record(status, ms / 1000);
    if (accessLogEnabled()) this.accessLog.write(request.seq, status, Math.round(ms * 10) / 10, request.userId);
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
