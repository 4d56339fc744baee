export { parseIpInto, parseV4, type IpVersion } from './parse.js';
export { formatIp, formatV4, formatV6, formatCidr, maskWords } from './format.js';
export { parseIp, canonicalIp, parseCidr, type Address } from './address.js';
export { specialTable, classify, specialName, SpecialKind, type SpecialTable } from './special.js';
