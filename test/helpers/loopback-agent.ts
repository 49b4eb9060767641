// zulip-js (node-fetch on http.globalAgent) connects to the organization's host name, and
// *.localhost does not resolve on every machine, though browsers and systemd-resolved send it to
// loopback. This agent does the same for the tests that drive zulip-js.
import dns from 'node:dns';
import http from 'node:http';

export const loopbackAgent = new http.Agent({
  keepAlive: true,
  lookup: (hostname, options, callback) => {
    if (!/(^|\.)localhost$/i.test(hostname)) return dns.lookup(hostname, options, callback);
    if (options.all) (callback as (e: null, a: dns.LookupAddress[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
  },
});

/** Routes zulip-js through the loopback agent from now on (zulip-js offers no per-client agent). */
export function useLoopbackAgent(): void {
  http.globalAgent = loopbackAgent;
}
