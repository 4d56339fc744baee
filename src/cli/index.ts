#!/usr/bin/env node
/**
 * `iprecord <ip> [ip...]`: prints records (pretty on a terminal, one
 * compact JSON line each otherwise). `--fields a,b`, `--field name`,
 * `--threat`, `-` reads addresses from standard input.
 *
 * Exit codes: 0 all answered, 1 some inputs bad, 2 usage or data error.
 */

import { createInterface } from 'node:readline';
import { isIprecordError, openSync, type Engine } from '../index.js';

const USAGE = `Usage: iprecord [options] <ip> [ip...]
       iprecord [options] -            (addresses from standard input, one per line)

Prints the record of each address: pretty JSON on a terminal, one compact
JSON line per address otherwise.

Options:
  --fields a,b     only these fields, in this order
  --field name     one field, as a bare value (strings print as plain text)
  --threat         the threat object only
  -h, --help       this help

Exit codes: 0 every address answered, 1 some addresses were bad, 2 usage or data error.
`;

interface Args {
  ips: string[];
  fields?: string;
  field?: string;
  threat: boolean;
  stdin: boolean;
}

function parseArgs(argv: string[]): Args | string {
  const args: Args = { ips: [], threat: false, stdin: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const eq = a.indexOf('=');
      if (eq >= 0) return a.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    try {
      if (a === '-h' || a === '--help') return 'help';
      else if (a === '-') args.stdin = true;
      else if (a === '--threat') args.threat = true;
      else if (a === '--fields' || a.startsWith('--fields=')) args.fields = value();
      else if (a === '--field' || a.startsWith('--field=')) args.field = value();
      else if (a.startsWith('-') && a !== '-' && !a.includes(':') && !/^-?\d/.test(a)) return `unknown option ${a}`;
      else args.ips.push(a);
    } catch (e) {
      return (e as Error).message;
    }
  }
  if (!args.stdin && args.ips.length === 0) return 'no address given';
  return args;
}

function answer(engine: Engine, args: Args, ip: string): unknown {
  if (args.threat) return engine.threat(ip);
  if (args.field !== undefined) return engine.field(ip, args.field as never);
  return engine.lookup(ip, args.fields === undefined ? undefined : { fields: args.fields });
}

async function main(): Promise<number> {
  const parsed = parseArgs(process.argv.slice(2));
  if (parsed === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (typeof parsed === 'string') {
    process.stderr.write(`iprecord: ${parsed}\n\n${USAGE}`);
    return 2;
  }
  let engine: Engine;
  try {
    engine = openSync();
  } catch (e) {
    process.stderr.write(`iprecord: ${(e as Error).message}\n`);
    return 2;
  }
  const pretty = process.stdout.isTTY === true;
  let bad = 0;
  const print = (ip: string) => {
    try {
      const v = answer(engine, parsed, ip);
      if (parsed.field !== undefined && typeof v === 'string') process.stdout.write(v + '\n');
      else process.stdout.write((pretty ? JSON.stringify(v, null, 2) : JSON.stringify(v)) + '\n');
    } catch (e) {
      if (!isIprecordError(e)) throw e;
      if (e.code === 'INVALID_FIELD') throw e;
      bad++;
      process.stderr.write(`iprecord: ${e.message}\n`);
    }
  };
  try {
    for (const ip of parsed.ips) print(ip);
    if (parsed.stdin) {
      for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
        const ip = line.trim();
        if (ip !== '') print(ip);
      }
    }
  } catch (e) {
    process.stderr.write(`iprecord: ${(e as Error).message}\n`);
    return 2;
  }
  return bad > 0 ? 1 : 0;
}

process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`iprecord: ${(e as Error).message}\n`);
    process.exitCode = 2;
  },
);
