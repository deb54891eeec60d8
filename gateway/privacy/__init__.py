"""Per-tenant privacy (SPEC §11): export everything stored about a tenant, or erase it.

:mod:`~gateway.privacy.export` builds the archive (``/export``, ``mnemogate tenants
export``); :mod:`~gateway.privacy.erasure` erases the tenant from every store (``/forgetme``,
``mnemogate tenants forget``) and reports what could not be erased.
"""

from __future__ import annotations

from gateway.privacy.erasure import (
    ErasureReport,
    ProviderForget,
    confirm_erasure,
    forget_identity,
    forget_tenant,
    request_erasure,
)
from gateway.privacy.export import export_bytes, export_name, export_tenant

__all__ = [
    "ErasureReport",
    "ProviderForget",
    "confirm_erasure",
    "export_bytes",
    "export_name",
    "export_tenant",
    "forget_identity",
    "forget_tenant",
    "request_erasure",
]
