// Who is on the other end behind reverse proxies. Only peers listed in TRUSTED_PROXIES are believed:
// each proxy appends the address it saw to X-Forwarded-For, so the client is the right-most address
// that is not a trusted proxy; everything to its left may have been written by the client itself.
import net from 'node:net';
import type { Scheme } from '../config.ts';

export interface ClientOrigin {
  /** The client's address, in one form per client (IPv4-mapped IPv6 as IPv4), for rate-limit keys. */
  ip: string;
  /** The scheme a trusted proxy says the client used; null when no trusted proxy said so. */
  scheme: Scheme | null;
}

export class TrustedProxies {
  private readonly list = new net.BlockList();
  /** Whether any proxy is trusted, so forwarding headers are worth reading at all. */
  readonly any: boolean;

  /** `entries`: addresses and CIDR ranges, IPv4 or IPv6, as validated by the configuration. */
  constructor(entries: readonly string[]) {
    this.any = entries.length > 0;
    for (const entry of entries) {
      const [address = '', prefix] = entry.split('/');
      const type = net.isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.list.addAddress(address, type);
      else this.list.addSubnet(address, Number(prefix), type);
    }
  }

  /** BlockList matches an IPv4-mapped IPv6 address (as uWS reports IPv4 peers on a dual-stack socket) against IPv4 rules too. */
  trusts(address: string): boolean {
    if (!this.any) return false;
    const version = net.isIP(address);
    return version !== 0 && this.list.check(address, version === 6 ? 'ipv6' : 'ipv4');
  }

  /**
   * `peer` is the socket's address; `header(name)` reads a request header (every line of it, joined
   * with commas), and is called only when the peer is a trusted proxy.
   */
  origin(peer: string, header: (name: 'x-forwarded-for' | 'x-forwarded-proto') => string): ClientOrigin {
    if (!this.trusts(peer)) return { ip: canonicalAddress(peer), scheme: null };
    let client = peer;
    const hops = header('x-forwarded-for').split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hopAddress(hops[i]!);
      // Not an address: a proxy we trust wrote nonsense, so keep the last address it vouched for.
      if (hop === null) break;
      client = hop;
      if (!this.trusts(hop)) break;
    }
    // Proxies that append to X-Forwarded-Proto put the nearest one's value last.
    const forwardedProto = header('x-forwarded-proto');
    const proto = forwardedProto
      .slice(forwardedProto.lastIndexOf(',') + 1)
      .trim()
      .toLowerCase();
    return { ip: canonicalAddress(client), scheme: proto === 'https' || proto === 'http' ? proto : null };
  }
}

/** One X-Forwarded-For entry: an address, possibly with a port (`1.2.3.4:567`, `[::1]:80`). */
function hopAddress(entry: string): string | null {
  let s = entry.trim();
  if (net.isIP(s)) return s;
  if (s.startsWith('[')) s = s.slice(1, s.indexOf(']'));
  else s = s.slice(0, s.lastIndexOf(':'));
  return net.isIP(s) ? s : null;
}

/** Canonical forms of recent addresses: every request asks, and clients come back on new connections. */
const canonicalForms = new Map<string, string>();
const MAX_CANONICAL_FORMS = 4096;

function canonicalAddress(address: string): string {
  let form = canonicalForms.get(address);
  if (form === undefined) {
    if (canonicalForms.size >= MAX_CANONICAL_FORMS) canonicalForms.clear();
    form = computeCanonicalAddress(address);
    canonicalForms.set(address, form);
  }
  return form;
}

/** `0000:…:ffff:7f00:0001` and `::ffff:127.0.0.1` become `127.0.0.1`; other IPv6 its shortest form. */
function computeCanonicalAddress(address: string): string {
  if (net.isIP(address) !== 6 || address.includes('%')) return address;
  // The WHATWG URL parser writes IPv6 hosts in their canonical (compressed, lower-case) form.
  const host = new URL(`http://[${address}]`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (!mapped) return host;
  const high = parseInt(mapped[1]!, 16);
  const low = parseInt(mapped[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}
