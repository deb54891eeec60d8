"""What an OpenViking tool call may name: URIs in the caller's own space, public URLs.

Both checks run before any request, on the model's arguments; a refusal is a
:class:`~providers.service.ToolRefused` that the tool answers as error JSON.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from providers.service import ToolRefused

SCHEME = "viking://"
# The categories viking_remember accepts → the directory OpenViking's extractor also uses.
CATEGORY_DIRS = {
    "preference": "preferences",
    "entity": "entities",
    "event": "events",
    "case": "cases",
    "pattern": "patterns",
}
# Summaries the server generates for each directory; not memories themselves.
SUMMARY_FILES = ("/.abstract.md", "/.overview.md")
_SEGMENT = re.compile(r"^[A-Za-z0-9._\-\u00a0-\uffff ]+$")
_LOCAL_NAMES = (".localhost", ".local", ".internal", ".lan", ".home.arpa")


def user_root(user: str) -> str:
    return f"{SCHEME}user/{user}/"


def memories_root(user: str) -> str:
    return f"{user_root(user)}memories/"


def own_uri(uri: object, user: str) -> str:
    """``uri`` when it lies in ``user``'s space, else ToolRefused (no request is made)."""
    if not isinstance(uri, str) or not uri.strip():
        raise ToolRefused("uri is required (a viking:// URI in your own memory space)")
    uri = uri.strip()
    root = user_root(user)
    if uri == root.rstrip("/"):
        return root
    if not uri.startswith(root):
        raise ToolRefused(f"that URI is outside your memory space; use URIs under {root}")
    rest = uri[len(root) :]
    if any(ch in rest for ch in "?#\\~%") or any(ord(ch) < 32 for ch in rest):
        raise ToolRefused("that URI contains characters a memory URI may not have")
    segments = [s for s in rest.rstrip("/").split("/")] if rest else []
    if any(s in ("", ".", "..") or not _SEGMENT.match(s) for s in segments):
        raise ToolRefused("that URI is not a plain path in your memory space")
    return uri


def memory_file(uri: object, user: str) -> str:
    """A single memory file (``…/memories/…/*.md``) in ``user``'s space, for viking_forget."""
    checked = own_uri(uri, user)
    name = checked.rsplit("/", 1)[-1]
    if not checked.startswith(memories_root(user)) or not name.endswith(".md"):
        raise ToolRefused("viking_forget deletes one memory file: a .md URI under memories/")
    if checked.endswith(SUMMARY_FILES):
        raise ToolRefused("generated summaries are not memories; forget the memory file itself")
    return checked


def public_url(url: object) -> str:
    """``url`` when it is a public http(s) URL; refuses files, local names and private IPs.

    Host names are not resolved here (no DNS in a tool call); the server refuses private
    targets as well (``enforce_public_remote_targets``), this check stops the obvious ones
    before anything leaves the gateway.
    """
    if not isinstance(url, str) or not url.strip():
        raise ToolRefused("url is required (a public http or https URL)")
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise ToolRefused("only public http(s) URLs can be added")
    if parts.username or parts.password:
        raise ToolRefused("URLs with credentials are refused")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise ToolRefused("the URL has no host")
    if host == "localhost" or host.endswith(_LOCAL_NAMES) or ("." not in host and ":" not in host):
        raise ToolRefused(f"{host!r} is not a public host")
    if re.fullmatch(r"[0-9.]+|0x[0-9a-f.x]+", host) or ":" in host:
        _check_ip(host)
    return url


def _check_ip(host: str) -> None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError as exc:  # 2130706433, 0x7f.1, 127.1: numeric forms a resolver accepts
        raise ToolRefused(f"{host!r} is not a plain public IP address") from exc
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:  # ::ffff:127.0.0.1 reaches the IPv4 address it wraps
        address = mapped
    if not address.is_global or address.is_multicast:
        raise ToolRefused(f"{host} is a private, loopback or link-local address")
