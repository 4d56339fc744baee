/**
 * Typed errors. Every error carries the hosted service's `status` and its
 * exact message (CONTRACT.md, "Errors"); `code` tells the causes apart.
 */

export type IprecordErrorCode =
  | 'INVALID_IP'
  | 'PRIVATE_IP'
  | 'RESERVED_IP'
  | 'INVALID_FIELD'
  | 'INVALID_BULK'
  | 'INVALID_DATASET'
  | 'INVALID_OPTIONS'
  | 'EXPORT_FAILED'
  | 'CLOSED';

export interface ErrorOptions {
  cause?: unknown;
}

/** Base class of every error iprecord throws. */
export class IprecordError extends Error {
  readonly code: IprecordErrorCode;
  readonly status: number;

  constructor(message: string, code: IprecordErrorCode, status: number, options?: ErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = status;
  }

  /** The service's error body: `{ "message": ... }`. */
  toJSON(): { message: string } {
    return { message: this.message };
  }
}
IprecordError.prototype.name = 'IprecordError';

// The messages of the address errors, also given without an error where bad addresses come by the
// thousand and only the message is kept (iprecord enrich, Engine.tryLookup). The address errors carry no
// stack trace: they say what is wrong with the input, not where, and capturing one cost four times a
// lookup (3.6-4.3 µs against 0.9 µs a thrown and caught PrivateIpError; bench/README.md).
export const invalidIpMessage = (input: unknown): string => `${describeInput(input)} does not appear to be an IPv4 or IPv6 address`;
export const privateIpMessage = (ip: string): string => `${ip} is a private IP address`;
export const reservedIpMessage = (ip: string): string => `${ip} is a reserved IP address.`;

/** An address that has no record (status 400), made without a stack trace (see above). */
export class AddressError extends IprecordError {
  constructor(message: string, code: IprecordErrorCode, options?: ErrorOptions) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message, code, 400, options);
    Error.stackTraceLimit = limit;
  }
}

/** Input is not an IPv4 or IPv6 address (status 400). */
export class InvalidIpError extends AddressError {
  constructor(input: unknown, options?: ErrorOptions) {
    super(invalidIpMessage(input), 'INVALID_IP', options);
  }
}
InvalidIpError.prototype.name = 'InvalidIpError';

/** Address in a private range: RFC 1918, loopback, link-local, ULA, shared (status 400). */
export class PrivateIpError extends AddressError {
  constructor(ip: string, options?: ErrorOptions) {
    super(privateIpMessage(ip), 'PRIVATE_IP', options);
  }
}
PrivateIpError.prototype.name = 'PrivateIpError';

/** Address in another special-purpose range: multicast, documentation, 0/8, 240/4 (status 400). */
export class ReservedIpError extends AddressError {
  constructor(ip: string, options?: ErrorOptions) {
    super(reservedIpMessage(ip), 'RESERVED_IP', options);
  }
}
ReservedIpError.prototype.name = 'ReservedIpError';

/** Unknown field name (status 400). */
export class InvalidFieldError extends IprecordError {
  constructor(field: unknown, options?: ErrorOptions) {
    super(`${describeInput(field)} is not a valid field.`, 'INVALID_FIELD', 400, options);
  }
}
InvalidFieldError.prototype.name = 'InvalidFieldError';

/** Bulk input is not an array of strings (status 400). */
export class InvalidBulkError extends IprecordError {
  constructor(options?: ErrorOptions) {
    super('You did not provide a valid JSON Array.', 'INVALID_BULK', 400, options);
  }
}
InvalidBulkError.prototype.name = 'InvalidBulkError';

/** A database or dataset file is missing, corrupt or of an unknown schema (status 500). */
export class InvalidDatasetError extends IprecordError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, 'INVALID_DATASET', 500, options);
  }
}
InvalidDatasetError.prototype.name = 'InvalidDatasetError';

/** Options given to `open()` are not valid (status 500). */
export class InvalidOptionsError extends IprecordError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, 'INVALID_OPTIONS', 500, options);
  }
}
InvalidOptionsError.prototype.name = 'InvalidOptionsError';

/** An export could not write its file (status 500); the message names the file, `cause` holds the system's error. */
export class ExportError extends IprecordError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, 'EXPORT_FAILED', 500, options);
  }
}
ExportError.prototype.name = 'ExportError';

/** The engine was closed (status 500). */
export class ClosedError extends IprecordError {
  constructor() {
    super('The engine is closed.', 'CLOSED', 500);
  }
}
ClosedError.prototype.name = 'ClosedError';

const CODES: ReadonlySet<string> = new Set<IprecordErrorCode>([
  'INVALID_IP',
  'PRIVATE_IP',
  'RESERVED_IP',
  'INVALID_FIELD',
  'INVALID_BULK',
  'INVALID_DATASET',
  'INVALID_OPTIONS',
  'CLOSED',
]);

/**
 * True for any iprecord error, also across the ESM and CommonJS copies of the
 * package (where `instanceof` fails), by its `code` and `status`.
 */
export function isIprecordError(value: unknown): value is IprecordError {
  if (value instanceof IprecordError) return true;
  if (!(value instanceof Error)) return false;
  const v = value as Partial<IprecordError>;
  return typeof v.code === 'string' && CODES.has(v.code) && typeof v.status === 'number';
}

/** Strings are echoed as they are; other values by their JSON form or type. */
function describeInput(input: unknown): string {
  if (typeof input === 'string') return input;
  if (input === undefined) return 'undefined';
  try {
    const json = JSON.stringify(input);
    return json === undefined ? String(input) : json;
  } catch {
    return typeof input;
  }
}
