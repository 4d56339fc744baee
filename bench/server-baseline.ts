/**
 * The server benchmark's baseline: what a user would write by hand with
 * `node:http`, `maxmind` npm (its default 10 000-record cache) and
 * `JSON.stringify`: `GET /<ip>` answers the geo and ASN records of the same
 * files iprecord reads; `POST /bulk` a JSON array of addresses.
 *
 * node --import tsx bench/server-baseline.ts <port> <geo4.mmdb> <geo6.mmdb> <asn.mmdb>
 */

import { createServer } from 'node:http';
import maxmind from 'maxmind';

const [port, geo4Path, geo6Path, asnPath] = process.argv.slice(2);
const [geo4, geo6, asn] = await Promise.all([maxmind.open(geo4Path), maxmind.open(geo6Path), maxmind.open(asnPath)]);

function lookup(ip: string): object | null {
  if (!maxmind.validate(ip)) return null;
  const geo = (ip.includes(':') ? geo6 : geo4).get(ip);
  return { ip, ...geo, asn: asn.get(ip) };
}

createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (req.method === 'POST' && url.pathname === '/bulk') {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const ips = JSON.parse(body) as string[];
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(ips.map((ip) => lookup(ip) ?? { message: `${ip} does not appear to be an IPv4 or IPv6 address` })));
    });
    return;
  }
  const ip = decodeURIComponent(url.pathname.slice(1));
  const record = lookup(ip);
  res.setHeader('Content-Type', 'application/json');
  if (record === null) {
    res.statusCode = 400;
    res.end(JSON.stringify({ message: `${ip} does not appear to be an IPv4 or IPv6 address` }));
    return;
  }
  res.end(JSON.stringify(record));
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
