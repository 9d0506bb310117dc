"""Who is asking, as far as the server can know: the client whose floods the room store bounds.

A client (:func:`client`) is:

- **behind the project's own proxy** (``deploy/``: HAProxy with ``option forwardfor``), the address on
  the last ``X-Forwarded-For`` line, but only when the connection comes from an address in
  ``GLASSBOX_TRUSTED_PROXIES`` (addresses or networks, separated by commas); earlier lines, and the
  header of any other connection, are what a browser chose to send, and are ignored;
- otherwise, the connection's own address (``st.context.ip_address``), and ``local`` for a connection
  from this machine.

An IPv6 client counts per /64 network; a hall behind one NAT address is one client.
Decisions: docs/decisions.md, ui/classroom/clients.py.
"""

from __future__ import annotations

import ipaddress
import os

import streamlit as st

TRUSTED_PROXIES = "GLASSBOX_TRUSTED_PROXIES"  # the project's own proxy: addresses or networks, commas
LOCAL = "local"
LOOPBACK = ("127.0.0.1", "::1")  # what st.context.ip_address reports as None


def trusted_proxies() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """The networks of ``GLASSBOX_TRUSTED_PROXIES`` (an address is a network of one); a part that is
    neither is ignored."""
    networks = []
    for part in os.environ.get(TRUSTED_PROXIES, "").split(","):
        try:
            networks.append(ipaddress.ip_network(part.strip(), strict=False))
        except ValueError:
            continue
    return networks


def _from_proxy(peer: str | None) -> bool:
    trusted = trusted_proxies()
    peers = LOOPBACK if peer is None else (peer,)
    return any(ipaddress.ip_address(p) in network for p in peers for network in trusted)


def client() -> str:
    """This session's client: see the module docstring."""
    return client_of(st.context.ip_address, st.context.headers.get_all("X-Forwarded-For"))


def client_of(ip_address: str | None, forwarded_for: list[str]) -> str:
    """The client of a connection from ``ip_address`` (``None`` or a loopback address: this machine) that
    sent these ``X-Forwarded-For`` lines: for a page's session or a route's request alike."""
    peer = _address(ip_address)
    if peer in LOOPBACK:
        peer = None
    if _from_proxy(peer):
        forwarded = _address(forwarded_for[-1].split(",")[-1]) if forwarded_for else None
        if forwarded is not None:
            return _network(forwarded)
    return LOCAL if peer is None else _network(peer)


def _address(raw: object) -> str | None:
    """``raw`` as a normalised IP address, or ``None`` when it is none."""
    if not isinstance(raw, str):
        return None
    try:
        return str(ipaddress.ip_address(raw.strip()))
    except ValueError:
        return None


def _network(address: str) -> str:
    """The client an address is: itself (IPv4, or IPv4 mapped into IPv6), or its /64 (IPv6)."""
    ip = ipaddress.ip_address(address)
    if ip.version == 4:
        return str(ip)
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.ip_network(f"{ip}/64", strict=False))
