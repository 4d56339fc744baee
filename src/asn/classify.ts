/**
 * `asn.type` from the organisation name, by the first rule that matches:
 *
 * 1. hosting: datacenter, cloud, CDN and server-hosting networks (names with
 *    hosting, cloud, datacenter, server, VPS, colocation, CDN, or the name of
 *    a large cloud or hosting provider);
 * 2. education: universities, colleges, schools, research and education
 *    networks;
 * 3. government: governments, ministries, agencies, armed forces, public
 *    administrations;
 * 4. isp: access and transit providers (telecom, broadband, cable, mobile,
 *    internet, fibre, network services);
 * 5. business: any other named organisation.
 *
 * A network without a name has no type (null). `is_datacenter` is true for
 * `hosting`. The rules read names only; they are a heuristic, and a network
 * whose name says nothing of its business falls under `business`.
 */

import type { AsnType } from '../types.js';

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
    'cogent',
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
const EDUCATION = /universit|college|school|academ|educat|\bedu\b|research (?:and education )?network|institute of technology|polytechnic|\bnren\b|janet|renater|\bdfn\b|internet2/i;
const GOVERNMENT =
  /government|\bgov\b|ministry|ministere|ministerio|department of|federal|agency|parliament|\barmy\b|air force|\bnavy\b|military|defen[cs]e|police|municipal|city of|county of|state of|public administration|bundes/i;
const ISP =
  /telecom|telekom|communicat|broadband|cable|mobile|wireless|cellular|internet|\bisp\b|fib(?:er|re)|\bdsl\b|\bnet(?:work)?s?\b|networks|telco|\btel\b|telefon|telephone|vodafone|orange|comcast|verizon|at&t|charter|spectrum|t-mobile|carrier|transit|backbone|online|provider|\bip\b/i;

/** The type of an organisation name (see the module comment). */
export function classifyAsn(name: string | null): AsnType | null {
  if (name === null || name === '') return null;
  if (HOSTING.test(name)) return 'hosting';
  if (EDUCATION.test(name)) return 'education';
  if (GOVERNMENT.test(name)) return 'government';
  if (ISP.test(name)) return 'isp';
  return 'business';
}
