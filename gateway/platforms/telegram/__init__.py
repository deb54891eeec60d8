"""Telegram: the adapter on python-telegram-bot and the pure translation it relies on.

Where things are: :mod:`.translate` (update ↔ neutral message, pure), :mod:`.markup`
(Markdown → Telegram HTML), :mod:`.lanes` (per-chat ordered dispatch), :mod:`.polling` and
:mod:`.webhook` (the two intakes, both acknowledging only handled updates), :mod:`.retry`
(flood control) and :mod:`.adapter` (the :class:`TelegramAdapter` tying them together).
"""

from gateway.platforms.telegram.adapter import TelegramAdapter
from gateway.platforms.telegram.markup import to_telegram_html
from gateway.platforms.telegram.translate import (
    button_from_update,
    inbound_from_update,
    send_message_kwargs,
)

__all__ = [
    "TelegramAdapter",
    "button_from_update",
    "inbound_from_update",
    "send_message_kwargs",
    "to_telegram_html",
]
