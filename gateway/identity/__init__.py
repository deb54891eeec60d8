"""Linked accounts: one person's platform accounts resolving to one tenant (issue 16).

:mod:`gateway.identity.links` holds the account → tenant link table and the link codes;
:mod:`gateway.identity.merge` moves a joining account's data into the issuer's tenant.
"""

from gateway.identity.links import Link, LinkCode, LinkLocked, LinkStore
from gateway.identity.merge import LinkReport, link_accounts

__all__ = ["Link", "LinkCode", "LinkLocked", "LinkReport", "LinkStore", "link_accounts"]
