"""Discord through discord.py: the adapter and the pure payload translation it uses."""

import warnings

with warnings.catch_warnings():
    # discord.py's voice support imports the stdlib ``audioop``, deprecated since Python 3.11
    # (PEP 594). We use no voice; unfiltered, the import fails under ``-W error``.
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import discord  # noqa: F401  (imported here first, with the filter above)

from gateway.platforms.discord.adapter import DiscordAdapter, DiscordStartError

__all__ = ["DiscordAdapter", "DiscordStartError"]
