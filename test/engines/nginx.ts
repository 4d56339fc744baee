/**
 * nginx with Debian's `libnginx-mod-http-geoip2` (ngx_http_geoip2_module)
 * on loopback, configured as docs/exports.md shows, reading MMDB files in
 * MaxMind's schemas: each variable looked up for the address of the
 * request's `ip` argument (`source=$arg_ip`) and sent back as a header.
 * Used by `maxmind-schemas.ts`.
 */

import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const NGINX_MODULE = '/usr/lib/nginx/modules/ngx_http_geoip2_module.so';
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

/** Whether nginx and the geoip2 module are installed. */
export const hasNginx = (): boolean => NGINX !== undefined && existsSync(NGINX_MODULE);

/** A header and the key path of its value in a file (`country iso_code`). */
export type Variables = Readonly<Record<string, string>>;

/** A port free on loopback now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The nginx configuration that sets one header a variable, for each file and its variables. */
export function nginxConfig(dir: string, port: number, files: readonly (readonly [string, Variables])[]): string {
  const blocks = files.map(
    ([file, vars], k) =>
      `  geoip2 "${file}" {\n${Object.entries(vars)
        .map(([name, path]) => `    $v${k}_${name} source=$arg_ip ${path};`)
        .join('\n')}\n  }`,
  );
  const headers = files.flatMap(([, vars], k) => Object.keys(vars).map((name) => `      add_header X-${name} $v${k}_${name} always;`));
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${dir};`).join(' ');
  return `load_module ${NGINX_MODULE};
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')};
events {}
http {
  access_log off;
  ${temp}
${blocks.join('\n')}
  server {
    listen 127.0.0.1:${port};
    location / {
${headers.join('\n')}
      return 204;
    }
  }
}
`;
}

/**
 * Starts nginx over `files`, asks it for each address and gives the
 * headers it set (UTF-8; a header left out where its variable is empty).
 */
export async function nginxHeaders(
  dir: string,
  files: readonly (readonly [string, Variables])[],
  ips: readonly string[],
): Promise<Record<string, string>[]> {
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig(dir, port, files));
  const nginx = spawn(NGINX!, ['-c', conf, '-p', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  nginx.stderr.on('data', (b: Buffer) => (said += b.toString()));
  const ended = new Promise<number | null>((resolve) => nginx.once('exit', resolve));
  let exited: number | null | undefined;
  void ended.then((code) => (exited = code));
  try {
    const base = `http://127.0.0.1:${port}/`;
    // Up to a minute: a busy machine starts it slowly (it maps each file and checks its metadata).
    for (const deadline = Date.now() + 60_000; ;) {
      try {
        await fetch(base);
        break;
      } catch (e) {
        const why = () => `${said}${readFileSync(join(dir, 'error.log'), { encoding: 'utf8', flag: 'a+' })}`;
        if (exited !== undefined) throw new Error(`nginx exited (${exited}) before it answered: ${why()}`, { cause: e });
        if (Date.now() > deadline) throw new Error(`nginx did not answer within a minute: ${why()}`, { cause: e });
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const names = files.flatMap(([, vars]) => Object.keys(vars));
    const out: Record<string, string>[] = [];
    for (const ip of ips) {
      // As written: nginx does not decode $arg_ip (an address needs no escaping).
      const r = await fetch(`${base}?ip=${ip}`);
      const headers: Record<string, string> = {};
      for (const name of names) {
        const v = r.headers.get(`x-${name}`);
        // Header values come as bytes, one character each: the module writes UTF-8.
        if (v !== null) headers[name] = Buffer.from(v, 'latin1').toString('utf8');
      }
      out.push(headers);
    }
    return out;
  } finally {
    // Gone before the next one starts in the same directory.
    if (exited === undefined) {
      nginx.kill('SIGTERM');
      await ended;
    }
  }
}
