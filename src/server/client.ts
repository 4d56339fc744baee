/**
 * The caller's own address (`GET /`): the socket's peer, or, behind
 * trusted proxies, what they report in `Forwarded` (RFC 7239) or
 * `X-Forwarded-For`.
 *
 * `trustProxy: true` takes the first (left-most) reported address: right
 * when the proxies in front strip what clients send. `trustProxy: n` takes
 * the address n hops back: with one proxy, the last entry (the one that
 * proxy added), which a client cannot forge.
 */

import type { IncomingHttpHeaders } from 'node:http';

export type TrustProxy = boolean | number;

/** `::ffff:192.0.2.1` as `192.0.2.1` (a dual-stack socket's IPv4 peer). */
function peerAddress(remote: string | undefined): string {
  if (remote === undefined) return '';
  return remote.startsWith('::ffff:') && remote.indexOf('.') > 0 ? remote.slice(7) : remote;
}

/** The caller's address from the socket's peer and the headers. */
export function clientAddress(remote: string | undefined, headers: IncomingHttpHeaders, trust: TrustProxy): string {
  const peer = peerAddress(remote);
  if (trust === false || trust === 0) return peer;
  const forwarded = headers.forwarded;
  const list = forwarded !== undefined ? forwardedFor(forwarded) : forwardedList(headers['x-forwarded-for']);
  if (list.length === 0) return peer;
  if (trust === true) return list[0];
  // The peer is hop 0; hop n is n entries back from the end of the list.
  return list[Math.max(0, list.length - trust)];
}

function forwardedList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const text = Array.isArray(value) ? value.join(',') : value;
  const out: string[] = [];
  for (const part of text.split(',')) {
    const a = stripPort(part.trim());
    if (a !== '') out.push(a);
  }
  return out;
}

/** The `for=` addresses of a `Forwarded` header, in order. */
function forwardedFor(value: string): string[] {
  const out: string[] = [];
  for (const element of value.split(',')) {
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
      let v = pair.slice(eq + 1).trim();
      if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
      const a = stripPort(v);
      if (a !== '') out.push(a);
    }
  }
  return out;
}

/** `[2001:db8::1]:4711` → `2001:db8::1`; `192.0.2.1:80` → `192.0.2.1`; others as they are. */
function stripPort(v: string): string {
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    return end < 0 ? v : v.slice(1, end);
  }
  const colon = v.indexOf(':');
  if (colon > 0 && colon === v.lastIndexOf(':') && v.indexOf('.') > 0) return v.slice(0, colon);
  return v;
}
