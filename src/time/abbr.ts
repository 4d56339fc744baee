/** How far ahead the next offset of a zone is looked for, in days (`time/zone.ts`, `scripts/gen-tz-abbrs.ts`). */
export const HORIZON_DAYS = 400;

/**
 * The tz database's numeric abbreviation of an offset: `-03`, `+0530`,
 * `+00`. Zones without a customary letter abbreviation use this form.
 */
export function numericAbbreviation(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const h = Math.floor(abs / 60);
  const m = abs % 60;
  return sign + pad2(h) + (m === 0 ? '' : pad2(m));
}

/** `+HHMM` (the contract's `time_zone.offset`). */
export function offsetHhmm(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return sign + pad2(Math.floor(abs / 60)) + pad2(abs % 60);
}

/** `+HH:MM` (the offset inside `current_time`). */
export function offsetColon(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return sign + pad2(Math.floor(abs / 60)) + ':' + pad2(abs % 60);
}

export function pad2(n: number): string {
  return n < 10 ? '0' + n : String(n);
}
