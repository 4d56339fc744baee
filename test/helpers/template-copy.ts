/**
 * A copy of the record's template with one member more, for a `vi.mock`
 * of `src/contract/template.ts`: the member entered after `after`, and the
 * member lists derived from the template as the module derives them.
 */

type Template = typeof import('../../src/contract/template.js');

export function withMember(t: Template, member: string, after: string, source: string): Template {
  const entries = Object.entries(t.RECORD_TEMPLATE);
  const at = entries.findIndex(([k]) => k === after) + 1;
  const RECORD_TEMPLATE = Object.fromEntries([...entries.slice(0, at), [member, source], ...entries.slice(at)]) as Record<string, string>;
  const RECORD_MEMBERS = Object.freeze(Object.keys(RECORD_TEMPLATE));
  const of = (from: string) => Object.freeze(RECORD_MEMBERS.filter((k) => RECORD_TEMPLATE[k] === from));
  return { ...t, RECORD_TEMPLATE, RECORD_MEMBERS, PLACE_MEMBERS: of('places'), LOCATION_MEMBERS: of('locations') } as unknown as Template;
}
