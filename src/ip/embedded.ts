/**
 * IPv6 addresses answered as the IPv4 address they carry: the one rule of
 * address forms, for `lookup()` and every export (docs/decisions.md).
 * From the IANA special-purpose registries:
 *
 * - `::ffff:0:0/96`, IPv4-mapped (RFC 4291 2.5.5.2): the parser already
 *   reads `::ffff:a.b.c.d` as IPv4 (`parse.ts`);
 * - `::/96` but `::` and `::1`, IPv4-compatible (RFC 4291 2.5.5.1,
 *   deprecated): where every MMDB tree files IPv4, so that MaxMind's
 *   readers, and an MMDB export, answer the IPv4 record there too;
 * - `64:ff9b::/96`, the NAT64 well-known prefix (RFC 6052, globally
 *   reachable): the IPv4 host the address is translated to.
 *
 * Not so: `64:ff9b:1::/48` (local-use NAT64, RFC 8215: not globally
 * reachable, a private address), 6to4 (`2002::/16`) and Teredo
 * (`2001::/32`), whose IPv4 address names a relay or server rather than
 * the host and whose prefixes ASN data routes as IPv6.
 */

/** The NAT64 well-known prefix's first word (64:ff9b::/96). */
const NAT64 = 0x0064ff9b;

/** Whether an IPv6 address (four words) is answered as the IPv4 address in its last word. */
export function carriesIpv4(w: ArrayLike<number>): boolean {
  return w[1] === 0 && w[2] === 0 && ((w[0] === 0 && w[3] > 1) || w[0] === NAT64);
}

/** IPv6 blocks answered as IPv4 besides `::ffff:0:0/96`: their first four words, all /96. */
export const IPV4_CARRIERS: readonly (readonly [number, number, number, number])[] = [
  [0, 0, 0, 0],
  [NAT64, 0, 0, 0],
];
