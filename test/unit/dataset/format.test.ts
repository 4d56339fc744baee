import { PACKAGE_ZONES } from '../../../src/time/package-zones.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wholeFileCrc } from '../../../src/files/checksum.js';
import { describe, expect, it } from 'vitest';
import { compileDataset } from '../../../src/compile/dataset.js';
import { Interner } from '../../../src/compile/intern.js';
import { CompiledDataset, internedSections } from '../../../src/compile/write.js';
import {
  BITS_AT,
  compactIndexBits,
  CRC_AT,
  Dataset,
  FINE_AT,
  FLAGS_AT,
  PACKED,
  DATASET_FORMAT_VERSION,
  HEADER,
  indexBits,
  layout,
  LOC,
  NET,
  NETWORK,
  NO_ROUTE,
  NO_STRING,
  PL,
  PLACE,
  PART_UTF8,
  readCounts,
  TABLES,
  THR,
  findRange,
} from '../../../src/dataset/format.js';
import { PART_COLUMNS } from '../../../src/dataset/parts.js';
import { OTHER } from '../../../src/dataset/text.js';
import { InvalidDatasetError } from '../../../src/contract/errors.js';
import { specialTable } from '../../../src/ip/special.js';
import { Sources } from '../../../src/compile/sources.js';
import { FIXTURES_DIR } from '../../../scripts/make-fixtures.js';
import { testDb } from '../../helpers/maxmind.js';

const compiled = compileDataset(
  new Sources({
    geo: [testDb(FIXTURES_DIR, 'DBIP-City-Lite-Fixture')],
    asn: [testDb(FIXTURES_DIR, 'GeoLite2-ASN-Fixture')],
    anonymous: [],
  }),
  null,
  specialTable(),
  'fixtures',
);
const good = compiled.toBuffer();

const damaged = (f: (b: Buffer) => void) => {
  const b = Buffer.from(good);
  f(b);
  return b;
};
/** A change with the checksum made again: a crafted file, not a damaged one. */
const crafted = (f: (b: Buffer) => void) =>
  damaged((b) => {
    f(b);
    b.writeUInt32LE(wholeFileCrc(b, HEADER, CRC_AT), CRC_AT);
  });
const at = layout(readCounts(good));

describe('dataset file', () => {
  it('is the same bytes written to a file section by section as made in memory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iprecord-format-'));
    try {
      const path = join(dir, 'x.iprd');
      expect(compiled.writeFile(path)).toBe(good.length);
      expect(readFileSync(path).equals(good)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has the checksum of its bytes when a section is empty (no text outside ASCII)', () => {
    const intern = new Interner();
    const ref = ((intern.record(intern.location(null), intern.network(null), intern.threat(null, 0, 0, false)) << 8) | NO_ROUTE) >>> 0;
    const family = (width: number) => ({ starts: new Uint32Array(width), refs: Uint32Array.of(ref), length: 1 });
    const sections = internedSections(intern);
    expect(sections.other.length).toBe(0);
    new Dataset(
      new CompiledDataset(family(1), family(4), sections, {
        zones: [],
        timeZones: PACKAGE_ZONES,
        builtAt: '',
        key: '',
        sources: [],
      }).toBuffer(),
      'ascii only',
    ).verify();
  });

  it('opens what the compiler writes', () => {
    const ds = new Dataset(good, 'good');
    expect(ds.starts4[0]).toBe(0);
    expect(ds.meta.zones.length).toBeGreaterThan(0);
  });

  it('packed as a lite dataset is (IPv6 starts of two words, parts rendered at open, compact indexes): the same arrays once open', () => {
    const packed = new CompiledDataset(compiled.v4, compiled.v6, compiled.sections, compiled.meta, undefined, PACKED.v6 | PACKED.parts);
    const bytes = packed.toBuffer();
    const c = readCounts(bytes);
    const plain = readCounts(good);
    // The fixtures' IPv6 holds the /96 copy of IPv4: starts whose last words are not zero, in the fine section.
    expect(c.fine6).toBeGreaterThan(0);
    expect(c.fine6).toBeLessThan(c.v6);
    expect({ ...c, packed: 0, fine6: 0, bits4: 0, bits6: 0, partsBytes: 0 }).toEqual({
      ...plain,
      fine6: 0,
      bits4: 0,
      bits6: 0,
      partsBytes: 0,
    });
    expect([c.bits4, c.bits6]).toEqual([compactIndexBits(c.v4), compactIndexBits(c.v6)]);
    const p = layout(c);
    expect(p.starts6 - p.index6).toBe(((1 << c.bits6) + 1) * 4 + (((1 << c.bits6) + 1) % 2) * 4);
    expect(p.refs6 - p.starts6).toBe(c.v6 * 8 + c.fine6 * 12 + ((c.fine6 * 12) % 8));
    expect(bytes.length).toBeLessThan(good.length - plain.partsBytes);
    const a = new Dataset(bytes, 'packed');
    const b = new Dataset(good, 'good');
    a.verify();
    const same = (x: Uint32Array, y: Uint32Array) =>
      Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(y.buffer, y.byteOffset, y.byteLength));
    for (const k of ['starts4', 'refs4', 'starts6', 'refs6', 'records', 'places', 'countries'] as const)
      expect(same(a[k], b[k]), k).toBe(true);
    // The tables with parts: the same rows but where their parts lie (rendered at open, a part met before is not looked
    // for), and each row's part the same text.
    for (const c of PART_COLUMNS) {
      const width = TABLES[c.table].length;
      const [x, y] = [a[c.table], b[c.table]];
      expect(x.length, c.table).toBe(y.length);
      for (let at = 0; at < x.length; at += width) {
        // A part's UTF-8 bytes (its end without the PART_UTF8 flag).
        const text = (d: Dataset, r: Uint32Array) =>
          Buffer.from(d.partBytes.subarray(r[at + c.at], (r[at + c.at + 1] & ~PART_UTF8) >>> 0)).toString();
        expect(text(a, x), `${c.table} ${at / width}`).toBe(text(b, y));
      }
    }
    const partless = (d: Dataset, t: 'locations' | 'networks' | 'threats') => {
      const r = d[t].slice();
      for (const c of PART_COLUMNS) if (c.table === t) for (let at = c.at; at < r.length; at += TABLES[t].length) r[at] = r[at + 1] = 0;
      return r;
    };
    for (const t of ['locations', 'networks', 'threats'] as const) expect(same(partless(a, t), partless(b, t)), t).toBe(true);
    for (let i = 0; i < 5000; i++) {
      const w = [(i * 0x9e3779b9) >>> 0, (i * 0x85ebca6b) >>> 0, 0, (i * 0xc2b2ae35) >>> 0];
      expect(findRange(a, 4, w), `${w}`).toBe(findRange(b, 4, w));
      expect(findRange(a, 6, w), `${w}`).toBe(findRange(b, 6, w));
    }
    const fine = p.starts6 + c.v6 * 8;
    const packedCrafted = (f: (b: Buffer) => void) => {
      const out = Buffer.from(bytes);
      f(out);
      out.writeUInt32LE(wholeFileCrc(out, HEADER, CRC_AT), CRC_AT);
      return out;
    };
    const cases: [string, Buffer, RegExp][] = [
      ['fine range out of order', packedCrafted((o) => o.writeUInt32LE(0, fine + 12)), /fine IPv6 start 1 names range 0/],
      [
        'fine range past the ranges',
        packedCrafted((o) => o.writeUInt32LE(c.v6, fine + 12 * (c.fine6 - 1))),
        /fine IPv6 start .* names range/,
      ],
      ['fine start of zeros', packedCrafted((o) => o.fill(0, fine + 4, fine + 12)), /fine IPv6 start 0 names range/],
      ['unknown flag', packedCrafted((o) => o.writeUInt32LE(PACKED.v6 | PACKED.parts | 8, FLAGS_AT)), /unknown packing flags 11/],
      ['index bits 0', packedCrafted((o) => o.writeUInt8(0, BITS_AT)), /index bits 0, not 1 to 20/],
      ['index bits 21', packedCrafted((o) => o.writeUInt8(21, BITS_AT + 1)), /index bits 21, not 1 to 20/],
      ['more fine starts than ranges', packedCrafted((o) => o.writeUInt32LE(c.v6 + 1, FINE_AT)), /fine IPv6 starts/],
      ['fine starts unpacked', crafted((o) => o.writeUInt32LE(1, FINE_AT)), /1 fine IPv6 starts/],
    ];
    for (const [name, buf, message] of cases) expect(() => new Dataset(buf, name), name).toThrow(message);
    for (const [name, buf] of cases) expect(() => new Dataset(buf, name), name).toThrow(InvalidDatasetError);
    // A network's name past the text, in a file whose parts are rendered at open: the file's defect, named, at open
    // where rendering meets it (Node 20's copy throws), else at verify() (Node 24's clamps).
    const pastText = packedCrafted((o) => o.writeUInt32LE(0x3fffff00, p.networks + (NET.name + NETWORK) * 4));
    expect(() => new Dataset(pastText, 'name past the text').verify()).toThrow(InvalidDatasetError);
  });

  it('refuses damaged and crafted files with a typed error naming the defect', () => {
    const cases: [string, Buffer, RegExp][] = [
      ['magic', damaged((b) => void b.write('XXXX', 0)), /bad magic/],
      [
        'a future version',
        damaged((b) => b.writeUInt32LE(DATASET_FORMAT_VERSION + 1, 8)),
        new RegExp(`format version ${DATASET_FORMAT_VERSION + 1}`),
      ],
      [
        'the version before',
        damaged((b) => {
          b.write(`IPRDSET${DATASET_FORMAT_VERSION - 1}`, 0, 'latin1');
          b.writeUInt32LE(DATASET_FORMAT_VERSION - 1, 8);
        }),
        new RegExp(`format version ${DATASET_FORMAT_VERSION - 1}, this iprecord reads ${DATASET_FORMAT_VERSION} \\(compile it again\\)`),
      ],
      ['magic of another version', damaged((b) => void b.write(String((DATASET_FORMAT_VERSION + 1) % 10), 7, 'latin1')), /bad magic/],
      ['truncated', good.subarray(0, good.length - 4), /add up to/],
      ['empty', Buffer.alloc(0), /bad magic/],
      // Counts with bit 31 set: a typed error, not a RangeError from the arithmetic.
      ['count past 2^31', crafted((b) => b.writeUInt32LE(0x80000004, 12)), /past 2\^31/],
      [
        'counts that wrap',
        crafted((b) => {
          b.writeUInt32LE(0xfffffff8, 12 + 4 * 8);
          b.writeUInt32LE(0xfffffff8, 12 + 4 * 9);
        }),
        /past 2\^31/,
      ],
    ];
    for (const [name, buf, message] of cases) {
      expect(() => new Dataset(buf, name), name).toThrow(InvalidDatasetError);
      expect(() => new Dataset(buf, name), name).toThrow(message);
    }
  });

  it('finds at verify() what opening does not read: a flipped bit anywhere (checksum), a range naming no record', () => {
    new Dataset(good, 'good').verify();
    // An index out of order (its checksum made right): opening reads the index's ends only, verify() all of it.
    const outOfOrder = crafted((b) => b.writeUInt32LE(0xffff, HEADER + 4));
    expect(() => new Dataset(outOfOrder, 'index out of order').verify()).toThrow(/the IPv4 index says block 1 starts at range 65535/);
    // A bit of a value's text.
    const flipped = damaged((b) => void (b[at.ascii + 1] ^= 1));
    expect(() => new Dataset(flipped, 'flipped').verify()).toThrow(/checksum mismatch/);
    // A bit of the header's zeros (the index bits' word's upper half), and of the checksum itself: the header is under it too.
    for (const byte of [BITS_AT + 2, BITS_AT + 3, CRC_AT])
      expect(
        () =>
          new Dataset(
            damaged((b) => void (b[byte] ^= 1)),
            `byte ${byte}`,
          ).verify(),
        `byte ${byte}`,
      ).toThrow(/checksum mismatch/);
    // A crafted range: opens, and a lookup that meets it is a typed error, not a wrong record.
    const crafted0 = crafted((b) => b.writeUInt32LE(0xffffff00, at.refs4));
    const ds = new Dataset(crafted0, 'crafted');
    expect(() => ds.verify()).toThrow(/refers to record/);
    expect(() => findRange(ds, 4, [0, 0, 0, 0])).toThrow(InvalidDatasetError);
    expect(() => findRange(ds, 4, [0, 0, 0, 0])).toThrow(/refers to record/);
    // A record row naming a location past the table.
    expect(() =>
      new Dataset(
        crafted((b) => b.writeUInt32LE(0xfffffff0, at.records)),
        'row',
      ).verify(),
    ).toThrow(/records row 0 refers to locations/);
    // A place whose city's slice ends past the text.
    expect(() =>
      new Dataset(
        crafted((b) => b.writeUInt32LE(0xfffffff0, at.places + 4)),
        'text',
      ).verify(),
    ).toThrow(/places row 0 refers to text/);
    // A second part of the text (values not all ASCII) that decodes to another length than the header's.
    const short = new Dataset(
      crafted((b) => b.writeUInt32LE(b.readUInt32LE(12 + 4 * 9) + 1, 12 + 4 * 9)),
      'units',
    );
    expect(() => short.verify()).toThrow(/its text is/);
  });

  /** What a crafted file with its checksum made again does at verify(): refused, naming the defect. */
  const refuses = (what: string, f: (b: Buffer) => void, message: RegExp) => {
    const ds = new Dataset(crafted(f), what);
    expect(() => ds.verify(), what).toThrow(InvalidDatasetError);
    expect(() => ds.verify(), what).toThrow(message);
  };

  it('refuses at verify() an index that does not find the ranges, even one that opens', () => {
    const c = readCounts(good);
    // Every block but the last says it starts at range 0: opens (the ends are right), and every IPv4 address would answer the first range.
    expect([c.bits4, c.bits6]).toEqual([indexBits(c.v4), indexBits(c.v6)]);
    refuses('zero index', (b) => b.fill(0, at.index4, at.index4 + (1 << c.bits4) * 4), /IPv4 index says block/);
    refuses('zero v6 index', (b) => b.fill(0, at.index6, at.index6 + (1 << c.bits6) * 4), /IPv6 index says block/);
    refuses('starts out of order', (b) => b.writeUInt32LE(0xffffffff, at.starts4 + 4), /IPv4 range \d+ does not start after/);
    refuses(
      'v6 starts out of order',
      (b) => b.writeUInt32LE(0xffffffff, at.starts6 + 16 * (c.v6 - 2)),
      /IPv6 range .* does not start after/,
    );
    refuses(
      'route prefix past 32',
      (b) => b.writeUInt32LE((b.readUInt32LE(at.refs4 + 4 * (c.v4 - 1)) & ~255) | 33, at.refs4 + 4 * (c.v4 - 1)),
      /prefix of 33 bits|route where/,
    );
  });

  it('refuses at verify() rows that would write a record that is not JSON', () => {
    // A zone name the runtime does not know: every lookup there would throw.
    const meta = at.meta;
    const metaText = good.toString('utf8', meta, good.length);
    const zone = JSON.parse(metaText).zones[0] as string;
    refuses(
      'zone',
      (b) => b.write(metaText.replace(JSON.stringify(zone), JSON.stringify('X'.repeat(zone.length))), meta, 'utf8'),
      /zone "X+" is not a time zone/,
    );
    // Rules the clock could not answer from: periods ending out of order, an offset of a day.
    const withRules = (edit: (r: { o: number[]; u: number[] }) => void) => (b: Buffer) => {
      const m = JSON.parse(metaText);
      edit(m.timeZones.rules.find((r: { u: number[] }) => r.u.length > 1));
      // Room for a longer text within the section.
      m.builtAt = '';
      b.write(JSON.stringify(m).padEnd(metaText.length), meta, 'utf8');
    };
    refuses(
      'rules out of order',
      withRules((r) => r.u.reverse()),
      /rules of zone .* are not well formed/,
    );
    refuses(
      'offset of a day',
      withRules((r) => void (r.o[0] = 1440)),
      /rules of zone .* are not well formed/,
    );
    const ds = new Dataset(good, 'good');
    // A city's text with its first quote taken out: the record's text would not parse.
    const city = ds.places.findIndex((v, i) => i % PLACE === PL.city && v < OTHER);
    refuses('place', (b) => void (b[at.ascii + ds.places[city]] = 0x20), /places row .* refers to text that is not a JSON value/);
    // A threat object cut short, and one that is another JSON value (a location's latitude).
    refuses('threat', (b) => void (b[at.ascii + ds.threats[THR.object]] = 0x5b), /threats row 0 refers to text that is not a JSON value/);
    refuses(
      'threat number',
      (b) => {
        b.writeUInt32LE(ds.locations[LOC.latitude], at.threats + THR.object * 4);
        b.writeUInt32LE(ds.locations[LOC.latitude + 1], at.threats + (THR.object + 1) * 4);
      },
      /threat row 0 is not a JSON object/,
    );
    // A network's text as a value of another kind: a number where a string without escapes is said.
    const row = ds.networks.findIndex((v, i) => i % NETWORK === NET.name && v !== NO_STRING);
    refuses(
      'name',
      (b) => b.writeUInt32LE(ds.locations[LOC.latitude], at.networks + row * 4),
      /networks row .* refers to text that is not a JSON value/,
    );
  });

  it('refuses at verify() a part that is not its row values rendered, wherever it differs', () => {
    const ds = new Dataset(good, 'good');
    const checked: string[] = [];
    for (const c of PART_COLUMNS) {
      const width = TABLES[c.table].length;
      const rows = ds[c.table];
      // A row with a part (a network without asn has empty ones; these networks have no carrier), and a byte of it, or its end, or its start moved.
      const r = Array.from({ length: rows.length / width }, (_, i) => i).find((i) => rows[i * width + c.at + 1] > rows[i * width + c.at]);
      if (r === undefined) continue;
      checked.push(`${c.table} ${c.at}`);
      const [start, end] = [rows[r * width + c.at], rows[r * width + c.at + 1]];
      const word = at[c.table] + (r * width + c.at) * 4;
      const where = new RegExp(`${c.table} row ${r} has a part that is not its values rendered`);
      refuses(`${c.table} part byte`, (b) => void (b[at.parts + Math.floor((start + end) / 2)] ^= 0x01), where);
      refuses(`${c.table} part end`, (b) => b.writeUInt32LE(end - 1, word + 4), where);
      refuses(`${c.table} part start`, (b) => b.writeUInt32LE(start + 4, word), where);
      refuses(`${c.table} part past the section`, (b) => b.writeUInt32LE(ds.partBytes.length + 8, word + 4), where);
      refuses(
        `${c.table} part said to be ASCII or not wrongly`,
        (b) => b.writeUInt32LE((b.readUInt32LE(word + 4) ^ PART_UTF8) >>> 0, word + 4),
        where,
      );
    }
    expect(checked.length).toBe(PART_COLUMNS.length - 1);
  });
});
