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
