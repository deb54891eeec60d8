"""A fake Telegram Bot API served over real HTTP on loopback for the real python-telegram-bot.

``with FakeTelegram() as tg:`` serves ``tg.base_url`` (``http://127.0.0.1:<port>/bot``; PTB
appends the token). Methods are matched case-insensitively like Telegram's; bodies may be
form-encoded (what PTB sends), multipart (uploads) or JSON. ``getUpdates`` long-polls on a
Condition and confirms (drops) every update below ``offset`` exactly like Telegram;
``confirmed_offset`` is the highest offset seen. Every other call is recorded in ``sent``,
failed ones too (with their status). ``sendMessage`` is checked like Telegram checks it:
empty text, invalid HTML and more than 4096 visible UTF-16 units are refused.

Scripting: ``fail_next(method, status=429, retry_after=1)``, ``reject_markup_next()``.
Test side: ``push_message``, ``push_callback``, ``push_raw``, ``wait_for_sent``,
``wait_until``, and :func:`post_webhook` (from :mod:`tests.fakes.telegram_http`) for
webhook tests.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from tests.fakes import telegram_payloads as wire
from tests.fakes.telegram_http import ApiServer, post_webhook

__all__ = ["BOT_USERNAME", "TOKEN", "Call", "FakeTelegram", "post_webhook"]

log = logging.getLogger(__name__)

TOKEN = "424242:AAFakeTokenForTests_0123456789abcdef"
BOT_USERNAME = "mnemo_test_bot"
TEXT_LIMIT = 4096

Route = Callable[[dict[str, Any], dict[str, tuple[str, bytes]]], tuple[int, bytes]]


@dataclass(frozen=True)
class Call:
    """One recorded Bot API call (anything but getUpdates)."""

    method: str
    params: dict[str, Any]
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    status: int = 200
    at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class _Failure:
    status: int
    retry_after: int | None
    description: str | None


class FakeTelegram:
    """The fake Bot API; one bot (``TOKEN``, ``@BOT_USERNAME``), any number of chats."""

    def __init__(self, *, token: str = TOKEN, bot_username: str = BOT_USERNAME) -> None:
        self.token = token
        self.bot_id = int(token.split(":", 1)[0])
        self.bot_username = bot_username
        self.webhook_url: str | None = None
        self.webhook_secret: str | None = None
        self.commands: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._updates: list[dict[str, Any]] = []  # delivered until confirmed
        self._calls: list[Call] = []
        self._failures: defaultdict[str, deque[_Failure]] = defaultdict(deque)
        self._reject_markup = 0
        self._confirmed = 0
        self._polls = 0
        self._next_update_id = 100
        self._next_message_id = 1
        self._chats: dict[int, dict[str, Any]] = {}
        self._stopping = False
        self._server: ApiServer | None = None
        self._thread: threading.Thread | None = None
        self._routes: dict[str, Route] = {
            "getme": lambda p, f: (200, wire.ok(self._bot_user())),
            "getupdates": self._get_updates,
            "sendmessage": self._send_message,
            "editmessagetext": self._edit_message_text,
            "senddocument": self._send_document,
            "sendchataction": lambda p, f: (200, wire.ok(True)),
            "setmycommands": self._set_my_commands,
            "deletewebhook": self._delete_webhook,
            "setwebhook": self._set_webhook,
            "getwebhookinfo": self._get_webhook_info,
            "answercallbackquery": lambda p, f: (200, wire.ok(True)),
            "close": lambda p, f: (200, wire.ok(True)),
            "logout": lambda p, f: (200, wire.ok(True)),
        }

    # -- lifecycle -----------------------------------------------------------------------

    def __enter__(self) -> FakeTelegram:
        server = ApiServer(("127.0.0.1", 0), self)
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.05,), name="fake-telegram", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._cond:
            self._stopping = True  # wakes long polls
            self._cond.notify_all()
        if self._server is not None and self._thread is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
        self._server = self._thread = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "FakeTelegram is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}/bot"

    # -- test side: incoming traffic -------------------------------------------------------

    def push_message(
        self,
        user_id: int,
        chat_id: int,
        text: str | None,
        *,
        chat_type: str = "private",
        first_name: str = "Alice",
        username: str | None = "alice",
        message_thread_id: int | None = None,
        reply_to_bot: bool = False,
        entities: list[dict[str, Any]] | None = None,
        photo: bool = False,
        caption: str | None = None,
    ) -> int:
        """A user's message as Telegram would deliver it; returns its update_id."""
        chat = wire.chat(
            chat_id, chat_type, first_name=first_name, forum=message_thread_id is not None
        )
        sender = wire.user(user_id, first_name, username)
        with self._cond:
            self._chats[chat_id] = chat
            body = wire.message(
                self._message_id(), chat, sender, text=text, thread_id=message_thread_id
            )
        if text is not None:
            body["entities"] = wire.auto_entities(text) if entities is None else entities
        if photo:
            body["photo"] = wire.photo_sizes(f"photo{body['message_id']}")
        if caption is not None:
            body["caption"] = caption
            body["caption_entities"] = wire.auto_entities(caption)
        if reply_to_bot:
            body["reply_to_message"] = wire.message(
                body["message_id"] - 1, chat, self._bot_user(), text="an earlier answer"
            )
        return self.push_raw({"message": body})

    def push_callback(self, user_id: int, chat_id: int, data: str) -> int:
        """A press on an inline button under one of the bot's messages in ``chat_id``."""
        with self._cond:
            chat = self._chats.get(chat_id) or wire.chat(chat_id, "private", first_name="Alice")
            shown = wire.message(self._message_id(), chat, self._bot_user(), text="Approve?")
        query = {
            "id": f"cq{shown['message_id']}",
            "from": wire.user(user_id, "Alice", "alice"),
            "message": shown,
            "chat_instance": f"ci{chat_id}",
            "data": data,
        }
        return self.push_raw({"callback_query": query})

    def push_raw(self, update: dict[str, Any]) -> int:
        """Queue ``update`` as is (an ``update_id`` is added when missing); returns its id."""
        with self._cond:
            update = dict(update)
            if "update_id" not in update:
                update["update_id"] = self._next_update_id
            if isinstance(update["update_id"], int):
                self._next_update_id = max(self._next_update_id, update["update_id"] + 1)
            self._updates.append(update)
            self._cond.notify_all()
            return int(update["update_id"])

    # -- test side: scripting and observing -------------------------------------------------

    def fail_next(
        self, method: str, *, status: int = 429, retry_after: int | None = 1, desc: str = ""
    ) -> None:
        """The next call of ``method`` fails with ``status`` (429 carries ``retry_after``)."""
        with self._cond:
            self._failures[method.lower()].append(_Failure(status, retry_after, desc or None))

    def reject_markup_next(self) -> None:
        """The next sendMessage that has a parse_mode gets "can't parse entities"."""
        with self._cond:
            self._reject_markup += 1

    @property
    def sent(self) -> list[Call]:
        with self._cond:
            return list(self._calls)

    def calls(self, method: str, *, ok_only: bool = True) -> list[Call]:
        with self._cond:
            return self._select(method, ok_only)

    def wait_for_sent(
        self, n: int, timeout: float = 10.0, *, method: str = "sendMessage"
    ) -> list[Call]:
        """Block until ``n`` successful ``method`` calls were made; returns them."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._select(method, True)) >= n, timeout):
                got = len(self._select(method, True))
                raise TimeoutError(f"{got} of {n} {method} calls within {timeout}s")
            return self._select(method, True)

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
        """Block until ``predicate()`` (evaluated under the fake's lock) holds."""
        with self._cond:
            if not self._cond.wait_for(predicate, timeout):
                raise TimeoutError(f"condition not met within {timeout}s")

    @property
    def confirmed_offset(self) -> int:
        with self._cond:
            return self._confirmed

    @property
    def polls(self) -> int:
        """How many getUpdates calls have been answered or are waiting."""
        with self._cond:
            return self._polls

    def _select(self, method: str, ok_only: bool) -> list[Call]:
        name = method.lower()
        return [
            c for c in self._calls if c.method.lower() == name and (c.status == 200 or not ok_only)
        ]

    # -- the API (server threads) ----------------------------------------------------------

    def answer(
        self, token: str, method: str, params: dict[str, Any], files: dict[str, tuple[str, bytes]]
    ) -> tuple[int, bytes]:
        if token != self.token:
            return 401, wire.error(401, "Unauthorized")
        route = self._routes.get(method.lower())
        if route is None:
            return 404, wire.error(404, "Not Found")
        if method.lower() == "getupdates":
            return route(params, files)
        with self._cond:
            queued = self._failures.get(method.lower())
            failure = queued.popleft() if queued else None
        status, body = self._failure_body(failure) if failure else route(params, files)
        with self._cond:
            self._calls.append(Call(method, params, files, status))
            self._cond.notify_all()
        return status, body

    @staticmethod
    def _failure_body(failure: _Failure) -> tuple[int, bytes]:
        if failure.status == 429:
            seconds = failure.retry_after or 1
            description = failure.description or f"Too Many Requests: retry after {seconds}"
            return 429, wire.error(429, description, {"retry_after": seconds})
        return failure.status, wire.error(failure.status, failure.description or "Bad Request")

    def _get_updates(self, params: dict[str, Any], _: Any) -> tuple[int, bytes]:
        offset = int(params.get("offset") or 0)
        limit = int(params.get("limit") or 100)
        timeout = float(params.get("timeout") or 0)
        with self._cond:
            self._polls += 1
            if self.webhook_url:
                return 409, wire.error(
                    409, "Conflict: can't use getUpdates method while webhook is active"
                )
            if offset > 0:
                self._updates = [u for u in self._updates if _uid(u) >= offset]
                self._confirmed = max(self._confirmed, offset)
            self._cond.notify_all()

            def ready() -> list[dict[str, Any]]:
                return sorted((u for u in self._updates if _uid(u) >= offset), key=_uid)

            self._cond.wait_for(lambda: self._stopping or bool(ready()), timeout)
            return 200, wire.ok(ready()[:limit])

    def _send_message(self, params: dict[str, Any], _: Any) -> tuple[int, bytes]:
        text, parse_mode = str(params.get("text") or ""), params.get("parse_mode")
        if not text.strip():
            return 400, wire.error(400, "Bad Request: message text is empty")
        with self._cond:
            rejected = bool(parse_mode) and self._reject_markup > 0
            if rejected:
                self._reject_markup -= 1
        problem = 'Unsupported start tag "x" at byte offset 0' if rejected else None
        if parse_mode and problem is None:
            problem = wire.html_error(text)
        if problem is not None:
            return 400, wire.error(400, f"Bad Request: can't parse entities: {problem}")
        if wire.utf16_len(wire.visible_text(text, parse_mode)) > TEXT_LIMIT:
            return 400, wire.error(400, "Bad Request: message is too long")
        shown = wire.visible_text(text, parse_mode)
        return 200, wire.ok(self._bot_message(params, text=shown))

    def _edit_message_text(self, params: dict[str, Any], _: Any) -> tuple[int, bytes]:
        found = self._bot_message(params, text=str(params.get("text") or ""))
        found["message_id"] = params.get("message_id")
        return 200, wire.ok(found)

    def _send_document(
        self, params: dict[str, Any], files: dict[str, tuple[str, bytes]]
    ) -> tuple[int, bytes]:
        if "document" not in files:
            return 400, wire.error(400, "Bad Request: there is no document in the request")
        name, data = files["document"]
        found = self._bot_message(params)
        found["document"] = {"file_id": f"doc{len(data)}", "file_unique_id": "d", "file_name": name}
        if params.get("caption"):
            found["caption"] = params["caption"]
        return 200, wire.ok(found)

    def _set_my_commands(self, params: dict[str, Any], _: Any) -> tuple[int, bytes]:
        self.commands = list(params.get("commands") or [])
        return 200, wire.ok(True)

    def _delete_webhook(self, params: dict[str, Any], _: Any) -> tuple[int, bytes]:
        with self._cond:
            self.webhook_url = self.webhook_secret = None
            if params.get("drop_pending_updates"):
                self._updates.clear()
        return 200, wire.ok(True)

    def _set_webhook(self, params: dict[str, Any], _: Any) -> tuple[int, bytes]:
        with self._cond:
            self.webhook_url = str(params.get("url") or "") or None
            self.webhook_secret = params.get("secret_token")
        return 200, wire.ok(True)

    def _get_webhook_info(self, params: dict[str, Any], _: Any) -> tuple[int, bytes]:
        with self._cond:
            info = {
                "url": self.webhook_url or "",
                "has_custom_certificate": False,
                "pending_update_count": len(self._updates),
            }
        return 200, wire.ok(info)

    def _bot_user(self) -> dict[str, Any]:
        found = wire.user(self.bot_id, "Mnemo", self.bot_username, bot=True)
        found.update(can_join_groups=True, can_read_all_group_messages=False)
        return found

    def _message_id(self) -> int:
        self._next_message_id += 1
        return self._next_message_id

    def _bot_message(self, params: dict[str, Any], *, text: str | None = None) -> dict[str, Any]:
        chat_id = params.get("chat_id")
        with self._cond:
            chat = (self._chats.get(chat_id) if isinstance(chat_id, int) else None) or wire.chat(
                int(chat_id or 0), "private", first_name="Alice"
            )
            message_id = self._message_id()
        thread = params.get("message_thread_id")
        return wire.message(message_id, chat, self._bot_user(), text=text, thread_id=thread)


def _uid(update: dict[str, Any]) -> int:
    value = update.get("update_id")
    return value if isinstance(value, int) else -1
