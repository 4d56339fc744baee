/**
 * Where a location's zone came from (its row's `zoneFrom` word, an index):
 * no zone; the geo database's, a zone of the country; the one at its
 * coordinates; the country's only zone; a zone of the country found around
 * coordinates that lie just outside it; the zone of the country whose main
 * place is nearest. The dataset's location rows keep it (`dataset/layout.ts`).
 */
export const ZONE_FROM = ['none', 'data', 'coordinates', 'country', 'nearby', 'nearest'] as const;
export type ZoneFrom = (typeof ZONE_FROM)[number];
