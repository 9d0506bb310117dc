"""ui.classroom.clients: the client the room store's bounds count, from what Streamlit's public API gives a
session (its connection's address, the headers of its first request). A fake ``st.context`` stands in
for a session here; tests/browser/test_rooms_flood.py goes through the real HAProxy of deploy/."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import ui.classroom.clients as clients
from ui.classroom.clients import LOCAL, TRUSTED_PROXIES, client


class Headers:
    def __init__(self, forwarded: list[str]) -> None:
        self.forwarded = forwarded

    def get_all(self, key: str) -> list[str]:
        return list(self.forwarded) if key.lower() == "x-forwarded-for" else []


def session(monkeypatch, peer: str | None, forwarded: list[str] = (), trusted: str | None = None) -> str:
    context = SimpleNamespace(ip_address=peer, headers=Headers(list(forwarded)))
    monkeypatch.setattr(clients, "st", SimpleNamespace(context=context))
    if trusted is None:
        monkeypatch.delenv(TRUSTED_PROXIES, raising=False)
    else:
        monkeypatch.setenv(TRUSTED_PROXIES, trusted)
    return client()


CASES = {
    "this machine": (None, [], None, LOCAL),
    "a browser on the network": ("203.0.113.5", [], None, "203.0.113.5"),
    "a header without a trusted proxy is the browser's own": ("203.0.113.5", ["198.51.100.9"], None,
                                                              "203.0.113.5"),
    "HAProxy on loopback: its line, the last": (None, ["6.6.6.6, 7.7.7.7", "198.51.100.7"], "127.0.0.1",
                                                "198.51.100.7"),
    "a spoofed line before HAProxy's is ignored": (None, ["198.51.100.7", "203.0.113.66"], "127.0.0.1",
                                                   "203.0.113.66"),
    "a browser that is not the proxy cannot claim an address": ("203.0.113.5", ["10.0.0.1"], "127.0.0.1",
                                                                "203.0.113.5"),
    "the proxy's container network": ("172.30.80.4", ["198.51.100.7"], "172.30.80.0/24", "198.51.100.7"),
    "a last line that is no address": (None, ["198.51.100.7", "unknown"], "127.0.0.1", LOCAL),
    "IPv6 counts per /64": ("2001:db8:1:2:aaaa::1", [], None, "2001:db8:1:2::/64"),
    "an IPv4-mapped address is the IPv4 one": ("::ffff:198.51.100.8", [], None, "198.51.100.8"),
    "a malformed trusted list trusts nothing": (None, ["198.51.100.7"], "nonsense,,", LOCAL),
}


@pytest.mark.parametrize(("peer", "forwarded", "trusted", "expected"), CASES.values(), ids=CASES.keys())
def test_the_client_of_a_session(monkeypatch, peer, forwarded, trusted, expected):
    assert session(monkeypatch, peer, forwarded, trusted) == expected


def test_two_addresses_of_one_ipv6_network_are_one_client(monkeypatch):
    assert session(monkeypatch, "2001:db8:1:2::1") == session(monkeypatch, "2001:db8:1:2:ffff::9")
    assert session(monkeypatch, "2001:db8:1:3::1") != session(monkeypatch, "2001:db8:1:2::1")
