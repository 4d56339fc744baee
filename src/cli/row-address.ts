/**
 * Where a row of `iprecord enrich` holds its address: a CSV column by its
 * usual names, a path of an NDJSON object, a log line's first field or a
 * pattern's group; and the address as logs write it, brackets and port
 * taken off.
 */

/** The value at a dotted path of an object, or undefined. */
export function at(value: unknown, path: readonly string[]): unknown {
  let v = value;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

/**
 * The address of a log line: `regex`'s group `ip` (else its first group,
 * else its match), or the line's first field (common and combined log
 * formats: `$remote_addr`, `%h`); without brackets and a port
 * (`[2001:db8::1]:443`, `203.0.113.9:51234`). null: none.
 */
export function logAddress(line: string, regex: RegExp | null): string | null {
  let field: string | undefined;
  if (regex === null) field = /^\s*(\S+)/.exec(line)?.[1];
  else {
    const m = regex.exec(line);
    field = m === null ? undefined : (m.groups?.ip ?? m[1] ?? m[0]);
  }
  return field === undefined ? null : withoutPort(field);
}

/**
 * An address as logs and proxies write it, without brackets and a port:
 * `[2001:db8::1]:443` and `[2001:db8::1]` as `2001:db8::1`,
 * `203.0.113.9:51234` as `203.0.113.9` (one colon and digits after it: an
 * IPv6 address has two colons or more). Anything else as it is.
 */
export function withoutPort(field: string): string {
  if (field.startsWith('[')) {
    const end = field.indexOf(']');
    return end < 0 || (end + 1 < field.length && !/^:\d{1,5}$/.test(field.slice(end + 1))) ? field : field.slice(1, end);
  }
  const colon = field.indexOf(':');
  return colon > 0 && field.indexOf(':', colon + 1) < 0 && /^\d{1,5}$/.test(field.slice(colon + 1)) ? field.slice(0, colon) : field;
}

/** The names of a CSV column that holds the address, in the order tried when no `--column` is given. */
export const ADDRESS_COLUMNS: readonly string[] = ['ip', 'ip_address', 'address', 'client_ip', 'remote_addr', 'ipaddress', 'src_ip'];

/**
 * Where NDJSON logs put the client's address, in the order tried when no
 * `--path` is given: the column names above, then Cloudflare (`ClientIP`),
 * Traefik (`ClientHost`, `ClientAddr`), Elastic's common schema
 * (`client.ip`, `source.ip`), Caddy (`request.client_ip`,
 * `request.remote_ip`), Google Cloud (`httpRequest.remoteIp`), Envoy
 * (`downstream_remote_address`) and other common names.
 */
export const ADDRESS_PATHS: readonly (readonly string[])[] = [
  ...ADDRESS_COLUMNS,
  'clientip',
  'ClientIP',
  'ClientHost',
  'ClientAddr',
  'remote_ip',
  'remoteIp',
  'source_ip',
  'client.ip',
  'source.ip',
  'request.client_ip',
  'request.remote_ip',
  'httpRequest.remoteIp',
  'downstream_remote_address',
].map((p) => p.split('.'));

/** The first of `paths` whose value in `object` is a string that is not blank, trimmed; null: none. */
export function addressAt(object: unknown, paths: readonly (readonly string[])[]): string | null {
  for (const path of paths) {
    const v = at(object, path);
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return null;
}
