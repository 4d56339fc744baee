/**
 * A feed configuration over the real lists of ../shared/data/feeds, with the
 * categories and exceptions of the default configuration.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseThreatConfig, type ThreatConfig } from '../../src/compile/feeds/config.js';
import { SHARED_DATA } from './env.js';

const base = (file: string) => file.replace(/\.\w+$/, '');
/** A FireHOL-style list (`<dir>/<file>`) of a category, as a named blocklist. */
const firehol = (dir: string, category: string) => (file: string) => ({
  name: base(file),
  source: `${dir}/${file}`,
  format: 'list',
  categories: [category],
  blocklist: { name: base(file), site: `https://iplists.firehol.org/?ipset=${base(file)}`, type: 'general' },
});

export const SHARED_FEEDS = [
  { name: 'tor_csv', source: 'tor/TorExitNodes.csv', format: 'csv', categories: ['tor'], options: { column: 'ExitIP' } },
  { name: 'tor_exits', source: 'tor/tor_exits.ipset', format: 'list', categories: ['tor'] },
  { name: 'tor_exits_30d', source: 'tor/tor_exits_30d.ipset', format: 'list', categories: ['tor'] },
  { name: 'monosans_all', source: 'proxy/monosans/all.txt', format: 'list', categories: ['proxy'] },
  { name: 'monosans_http', source: 'proxy/monosans/http.txt', format: 'list', categories: ['proxy'] },
  { name: 'socks_proxy_30d', source: 'proxy/socks_proxy_30d.ipset', format: 'list', categories: ['proxy'] },
  { name: 'sslproxies_30d', source: 'proxy/sslproxies_30d.ipset', format: 'list', categories: ['proxy'] },
  { name: 'google_one_vpn', source: 'vpn/GoogleOneVPNIPRanges.csv', format: 'csv', categories: ['vpn'], options: { column: 'IPRange' } },
  { name: 'protonvpn_exits', source: 'vpn/ProtonVPNExitNodes.csv', format: 'csv', categories: ['vpn'], options: { column: 'ExitIP' } },
  ...['airvpn', 'ivpn', 'mullvad', 'nordvpn', 'ovpn', 'pia', 'protonvpn', 'riseupvpn', 'surfshark', 'windscribe'].map((p) => ({
    name: `vpn_${p}`,
    source: `vpn/open-source-vpn-ip-lists/${p}.txt`,
    format: 'list',
    categories: ['vpn'],
  })),
  { name: 'x4bnet_vpn_ipv4', source: 'vpn/x4bnet/ipv4.txt', format: 'list', categories: ['vpn'], except: ['icloud_relay', 'tor'] },
  { name: 'x4bnet_vpn_ipv6', source: 'vpn/x4bnet/ipv6.txt', format: 'list', categories: ['vpn'], except: ['icloud_relay', 'tor'] },
  { name: 'icloud_relay', source: 'relay/icloud-private-relay-iplist/ip-ranges.txt', format: 'list', categories: ['icloud_relay'] },
  { name: 'icloud_relay_v4', source: 'relay/ipranges-apple-proxy/ipv4.txt', format: 'list', categories: ['icloud_relay'] },
  { name: 'aws', source: 'datacenter/cloud-ip-ranges/aws-ip-ranges.json', format: 'aws-json', categories: ['datacenter'] },
  {
    name: 'google_cloud',
    source: 'datacenter/cloud-ip-ranges/google-cloud-ip-ranges.json',
    format: 'gcp-json',
    categories: ['datacenter'],
  },
  { name: 'azure', source: 'datacenter/cloud-ip-ranges/microsoft-azure-ip-ranges.json', format: 'azure-json', categories: ['datacenter'] },
  {
    name: 'oracle_cloud',
    source: 'datacenter/cloud-ip-ranges/oracle-cloud-ip-ranges.json',
    format: 'oracle-json',
    categories: ['datacenter'],
  },
  { name: 'cloudflare_ipv4', source: 'datacenter/cloud-ip-ranges/cloudflare-v4-ip-ranges.txt', format: 'list', categories: ['datacenter'] },
  { name: 'cloudflare_ipv6', source: 'datacenter/cloud-ip-ranges/cloudflare-v6-ip-ranges.txt', format: 'list', categories: ['datacenter'] },
  {
    name: 'digitalocean',
    source: 'datacenter/cloud-ip-ranges/digitalocean.csv',
    format: 'csv',
    categories: ['datacenter'],
    options: { column: 0, header: false },
  },
  {
    name: 'linode',
    source: 'datacenter/cloud-ip-ranges/linode.txt',
    format: 'csv',
    categories: ['datacenter'],
    options: { column: 0, header: false },
  },
  {
    name: 'ipcat',
    source: 'datacenter/ipcat/datacenters.csv',
    format: 'range-csv',
    categories: ['datacenter'],
    options: { header: false },
  },
  {
    name: 'ipranges_ipv4',
    source: 'datacenter/ipranges/all/ipv4_merged.txt',
    format: 'list',
    categories: ['datacenter'],
    except: ['icloud_relay'],
  },
  {
    name: 'ipranges_ipv6',
    source: 'datacenter/ipranges/all/ipv6_merged.txt',
    format: 'list',
    categories: ['datacenter'],
    except: ['icloud_relay'],
  },
  {
    name: 'x4bnet_datacenter_ipv4',
    source: 'datacenter/x4bnet/ipv4.txt',
    format: 'list',
    categories: ['datacenter'],
    except: ['icloud_relay'],
  },
  {
    name: 'x4bnet_datacenter_ipv6',
    source: 'datacenter/x4bnet/ipv6.txt',
    format: 'list',
    categories: ['datacenter'],
    except: ['icloud_relay'],
  },
  ...[
    'c2_tracker.ipset',
    'dshield.netset',
    'et_block.netset',
    'et_compromised.ipset',
    'feodo.ipset',
    'feodo_badips.ipset',
    'firehol_level2.netset',
    'firehol_level3.netset',
    'firehol_webclient.netset',
    'spamhaus_drop.netset',
    'spamhaus_edrop.netset',
  ].map(firehol('attacker', 'attacker')),
  { ...firehol('attacker', 'attacker')('firehol_level1.netset'), except: ['bogon'] },
  { name: 'spamhaus_drop_raw', source: 'attacker/spamhaus-raw/drop.txt', format: 'list', categories: ['attacker'] },
  { name: 'spamhaus_edrop_raw', source: 'attacker/spamhaus-raw/edrop.txt', format: 'list', categories: ['attacker'] },
  {
    name: 'ipsum',
    source: 'attacker/ipsum/ipsum.txt',
    format: 'list',
    categories: ['attacker'],
    options: { minHits: 3 },
    blocklist: { name: 'ipsum', site: 'https://github.com/stamparm/ipsum', type: 'general' },
  },
  ...[
    'blocklist_de.ipset',
    'blocklist_de_bots.ipset',
    'blocklist_de_mail.ipset',
    'blocklist_de_ssh.ipset',
    'botscout_30d.ipset',
    'bruteforceblocker.ipset',
    'ciarmy.ipset',
    'cleantalk_7d.ipset',
    'firehol_abusers_1d.netset',
    'firehol_abusers_30d.netset',
    'greensnow.ipset',
    'maltrail_scanners.ipset',
    'php_spammers_30d.ipset',
    'stopforumspam_7d.ipset',
    'stopforumspam_toxic.netset',
  ].map(firehol('abuser', 'abuser')),
  // FireHOL level 4 lives with the attacker lists but counts as abuser (wide, with false positives).
  firehol('attacker', 'abuser')('firehol_level4.netset'),
  { name: 'cidr_report_bogons', source: 'bogon/cidr_report_bogons.netset', format: 'list', categories: ['bogon'] },
  { name: 'fullbogons_ipv4', source: 'bogon/fullbogons-ipv4.txt', format: 'list', categories: ['bogon'] },
  { name: 'fullbogons_ipv6', source: 'bogon/fullbogons-ipv6.txt', format: 'list', categories: ['bogon'] },
] as const;

/** The shared feeds as a configuration file states them: absolute sources, FireHOL's `includes` from their headers. */
export const sharedFeeds = () => SHARED_FEEDS.map((f) => ({ ...withIncludes(f), source: join(SHARED_DATA, 'feeds', f.source) }));

export function sharedFeedConfig(): ThreatConfig {
  return parseThreatConfig({ feeds: sharedFeeds() }, join(SHARED_DATA, 'feeds'));
}

/**
 * A FireHOL list's `includes`: the lists its header names, "(includes:
 * dshield feodo fullbogons spamhaus_drop)", loaded here or not, a window
 * of a list named as the list (dshield_1d and dshield_30d are DShield's:
 * one origin).
 */
function withIncludes<F extends { name: string; source: string }>(f: F): F & { includes?: string[] } {
  if (!/\.(net|ip)set$/.test(f.source)) return f;
  const head = readFileSync(join(SHARED_DATA, 'feeds', f.source), 'utf8')
    .slice(0, 2000)
    .replace(/\n#/g, ' ');
  const named = /\(includes:([^)]*)\)/.exec(head)?.[1].split(/\s+/) ?? [];
  const includes = [...new Set(named.filter((n) => n !== '').map((n) => n.replace(/_\d+d$/, '')))];
  return includes.length === 0 ? f : { ...f, includes };
}
