"""The SSRF guard's decisions for addresses tests must never send traffic to.

Everything here is decided without a connection: `blocked_reason` on literal addresses,
and `check_url` with an injected resolver standing in for DNS.
"""

from __future__ import annotations

import ipaddress

import pytest

from atomic_agent.plugins.os.http.ssrf_guard import SsrfBlocked, blocked_reason, check_url


def reason(text: str) -> str | None:
    return blocked_reason(ipaddress.ip_address(text))


def resolving_to(*addresses: str):  # noqa: ANN201
    async def resolve(host: str, port: int) -> list[str]:
        return list(addresses)

    return resolve


def test_aws_metadata_address_is_blocked() -> None:
    assert reason("169.254.169.254") == "a cloud metadata address"


def test_ecs_task_metadata_address_is_blocked() -> None:
    assert reason("169.254.170.2") == "a cloud metadata address"


def test_aws_ipv6_metadata_address_is_blocked() -> None:
    assert reason("fd00:ec2::254") == "a cloud metadata address"


def test_alibaba_metadata_address_is_blocked() -> None:
    assert reason("100.100.100.200") == "a cloud metadata address"


@pytest.mark.parametrize("address", ["10.0.0.1", "10.255.255.254", "172.16.0.1", "172.31.255.1", "192.168.1.1"])
def test_rfc1918_private_ranges_are_blocked(address: str) -> None:
    assert reason(address) == "a private network"


def test_ipv6_unique_local_is_blocked() -> None:
    assert reason("fd12:3456::1") == "a private network"


@pytest.mark.parametrize("address", ["169.254.1.1", "fe80::1"])
def test_link_local_is_blocked(address: str) -> None:
    assert reason(address) == "link-local"


def test_cgnat_is_blocked_although_not_is_private() -> None:
    assert not ipaddress.ip_address("100.64.0.1").is_private
    assert reason("100.64.0.1") == "carrier-grade NAT (shared address space)"


@pytest.mark.parametrize("address", ["224.0.0.1", "239.255.255.250", "ff02::1"])
def test_multicast_is_blocked(address: str) -> None:
    assert reason(address) == "multicast"


@pytest.mark.parametrize("address", ["0.0.0.0", "::"])
def test_unspecified_address_is_blocked(address: str) -> None:
    assert reason(address) is not None


def test_ipv4_mapped_private_address_is_unwrapped_and_blocked() -> None:
    mapped = ipaddress.ip_address("::ffff:10.0.0.1")
    assert mapped.ipv4_mapped == ipaddress.ip_address("10.0.0.1")  # the IPv4 address the guard must judge
    assert reason("::ffff:10.0.0.1") == reason("10.0.0.1") == "a private network"
    assert reason("::ffff:169.254.169.254") == "a cloud metadata address"


@pytest.mark.parametrize("address", ["240.0.0.1", "192.0.2.1", "198.18.0.1", "2001:db8::1"])
def test_reserved_and_documentation_ranges_are_blocked(address: str) -> None:
    assert reason(address) is not None


@pytest.mark.parametrize("address", ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_are_allowed(address: str) -> None:
    assert reason(address) is None


async def test_a_public_looking_hostname_resolving_to_loopback_is_blocked() -> None:
    with pytest.raises(SsrfBlocked, match="loopback"):
        await check_url("https://totally-public.example/", resolver=resolving_to("127.0.0.1"))


async def test_a_multi_record_answer_with_one_private_address_is_blocked() -> None:
    with pytest.raises(SsrfBlocked, match="private"):
        await check_url("https://mixed.example/", resolver=resolving_to("93.184.216.34", "10.1.2.3"))


async def test_a_hostname_resolving_to_metadata_is_blocked() -> None:
    with pytest.raises(SsrfBlocked, match="metadata"):
        await check_url("http://metadata.google.internal/computeMetadata/v1/",
                        resolver=resolving_to("169.254.169.254"))


async def test_a_public_answer_is_allowed_and_pinned() -> None:
    target = await check_url("https://good.example:8443/x?y=1", resolver=resolving_to("93.184.216.34"))
    assert target.addresses == ("93.184.216.34",)
    assert target.parts.pinned("93.184.216.34") == "https://93.184.216.34:8443/x?y=1"
    assert target.parts.host_header == "good.example:8443"


async def test_allowing_a_name_does_not_allow_other_names_at_that_address() -> None:
    with pytest.raises(SsrfBlocked):
        await check_url("http://other.internal/", ["router.internal"], resolving_to("192.168.1.1"))
    assert (await check_url("http://router.internal/", ["router.internal"], resolving_to("192.168.1.1"))).addresses


async def test_a_cidr_entry_allows_addresses_inside_it_only() -> None:
    allowed = ["192.168.1.0/24"]
    assert await check_url("http://nas.lan/", allowed, resolving_to("192.168.1.20"))
    with pytest.raises(SsrfBlocked):
        await check_url("http://nas.lan/", allowed, resolving_to("192.168.2.20"))


async def test_a_name_that_resolves_to_no_address_is_blocked() -> None:
    with pytest.raises(SsrfBlocked, match="no address"):
        await check_url("http://void.example/", resolver=resolving_to())


async def test_a_resolver_failure_is_blocked_with_a_clear_message() -> None:
    async def failing(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    with pytest.raises(SsrfBlocked, match="cannot resolve"):
        await check_url("http://nope.example/", resolver=failing)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://127.0.0.1:70/", "ftp://example.com/",
                                 "dict://127.0.0.1:11211/", "data:text/plain,hi", "jar:http://x/!/", "//no-scheme/"])
async def test_non_http_schemes_are_rejected(url: str) -> None:
    with pytest.raises(SsrfBlocked, match="only http and https"):
        await check_url(url, resolver=resolving_to("93.184.216.34"))


@pytest.mark.parametrize("url", ["http://good.example@127.0.0.1/", "http://user:pw@good.example/"])
async def test_userinfo_confusion_is_rejected(url: str) -> None:
    with pytest.raises(SsrfBlocked, match="credentials"):
        await check_url(url, resolver=resolving_to("93.184.216.34"))


@pytest.mark.parametrize("url", ["http://127.0.0.1\\@good.example/", "http://good.example\t.evil/",
                                 "http://good.example\n/", "http://good .example/"])
async def test_url_confusion_characters_are_rejected(url: str) -> None:
    with pytest.raises(SsrfBlocked, match="whitespace, a backslash or a control character"):
        await check_url(url, resolver=resolving_to("93.184.216.34"))


async def test_fragment_at_sign_does_not_move_the_host() -> None:
    with pytest.raises(SsrfBlocked, match="loopback"):
        await check_url("http://127.0.0.1#@good.example/")
