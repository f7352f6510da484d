"""Which addresses URL inlining may connect to: public ones, plus what the user allowed.

URLs come from sample files and model outputs, which other people write. By default omk refuses
to connect to an address that is not on the public internet: loopback, private (RFC 1918,
fc00::/7), link-local (169.254.0.0/16, where cloud metadata lives, and fe80::/10), carrier-grade
NAT (100.64.0.0/10), multicast, unspecified (0.0.0.0, ::) or otherwise reserved. An IPv6 address
that carries an IPv4 one (::ffff:a.b.c.d, 6to4, Teredo, NAT64 64:ff9b::/96) is judged by the
IPv4 address it carries too. The check is made on the addresses a name resolves to, so decimal,
octal and hex spellings (2130706433, 0177.0.0.1, 0x7f.1) are caught like 127.0.0.1.

What counts as public is Python's `ipaddress` (`is_global` and its kinds), corrected where the
Python running omk lags behind IANA's special-purpose address registries: `SPECIAL_RANGES` holds
every range those registries list (IPv4 and IPv6) with whether it is globally reachable, plus the
deprecated site-local fec0::/10, and the longest range an address falls in decides. An address in
none of them is public only when Python also says it is global.

The allow-list (`url_allow:` in omk.yaml, `--url-allow`, `OMK_URL_ALLOW`) takes host names
(`wiki.corp`), subdomain patterns (`*.corp.net` or `.corp.net`), `host:port`, IP addresses
(`10.0.0.5`, `[::1]:8080`) and networks in CIDR notation (`10.0.0.0/8`, `fd00::/8`).

Stdlib only: the settings spec (omk.settings.spec) imports this to check the settings before a run starts.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import field

import msgspec

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

# IANA's IPv4 and IPv6 Special-Purpose Address Registries (and the IPv6 address space's
# deprecated site-local block): (range, what it is, globally reachable). Ranges that carry an
# IPv4 address (::ffff:0:0/96, 64:ff9b::/96, 2001::/32 Teredo, 2002::/16 6to4) are judged by that
# address first; what they are here decides for the rest.
SPECIAL_RANGES: tuple[tuple[str, str, bool], ...] = (
    ("0.0.0.0/8", "unspecified", False),
    ("10.0.0.0/8", "private", False),
    ("100.64.0.0/10", "carrier-grade NAT", False),
    ("127.0.0.0/8", "loopback", False),
    ("169.254.0.0/16", "link-local", False),
    ("172.16.0.0/12", "private", False),
    ("192.0.0.0/24", "reserved", False),  # IETF protocol assignments (DS-Lite, NAT64 discovery…)
    ("192.0.0.9/32", "anycast", True),  # Port Control Protocol anycast
    ("192.0.0.10/32", "anycast", True),  # TURN anycast
    ("192.0.2.0/24", "documentation", False),
    ("192.31.196.0/24", "anycast", True),  # AS112
    ("192.52.193.0/24", "anycast", True),  # AMT
    ("192.88.99.0/24", "reserved", False),  # the deprecated 6to4 relay anycast
    ("192.168.0.0/16", "private", False),
    ("192.175.48.0/24", "anycast", True),  # AS112 direct delegation
    ("198.18.0.0/15", "benchmarking", False),
    ("198.51.100.0/24", "documentation", False),
    ("203.0.113.0/24", "documentation", False),
    ("224.0.0.0/4", "multicast", False),
    ("240.0.0.0/4", "reserved", False),
    ("255.255.255.255/32", "broadcast", False),
    ("::/128", "unspecified", False),
    ("::1/128", "loopback", False),
    ("::ffff:0:0/96", "reserved", False),  # IPv4-mapped
    ("64:ff9b::/96", "translation", True),  # NAT64, judged by the IPv4 address it carries
    ("64:ff9b:1::/48", "private", False),  # local-use NAT64
    ("100::/64", "reserved", False),  # discard-only
    ("100:0:0:1::/64", "reserved", False),  # dummy prefix
    ("2001::/23", "reserved", False),  # IETF protocol assignments
    ("2001::/32", "translation", True),  # Teredo, judged by the IPv4 address it carries
    ("2001:1::1/128", "anycast", True),  # Port Control Protocol anycast
    ("2001:1::2/128", "anycast", True),  # TURN anycast
    ("2001:1::3/128", "anycast", True),  # DNS-SD service registration anycast
    ("2001:2::/48", "benchmarking", False),
    ("2001:3::/32", "anycast", True),  # AMT
    ("2001:4:112::/48", "anycast", True),  # AS112
    ("2001:10::/28", "reserved", False),  # ORCHID (deprecated)
    ("2001:20::/28", "overlay", True),  # ORCHIDv2
    ("2001:30::/28", "overlay", True),  # drone remote ID tags
    ("2001:db8::/32", "documentation", False),
    ("2002::/16", "translation", True),  # 6to4, judged by the IPv4 address it carries
    ("2620:4f:8000::/48", "anycast", True),  # AS112 direct delegation
    ("3fff::/20", "documentation", False),
    ("5f00::/16", "reserved", False),  # segment routing SIDs
    ("fc00::/7", "private", False),  # unique local
    ("fe80::/10", "link-local", False),
    ("fec0::/10", "site-local", False),  # deprecated, never to be routed
    ("ff00::/8", "multicast", False),
)
_SPECIAL = sorted(
    ((ipaddress.ip_network(net), kind, reachable) for net, kind, reachable in SPECIAL_RANGES),
    key=lambda entry: entry[0].prefixlen,
    reverse=True,
)
_HOST_RE = re.compile(r"^(\*\.|\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$")
# A host written as digits, dots and hex: an IPv4 address in another spelling (2130706433, 0x7f.1).
_NUMERIC_HOST_RE = re.compile(r"^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+)){0,3}$", re.IGNORECASE)


class AllowRuleError(ValueError):
    """An allow-list entry that is not a host, host:port, IP address or CIDR network."""


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]  # the client's address
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def inside_kind(ip: IPAddress) -> str | None:
    """What kind of non-public address `ip` is ("loopback", "private", …), or None if public."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            ip = ipaddress.IPv6Address(str(ip).split("%", 1)[0])
        inner = _embedded_ipv4(ip)
        if inner is not None and (kind := inside_kind(inner)) is not None:
            return kind
    special = next(((kind, reachable) for net, kind, reachable in _SPECIAL if ip.version == net.version and ip in net), None)
    if special is not None:
        return None if special[1] else special[0]
    checks = (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("carrier-grade NAT", isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT),
        ("multicast", ip.is_multicast),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
        ("reserved", not ip.is_global),
    )
    return next((kind for kind, hit in checks if hit), None)


def parse_ip(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


class AllowRule(msgspec.Struct, frozen=True, gc=False):
    text: str  # as the user wrote it, for messages
    host: str | None = None  # a lower-case name; with `subdomains`, the parent domain
    subdomains: bool = False
    network: IPNetwork | None = None
    port: int | None = None

    def allows(self, host: str, port: int, ip: IPAddress | None) -> bool:
        if self.port is not None and port != self.port:
            return False
        if self.network is not None:
            literal = parse_ip(host)
            candidate = ip if ip is not None else literal
            return candidate is not None and candidate.version == self.network.version and candidate in self.network
        name = host.lower().rstrip(".")
        assert self.host is not None
        if self.subdomains:
            return name.endswith("." + self.host)
        return name == self.host


def _split_port(text: str) -> tuple[str, int | None]:
    """`host:port`, `[v6]:port`, `v4:port`; a bare IPv6 address has no port."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise AllowRuleError(f"{text!r}: missing ']'")
        rest = text[end + 1 :]
        if rest and not (rest.startswith(":") and rest[1:].isdigit()):
            raise AllowRuleError(f"{text!r}: expected [IPv6]:PORT")
        return text[1:end], int(rest[1:]) if rest else None
    if text.count(":") == 1:
        host, _, port = text.partition(":")
        if not port.isdigit():
            raise AllowRuleError(f"{text!r}: the port must be a number")
        return host, int(port)
    return text, None


def parse_allow_rule(entry: str) -> AllowRule:
    text = entry.strip()
    if not text:
        raise AllowRuleError("empty entry")
    if "://" in text or "/" in text and not re.match(r"^[0-9a-fA-F:.]+/\d{1,3}$", text):
        if "/" in text and "://" not in text:
            raise AllowRuleError(f"{text!r}: not a CIDR network (write 10.0.0.0/8 or fd00::/8)")
        raise AllowRuleError(f"{text!r}: write the host (wiki.corp, wiki.corp:8443), not a URL")
    if "/" in text:
        try:
            return AllowRule(text, network=ipaddress.ip_network(text, strict=False))
        except ValueError as exc:
            raise AllowRuleError(f"{text!r}: {exc}") from None
    host, port = _split_port(text)
    if port is not None and not 0 < port < 65536:
        raise AllowRuleError(f"{text!r}: the port must be between 1 and 65535")
    ip = parse_ip(host)
    if ip is not None:
        return AllowRule(text, network=ipaddress.ip_network(ip), port=port)
    name = host.lower().rstrip(".")
    if not _HOST_RE.match(name):
        raise AllowRuleError(f"{text!r}: not a host name, host:port, IP address or CIDR network")
    if name.startswith(("*.", ".")):
        return AllowRule(text, host=name.lstrip("*").lstrip("."), subdomains=True, port=port)
    return AllowRule(text, host=name, port=port)


class Refusal(msgspec.Struct, frozen=True, gc=False):
    """Why a connection was refused, and the allow entry that would permit it."""

    host: str
    kind: str
    address: str
    suggestion: str

    @property
    def reason(self) -> str:
        literal = parse_ip(self.host)
        if literal is not None or self.host == self.address:
            what = f"{self.kind} address {self.address}"
        else:
            what = f"{self.host} resolves to {self.kind} address {self.address}"
        return f"refused: {what}; allow it with --url-allow {self.suggestion}"


class UrlPolicy(msgspec.Struct, frozen=True, gc=False):
    """Where URL inlining may connect. `enabled=False` is `--no-urls`: nothing is fetched."""

    allow: tuple[AllowRule, ...] = field(default=())
    enabled: bool = True

    def allows_host(self, host: str, port: int) -> bool:
        """Is this host allowed by name (before any lookup)? Placeholder hosts need this."""
        return any(r.host is not None and r.allows(host, port, None) for r in self.allow)

    def refusal(self, host: str, port: int, ip: IPAddress) -> Refusal | None:
        """None when `ip` (an address `host` resolved to) may be connected to."""
        kind = inside_kind(ip)
        if kind is None or any(r.allows(host, port, ip) for r in self.allow):
            return None
        literal = parse_ip(host)
        numeric = literal is not None or _NUMERIC_HOST_RE.match(host) is not None
        suggestion = str(ip) if numeric else host.lower().rstrip(".")
        return Refusal(host, kind, str(ip), suggestion)


def build_policy(entries: list[str], enabled: bool = True) -> UrlPolicy:
    """A policy from allow entries (already checked with `parse_allow_rule`)."""
    return UrlPolicy(tuple(parse_allow_rule(e) for e in entries), enabled)
