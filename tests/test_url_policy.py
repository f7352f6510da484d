"""URL inlining cannot reach the inside network unless allowed: the address classes, the allow
rules, and real fetches against a loopback server (reached only through the allow-list), with
names resolved by an injected resolver so a test can make a name point anywhere."""

from __future__ import annotations

import asyncio
import ipaddress

import pytest
from inline_doc_server import DocServer

from omk.inline.fetched import HINT_ALLOW, Fetched, FetchFailure
from omk.inline.http_fetch import HttpFetcher
from omk.inline.policy import AllowRuleError, build_policy, inside_kind, parse_allow_rule


def port_of(srv: DocServer) -> int:
    return int(srv.base.rsplit(":", 1)[1])


class FakeDns:
    """A resolver with a fixed table; counts lookups per name."""

    def __init__(self, table: dict[str, list[str]] | None = None, sequence: dict[str, list[list[str]]] | None = None):
        self.table = table or {}
        self.sequence = sequence or {}
        self.lookups: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        if host in self.sequence:
            answers = self.sequence[host]
            return answers[min(len(self.lookups) - 1, len(answers) - 1)]
        if host not in self.table:
            raise OSError(f"[Errno -2] Name or service not known: {host}")
        return self.table[host]


def fetch(url: str, allow: list[str] | None = None, resolver=None, **kwargs) -> Fetched | FetchFailure:
    async def go():
        extra = {"resolver": resolver} if resolver is not None else {}
        fetcher = HttpFetcher(policy=build_policy(allow or []), timeout=5, **extra, **kwargs)
        try:
            return await fetcher.fetch(url)
        finally:
            await fetcher.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.5", "private"),
        ("172.16.3.4", "private"),
        ("192.168.1.1", "private"),
        ("fd12:3456::1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("100.127.255.254", "carrier-grade NAT"),
        ("224.0.0.251", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("240.0.0.1", "reserved"),
        ("192.0.2.10", "documentation"),  # TEST-NET-1
        ("fec0::1", "site-local"),  # deprecated site-local, which Python 3.11 calls global
        ("3fff::1", "documentation"),
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
        ("::ffff:10.1.2.3", "private"),
        ("::ffff:169.254.169.254", "link-local"),
        ("2002:7f00:1::", "loopback"),  # 6to4 around 127.0.0.1
        ("64:ff9b::a9fe:a9fe", "link-local"),  # NAT64 around 169.254.169.254
        ("8.8.8.8", None),
        ("1.1.1.1", None),
        ("2606:4700:4700::1111", None),
        ("100.128.0.1", None),  # just past carrier-grade NAT
    ],
)
def test_inside_addresses_are_classified_and_public_ones_are_not(address, kind):
    assert inside_kind(ipaddress.ip_address(address)) == kind


# IANA's IPv4 and IPv6 Special-Purpose Address Registries, written out here from the registries
# (not from omk's table), with their "globally reachable" column; the IPv6 address space's
# deprecated site-local block fec0::/10 and multicast are added. Ranges that carry an IPv4 address
# are tested separately below.
REGISTRY = [
    ("0.0.0.0/8", False), ("0.0.0.0/32", False), ("10.0.0.0/8", False), ("100.64.0.0/10", False),
    ("127.0.0.0/8", False), ("169.254.0.0/16", False), ("172.16.0.0/12", False),
    ("192.0.0.0/24", False), ("192.0.0.0/29", False), ("192.0.0.8/32", False), ("192.0.0.9/32", True),
    ("192.0.0.10/32", True), ("192.0.0.170/32", False), ("192.0.0.171/32", False), ("192.0.2.0/24", False),
    ("192.31.196.0/24", True), ("192.52.193.0/24", True), ("192.88.99.0/24", False), ("192.168.0.0/16", False),
    ("192.175.48.0/24", True), ("198.18.0.0/15", False), ("198.51.100.0/24", False), ("203.0.113.0/24", False),
    ("224.0.0.0/4", False), ("240.0.0.0/4", False), ("255.255.255.255/32", False),
    ("::1/128", False), ("::/128", False), ("64:ff9b:1::/48", False), ("100::/64", False),
    ("100:0:0:1::/64", False), ("2001::/23", False), ("2001:1::1/128", True), ("2001:1::2/128", True),
    ("2001:1::3/128", True), ("2001:2::/48", False), ("2001:3::/32", True), ("2001:4:112::/48", True),
    ("2001:10::/28", False), ("2001:20::/28", True), ("2001:30::/28", True), ("2001:db8::/32", False),
    ("2620:4f:8000::/48", True), ("3fff::/20", False), ("5f00::/16", False), ("fc00::/7", False),
    ("fe80::/10", False), ("fec0::/10", False), ("ff00::/8", False),
]


@pytest.mark.parametrize(("network", "reachable"), REGISTRY)
def test_every_special_purpose_range_is_judged_as_the_registry_says(network, reachable):
    net = ipaddress.ip_network(network)
    for ip in {net.network_address, net.network_address + (net.num_addresses // 2), net.broadcast_address}:
        kind = inside_kind(ip)
        assert (kind is None) == reachable, (str(ip), kind)


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("::ffff:8.8.8.8", False),  # IPv4-mapped: never a resolved public address
        ("64:ff9b::808:808", True),  # NAT64 around 8.8.8.8
        ("64:ff9b::a00:1", False),  # NAT64 around 10.0.0.1
        ("2002:808:808::1", True),  # 6to4 around 8.8.8.8
        ("2002:c0a8:101::1", False),  # 6to4 around 192.168.1.1
        ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", True),  # Teredo, client 8.8.8.8
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False),  # Teredo, client 192.0.2.45
    ],
)
def test_ranges_that_carry_an_ipv4_address_are_judged_by_it(address, public):
    assert (inside_kind(ipaddress.ip_address(address)) is None) == public


def test_a_site_local_address_is_refused_before_connecting():
    got = fetch("http://[fec0::1]:9/plain.txt")
    assert isinstance(got, FetchFailure) and got.reason.startswith("refused: site-local address fec0::1;"), got


@pytest.mark.parametrize(
    ("entry", "host", "port", "ip", "allowed"),
    [
        ("wiki.corp", "wiki.corp", 443, "10.0.0.5", True),
        ("wiki.corp", "WIKI.corp.", 80, "10.0.0.5", True),
        ("wiki.corp", "other.corp", 443, "10.0.0.5", False),
        ("wiki.corp:8443", "wiki.corp", 8443, "10.0.0.5", True),
        ("wiki.corp:8443", "wiki.corp", 443, "10.0.0.5", False),
        ("*.corp.net", "a.b.corp.net", 443, "10.0.0.5", True),
        ("*.corp.net", "corp.net", 443, "10.0.0.5", False),
        (".corp.net", "x.corp.net", 80, "10.0.0.5", True),
        ("10.0.0.0/8", "anything.example", 80, "10.9.9.9", True),
        ("10.0.0.0/8", "anything.example", 80, "192.168.0.1", False),
        ("127.0.0.1", "127.0.0.1", 9, "127.0.0.1", True),
        ("127.0.0.1:8080", "127.0.0.1", 8081, "127.0.0.1", False),
        ("[::1]:8080", "::1", 8080, "::1", True),
        ("::1", "::1", 1, "::1", True),
        ("fd00::/8", "x", 1, "fd12::1", True),
        ("fd00::/8", "x", 1, "10.0.0.1", False),
    ],
)
def test_allow_rules_match_by_name_port_address_or_network(entry, host, port, ip, allowed):
    rule = parse_allow_rule(entry)
    assert rule.allows(host, port, ipaddress.ip_address(ip)) is allowed


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("http://wiki.corp/", "not a URL"),
        ("wiki.corp/docs", "not a CIDR"),
        ("10.0.0.0/40", "10.0.0.0/40"),
        ("wiki.corp:http", "port must be a number"),
        ("wiki.corp:70000", "between 1 and 65535"),
        ("[::1", "missing ']'"),
        ("bad host!", "not a host name"),
        ("  ", "empty"),
    ],
)
def test_bad_allow_entries_say_what_is_wrong(entry, words):
    with pytest.raises(AllowRuleError, match=None) as info:
        parse_allow_rule(entry)
    assert words in str(info.value)


def test_loopback_is_refused_without_connecting_and_fetched_when_allowed(http):
    before = sum(http.hits.values())
    got = fetch(http.url("/plain.txt"))
    assert isinstance(got, FetchFailure)
    assert got.reason == "refused: loopback address 127.0.0.1; allow it with --url-allow 127.0.0.1"
    assert got.hint == HINT_ALLOW
    assert sum(http.hits.values()) == before  # no request reached the server
    assert isinstance(fetch(http.url("/plain.txt"), ["127.0.0.1"]), Fetched)
    assert isinstance(fetch(http.url("/plain.txt"), [f"127.0.0.1:{port_of(http)}"]), Fetched)
    assert isinstance(fetch(http.url("/plain.txt"), ["127.0.0.0/8"]), Fetched)
    other_port = fetch(http.url("/plain.txt"), ["127.0.0.1:1"])
    assert isinstance(other_port, FetchFailure)
    assert other_port.reason.startswith("refused: loopback")


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("2130706433", "127.0.0.1"),  # decimal
        ("0x7f000001", "127.0.0.1"),  # hex
        ("0x7f.1", "127.0.0.1"),  # hex, short form
        ("127.1", "127.0.0.1"),  # short form
        ("0", "0.0.0.0"),
        ("[::]", "::"),
        ("[::1]", "::1"),
        ("[::ffff:127.0.0.1]", "::ffff:7f00:1"),
        ("[0:0:0:0:0:ffff:7f00:1]", "::ffff:7f00:1"),
    ],
)
def test_encoded_spellings_of_inside_addresses_are_refused(http, host, address):
    before = sum(http.hits.values())
    got = fetch(f"http://{host}:{port_of(http)}/plain.txt")
    assert isinstance(got, FetchFailure), got
    assert got.reason.startswith("refused: ")
    assert f"address {address};" in got.reason
    assert got.reason.endswith(f"allow it with --url-allow {address}")
    assert sum(http.hits.values()) == before


def test_an_octal_spelling_is_not_fetched_either(http):
    got = fetch(f"http://0177.0.0.1:{port_of(http)}/plain.txt")  # httpx rejects it as a URL
    assert isinstance(got, FetchFailure)
    assert "0177.0.0.1" in got.reason


def test_a_name_that_resolves_inside_is_refused_after_resolution():
    dns = FakeDns({"intranet.corp-example.com": ["10.0.0.5"], "meta.evil-example.com": ["169.254.169.254"]})
    got = fetch("http://intranet.corp-example.com/wiki", resolver=dns)
    assert isinstance(got, FetchFailure)
    assert got.reason == (
        "refused: intranet.corp-example.com resolves to private address 10.0.0.5; "
        "allow it with --url-allow intranet.corp-example.com"
    )
    got = fetch("http://meta.evil-example.com/latest/meta-data/", resolver=dns)
    assert isinstance(got, FetchFailure)
    assert "link-local address 169.254.169.254" in got.reason
    assert dns.lookups == ["intranet.corp-example.com", "meta.evil-example.com"]


def test_the_connection_goes_to_the_checked_address_with_the_name_kept(http):
    """The name exists only in the fake resolver: had omk looked it up again to connect, the
    connection would fail. It succeeds, reaches the server by IP, and the Host header keeps the name."""
    dns = FakeDns({"docs.public-site-example.com": ["127.0.0.1"]})
    url = f"http://docs.public-site-example.com:{port_of(http)}/plain.txt"
    refused = fetch(url, resolver=dns)
    assert isinstance(refused, FetchFailure)
    assert refused.reason.endswith("allow it with --url-allow docs.public-site-example.com")
    got = fetch(url, ["docs.public-site-example.com"], resolver=dns)
    assert isinstance(got, Fetched)
    assert got.content.startswith("Release notes 2.4")
    assert http.hosts[-1] == f"docs.public-site-example.com:{port_of(http)}"


def test_dns_rebinding_cannot_swap_the_address_after_the_check(http):
    """First answer allowed (127.0.0.1 by CIDR), every later answer private: one lookup is made
    per connection, so the request goes to the address that was checked."""
    dns = FakeDns(sequence={"rebind.attacker-example.com": [["127.0.0.1"], ["10.0.0.5"]]})
    got = fetch(f"http://rebind.attacker-example.com:{port_of(http)}/plain.txt", ["127.0.0.1/32"], resolver=dns)
    assert isinstance(got, Fetched)
    assert dns.lookups == ["rebind.attacker-example.com"]


def test_a_name_with_a_public_and_an_inside_address_connects_only_to_allowed_ones(http):
    dns = FakeDns({"multi.example-attacker.com": ["10.0.0.5", "127.0.0.1"]})
    url = f"http://multi.example-attacker.com:{port_of(http)}/plain.txt"
    got = fetch(url, ["127.0.0.1"], resolver=dns)  # 10.0.0.5 dropped, 127.0.0.1 allowed
    assert isinstance(got, Fetched)


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data/", "refused: link-local address 169.254.169.254; allow it with --url-allow 169.254.169.254"),
        ("http://[::1]:8080/x", "refused: loopback address ::1; allow it with --url-allow ::1"),
        ("http://10.1.2.3/admin", "refused: private address 10.1.2.3; allow it with --url-allow 10.1.2.3"),
    ],
)
def test_every_redirect_hop_is_checked(http, target, reason):
    # The server itself is allowed by host and port; where it redirects to is not.
    got = fetch(http.url(f"/redirect-to?to={target}"), [f"127.0.0.1:{port_of(http)}"])
    assert isinstance(got, FetchFailure)
    assert got.reason == reason


def test_a_redirect_to_another_port_of_an_allowed_address_is_refused(http):
    with DocServer() as other:
        got = fetch(http.url(f"/redirect-to?to={other.url('/plain.txt')}"), [f"127.0.0.1:{port_of(http)}"])
        assert isinstance(got, FetchFailure)
        assert got.reason.startswith("refused: loopback address 127.0.0.1")
        assert other.hits["/plain.txt"] == 0
        ok = fetch(http.url(f"/redirect-to?to={other.url('/plain.txt')}"), ["127.0.0.1"])
        assert isinstance(ok, Fetched)
        assert other.hits["/plain.txt"] == 1


@pytest.mark.parametrize("target", ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1:70/_x"])
def test_a_redirect_to_another_scheme_is_refused(http, target):
    got = fetch(http.url(f"/redirect-to?to={target}"), ["127.0.0.1"])
    assert isinstance(got, FetchFailure)
    assert got.reason.startswith("refused: only http and https URLs are fetched")


def test_behind_a_proxy_inside_names_are_refused_before_the_proxy_is_asked(http, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", http.base)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    dns = FakeDns({"docs.public-example.org": ["93.184.216.34"], "intranet.corp-example.com": ["10.0.0.5"]})
    got = fetch("http://docs.public-example.org/plain.txt", resolver=dns)
    assert isinstance(got, Fetched)  # through the proxy (the test server acts as one)
    assert http.proxied[-1] == "http://docs.public-example.org/plain.txt"
    seen = len(http.proxied)
    for url, words in [
        ("http://intranet.corp-example.com/x", "intranet.corp-example.com resolves to private address 10.0.0.5"),
        ("http://10.0.0.7/x", "private address 10.0.0.7"),
        ("http://unknown.nowhere-example.com/x", "does not resolve here"),
    ]:
        got = fetch(url, resolver=dns)
        assert isinstance(got, FetchFailure) and got.reason.startswith("refused: ") and words in got.reason, got
    assert len(http.proxied) == seen  # none of them reached the proxy
