/**
 * CSV cells of chosen paths (`iprecord enrich`'s CSV): each path compiled
 * once into a writer of its cell (`csvField` of its value). Where the
 * dataset holds the value's JSON text (strings, numbers, the threat
 * object), the cell is written from those bytes; `asn` and `time_zone`
 * from their JSON written as the record's is; a country's values from its
 * cells; anything else from the value its reader reads (`select.ts`).
 */

import { ByteWriter } from '../text/writer.js';
import { LOCATION_MEMBERS, RECORD_TEMPLATE, type LocationMember, type RecordMember } from '../contract/template.js';
import { csvField } from '../text/csv.js';
import { CARRIER_AT, COUNTRY_VALUES, LOC, NET, NO_ZONE, PL, RECORD, THR, THREAT } from '../dataset/format.js';
import { ByteSink, writeAsn } from './render.js';
import { country, hasCarrier, loc, momentOf, net, pathReader, place, routed, type Reading } from './select.js';

type CellWriter = (r: Reading, out: ByteWriter) => void;

/** Where a location row holds each of its members (`LOCATION_MEMBERS`). */
const LOCATION_AT = Object.fromEntries(LOCATION_MEMBERS.map((k) => [k, LOC[k]])) as Record<LocationMember, number>;

/**
 * The writer of a path's CSV cell (`csvField` of its value): from the JSON
 * text of the value where the dataset holds it (strings, numbers, the
 * threat object), from the JSON of `asn` and `time_zone` written into
 * `json`, from a country's cells; else from the value read.
 * @throws InvalidFieldError when the record has no such member
 */
function cellWriter(path: string, json: JsonCell): CellWriter {
  const read = pathReader(path);
  const [m, sub, ...deeper] = path.split('.') as [RecordMember, string | undefined, ...string[]];
  if (sub === undefined) {
    switch (RECORD_TEMPLATE[m]) {
      case 'places': {
        const at = PL[m as keyof typeof PL];
        return (r, out) => r.ds.writeCsv(r.ds.places, place(r) + at, out);
      }
      case 'locations': {
        const at = LOCATION_AT[m as keyof typeof LOCATION_AT];
        return (r, out) => r.ds.writeCsv(r.ds.locations, loc(r) + at, out);
      }
      case 'countries': {
        const i = (COUNTRY_VALUES as readonly string[]).indexOf(m);
        if (i >= 0) return (r, out) => out.bytes(country(r).cells[i]);
        break;
      }
      case 'threats':
        return (r, out) =>
          r.ds.writeCsv(r.ds.threats, r.ds.records[(r.ref >>> 8) * RECORD + 2] * THREAT + (r.basic ? THR.basic : THR.object), out);
      case 'clock':
        return (r, out) => {
          const zone = r.ds.locations[loc(r) + LOC.zone];
          if (zone !== NO_ZONE) json.cell(out, (w) => r.clock.writeTimeZone(r.ds.meta.zones[zone], momentOf(r), w.out));
        };
      case 'networks':
        if (m === 'asn')
          return (r, out) => {
            const n = net(r);
            if (routed(r, n)) json.cell(out, (w) => writeAsn(r.ds, n, r.version, r.words, r.ref & 255, w));
          };
    }
  } else if (deeper.length === 0 && m === 'asn' && sub !== 'route') {
    const at = NET[sub as 'asn' | 'name' | 'domain' | 'type'];
    return (r, out) => {
      const n = net(r);
      if (routed(r, n)) r.ds.writeCsv(r.ds.networks, n + at, out);
    };
  } else if (m === 'carrier') {
    const at = CARRIER_AT[sub as keyof typeof CARRIER_AT];
    return (r, out) => {
      const n = net(r);
      if (hasCarrier(r, n)) r.ds.writeCsv(r.ds.networks, n + at, out);
    };
  }
  return (r, out) => out.text(csvField(read(r)));
}

/** A value's JSON written into a buffer of its own, then written out as a CSV cell. */
class JsonCell {
  private readonly sink = new ByteSink();

  constructor() {
    this.sink.out = new ByteWriter(1024);
  }

  cell(out: ByteWriter, write: (sink: ByteSink) => void): void {
    const w = this.sink.out;
    w.used = 0;
    write(this.sink);
    out.csvJson(w.buf, 0, w.used);
  }
}

/**
 * The CSV cells of paths (as given: a path twice is two cells), each after
 * a comma, written by their writers (no record, no row of values).
 * @throws InvalidFieldError naming a path the record has not
 */
export function compileCells(paths: readonly string[]): (r: Reading, out: ByteWriter) => void {
  const json = new JsonCell();
  const writers = paths.map((p) => cellWriter(p.trim(), json));
  return (r, out) => {
    for (let i = 0; i < writers.length; i++) {
      out.latin1(',');
      writers[i](r, out);
    }
  };
}
