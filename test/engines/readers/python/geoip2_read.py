"""Reads addresses (one a line on standard input) from MMDB files with
MaxMind's typed Python reader (geoip2), through the method of each file's
schema (city, asn, anonymous_ip, enterprise); prints one JSON line an
address: per schema the members its model gives, or null where the reader
finds no record or refuses the text as an address; and whether Python's
ipaddress module takes the text as an address (`standard`).

Usage: python3 geoip2_read.py schema=file [schema=file ...] < addresses
"""

import ipaddress
import json
import sys

import geoip2.database
import geoip2.errors


def city_members(r):
    sub = r.subdivisions.most_specific
    return {
        "continent_code": r.continent.code,
        "continent_name": r.continent.name,
        "country_code": r.country.iso_code,
        "country_name": r.country.name,
        "is_eu": r.country.is_in_european_union,
        "region_code": sub.iso_code,
        "region": sub.name,
        "city": r.city.name,
        "latitude": r.location.latitude,
        "longitude": r.location.longitude,
        "time_zone": r.location.time_zone,
        "postal": r.postal.code,
    }


def anonymity(r):
    return {
        "is_anonymous": r.is_anonymous,
        "is_anonymous_vpn": r.is_anonymous_vpn,
        "is_hosting_provider": r.is_hosting_provider,
        "is_public_proxy": r.is_public_proxy,
        # Older readers (Debian 12's 2.9) have no is_residential_proxy: it is false there.
        "is_residential_proxy": getattr(r, "is_residential_proxy", False),
        "is_tor_exit_node": r.is_tor_exit_node,
    }


def trait(r, name):
    """A member of traits: the model's, else (a reader older than the member: Debian 12's 2.9) the record's own."""
    if hasattr(r.traits, name):
        return getattr(r.traits, name)
    return r.raw.get("traits", {}).get(name)


def read(schema, reader, ip):
    try:
        if schema == "city":
            return city_members(reader.city(ip))
        if schema == "asn":
            r = reader.asn(ip)
            return {"asn": r.autonomous_system_number, "asn_name": r.autonomous_system_organization}
        if schema == "anonymous-ip":
            return anonymity(reader.anonymous_ip(ip))
        r = reader.enterprise(ip)
        t = r.traits
        out = city_members(r)
        out.update(anonymity(t))
        out.update(
            {
                "asn": t.autonomous_system_number,
                "asn_name": t.autonomous_system_organization,
                "organization": t.organization,
                "domain": t.domain,
                "user_type": t.user_type,
                "connection_type": t.connection_type,
                "mobile_country_code": trait(r, "mobile_country_code"),
                "mobile_network_code": trait(r, "mobile_network_code"),
            }
        )
        return out
    except (geoip2.errors.AddressNotFoundError, ValueError):
        return None


def main():
    readers = []
    for arg in sys.argv[1:]:
        schema, path = arg.split("=", 1)
        readers.append((schema, geoip2.database.Reader(path)))
    out = sys.stdout
    for line in sys.stdin:
        ip = line.rstrip("\n")
        answer = {schema: read(schema, reader, ip) for schema, reader in readers}
        try:
            ipaddress.ip_address(ip)
            answer["standard"] = True
        except ValueError:
            # Not an address to Python's own parser; the reader's C parser may still take it (inet_aton's 8.8.8).
            answer["standard"] = False
        out.write(json.dumps(answer) + "\n")


main()
