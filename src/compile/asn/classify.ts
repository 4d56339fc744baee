/**
 * `asn.type` from the organisation name.
 *
 * First the names of organisations whose names do not say what they do
 * (`BRANDS`: carriers such as Chinanet, KDDI or Telia, research networks
 * such as SURF or Jisc, hosts such as The Constant Company, which is
 * Vultr); then, by the first rule that matches, words:
 *
 * 1. hosting: datacenter, cloud, CDN and server-hosting networks (hosting,
 *    cloud, datacenter, server, VPS, colocation, CDN, or a large cloud or
 *    hosting provider's name);
 * 2. education: universities, colleges, schools, research and education
 *    networks;
 * 3. government: governments, ministries, agencies, armed forces, public
 *    administrations;
 * 4. isp: access and transit carriers (telecom, broadband, cable, mobile,
 *    internet, fibre, network services);
 * 5. business: any other named organisation.
 *
 * A network without a name has no type (null). `is_datacenter` is true for
 * `hosting`. The rules read names only: a heuristic, measured against a
 * reference list of 305 networks with their sources
 * (fixtures/reference/networks.tsv; the test prints the figures). A
 * compile weighs what the data says where the name states nothing
 * (`evidence.ts`): a network spread over many places is an access carrier.
 */

import type { AsnType } from '../../contract/types.js';

/** Organisations by name, for those whose names do not say what they do. */
const BRANDS: readonly (readonly [RegExp, AsnType])[] = [
  // Before "google" (hosting) and "network" (isp).
  [/google fiber/i, 'isp'],
  [/ripe network coordination/i, 'business'],
  [
    new RegExp(
      [
        'chinanet',
        'digicel',
        'telstra',
        '\\btelia\\b',
        '\\btelkom\\b',
        'softbank',
        'kddi',
        'telmex',
        '^uninet s\\.a',
        '\\blg (?:powercomm|dacom)',
        '\\btim s/a',
        '^free sas',
        'virgin media',
        '\\bvnpt\\b',
        '^te-as$',
        '\\bkpn\\b',
        'wind tre',
        'sky uk',
        'bell canada',
        'etisalat',
        'itissalat',
        'bharat sanchar',
        'optus',
        '\\btdc\\b',
        '\\bclaro\\b',
        'viettel',
        '\\bntt\\b',
        '\\bjcom\\b',
        'comcel',
        'reliance jio',
        'proximus',
        'airtel',
        '^rcn$',
        'biglobe',
        'swisscom',
        'fastweb',
        'tm technology services',
        '^v tal$',
        'indosat',
        'optage',
        'brightspeed',
        'videotron',
        '\\bmtn\\b',
        'cantv',
        'ooredoo',
        'sunrise gmbh',
        'freebit',
        'turkcell',
        'vimpelcom',
        '^dna oyj',
        '^meo\\b',
        'vodacom',
        'versatel',
        'globalconnect',
        'odido',
        'pccw',
        '^digi\\b',
        'safaricom',
        '^cell c\\b',
        '^netia\\b',
        '^p4 sp',
        '^mts pjsc',
        'zayo',
        'hurricane electric',
        'arelion',
        'liberty global',
        'cogent',
      ].join('|'),
      'i',
    ),
    'isp',
  ],
  [
    /forschungsnetz|^surf b\.?v|^jisc\b|consortium garr|^switch$|heanet|^esnet$|geant|nordunet|canarie|ensino e pesquisa|cesnet|^belnet$|tieteen tietotekniikan|^mcnc$|^cenic$|merit network|research organization of information/i,
    'education',
  ],
  [/\bdod\b|usaisc|^usda$|postal service|aeronautics and space|egovnet/i, 'government'],
  [
    /constant company|huawei (?:international|cloud)|unified layer|interserver|b2 net solutions|clouvider|latitude\.sh|^uk-2\b|hivelocity|xneelo|hostdime|wowrack|volcano engine/i,
    'hosting',
  ],
];

const HOSTING = new RegExp(
  [
    'hosting',
    'host\\b',
    'cloud',
    'data ?cent(?:er|re)',
    'datacenter',
    '\\bserver',
    'vps\\b',
    'colo(?:cation)?\\b',
    '\\bcdn\\b',
    'amazon',
    '\\baws\\b',
    'google',
    'microsoft',
    'azure',
    'oracle',
    'alibaba',
    'tencent',
    'digitalocean',
    'linode',
    'akamai',
    'cloudflare',
    'fastly',
    'ovh',
    'hetzner',
    'leaseweb',
    'choopa',
    'vultr',
    'contabo',
    'scaleway',
    'online s\\.?a\\.?s',
    'ionos',
    'godaddy',
    'rackspace',
    'softlayer',
    'hostinger',
    'namecheap',
    'dreamhost',
    'kamatera',
    'upcloud',
    'm247',
    'datacamp',
    'equinix',
    'limestone',
    'psychz',
    'quadranet',
    'servers\\.com',
    'selectel',
    'timeweb',
    'hostwinds',
    'zenlayer',
    'g-core',
    'gcore',
    'stackpath',
    'edgecast',
    'incapsula',
    'imperva',
    'sucuri',
    'wix',
    'squarespace',
    'shopify',
    'heroku',
    'netlify',
    'vercel',
    'fly\\.io',
  ].join('|'),
  'i',
);
const EDUCATION =
  /universit|universidad|h[oö]gskola|hochschule|hogeschool|college|school|academ|educat|\bedu\b|research (?:and education )?network|institute of technology|polytechnic|\bnren\b|janet|renater|\bdfn\b|internet2/i;
const GOVERNMENT =
  /government|\bgov\b|ministry|ministere|ministerio|department of|federal|agency|parliament|\barmy\b|air force|\bnavy\b|military|defen[cs]e|police|municipal|city of|county of|state of|public administration|bundes|\bregione\b/i;
const EDUCATION_AUTHORITY = /(?:office|board|ministry|department) of (?:public )?education/i;
const ISP =
  /telecom|svyaz|multimidia|\blan\b|connect\b|kone[kc]si|transmission|telekom|\btele(?!vision|performance)|communicat|comunica|iletisim|broadband|bandwidth|cable|mobile|\bmovil|celular|wireless|cellular|internet|infocomm|\bisp\b|fib(?:er|re)|\bdsl\b|\bnet(?:work)?s?\b|networks|telco|\btel\b|telefon|telephone|vodafone|orange|comcast|verizon|at&t|charter|spectrum|t-mobile|carrier|transit|backbone|online|provider|\bip\b/i;

/** The type an organisation name states by its words alone, without `BRANDS`; null when no word says (see the module comment). */
export function wordsType(name: string): AsnType | null {
  if (HOSTING.test(name)) return 'hosting';
  // An education authority is a government body ("Office of Education"), before the word education.
  if (EDUCATION_AUTHORITY.test(name)) return 'government';
  if (EDUCATION.test(name)) return 'education';
  if (GOVERNMENT.test(name)) return 'government';
  if (ISP.test(name)) return 'isp';
  return null;
}

/** The type of an organisation name by its words alone, without `BRANDS`: `business` when no word says. */
export function classifyByWords(name: string): AsnType {
  return wordsType(name) ?? 'business';
}

/** The type a name states, by `BRANDS` then words; null when it states none (nor is empty). */
export function namedType(name: string): AsnType | null {
  for (const [pattern, type] of BRANDS) if (pattern.test(name)) return type;
  return wordsType(name);
}

/** The type of an organisation name (see the module comment): what it states, else `business`; null without a name. */
export function classifyAsn(name: string | null): AsnType | null {
  return nameRule(name)?.type ?? null;
}

/** The type of an organisation name and what gave it: a brand's name, a word of it, or neither (`business`); null without a name. */
export function nameRule(name: string | null): { type: AsnType; rule: 'brand' | 'name' | 'default' } | null {
  if (name === null || name === '') return null;
  for (const [pattern, type] of BRANDS) if (pattern.test(name)) return { type, rule: 'brand' };
  const worded = wordsType(name);
  return worded === null ? { type: 'business', rule: 'default' } : { type: worded, rule: 'name' };
}
