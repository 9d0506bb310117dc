"""Who is asking, as far as the server can know: the client whose floods the room store bounds.

Streamlit's public API gives the address of a session's connection (``st.context.ip_address``:
``None`` on loopback) and the headers of its first request (``st.context.headers``). So a client is:

- **behind the project's own proxy** (``deploy/``: HAProxy with ``option forwardfor``, which adds one
  ``X-Forwarded-For`` line of its own, after whatever the browser sent), the address on that last
  line, but only when the connection comes from an address in ``GLASSBOX_TRUSTED_PROXIES`` (the
  proxy's addresses or networks, separated by commas: ``127.0.0.1`` when it runs on the same machine,
  as ``deploy/local.py`` sets it; the proxy's container network in ``deploy/docker-compose.yml``).
  Earlier lines, and the header of any connection that is not from a listed proxy, are what a browser
  chose to send, and are ignored;
- otherwise, the connection's own address, and ``local`` for a connection from this machine.

An IPv6 client counts per /64 network: one machine is commonly given a whole /64, so single addresses
would make a flood from one machine look like thousands of clients. A hall behind one NAT address is
one client; the bounds per client are sized for that (``ui/classroom/rooms.py``).
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
    peer = _address(st.context.ip_address)
    if _from_proxy(peer):
        lines = st.context.headers.get_all("X-Forwarded-For")
        forwarded = _address(lines[-1].split(",")[-1]) if lines else None
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
