"""The Telegram adapter: python-telegram-bot for every HTTP call, our own acknowledging intake.

``TelegramAdapter`` builds a PTB ``Application`` (without an ``Updater``) for its ``Bot``,
its request pools and its ``initialize``/``shutdown`` lifecycle. Intake is ours rather than
PTB's ``Updater`` → ``update_queue`` → ``process_update`` path because the gateway needs three
things that path does not give: a completion signal per update (to acknowledge it only once
handled, SPEC §8.1), per-chat ordering with concurrency across chats (:mod:`.lanes`), and no
per-user ``user_data``/``chat_data`` kept by PTB (sessions are the router's). Updates come
from :mod:`.polling` (default) or :mod:`.webhook` (when ``telegram.webhook_url`` is set).

Dedupe: the adapter never dispatches an update id twice while it is in flight or below the
confirmed offset; an update redelivered after a restart is deduplicated by the gateway's
handler (which records handled ``update_id``s).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from types import TracebackType
from typing import ClassVar
from urllib.parse import urlsplit

from telegram import Bot, BotCommand, Message, Update
from telegram.constants import ChatAction
from telegram.error import BadRequest, InvalidToken, TelegramError
from telegram.ext import Application, ApplicationBuilder

from gateway.errors import ConfigError
from gateway.platforms.base import (
    Adapter,
    ButtonHandler,
    InboundHandler,
    OutboundMessage,
    TypingContext,
)
from gateway.platforms.chunking import utf16_len
from gateway.platforms.telegram.lanes import ChatLanes
from gateway.platforms.telegram.markup import visible_length
from gateway.platforms.telegram.polling import Poller, TolerantUpdatesRequest
from gateway.platforms.telegram.retry import with_flood_retry
from gateway.platforms.telegram.translate import (
    button_from_update,
    chat_id_arg,
    inbound_from_update,
    send_message_kwargs,
    thread_id_arg,
)
from gateway.platforms.telegram.webhook import WebhookServer
from gateway.settings import Settings

log = logging.getLogger(__name__)

ALLOWED_UPDATES = (Update.MESSAGE, Update.CALLBACK_QUERY)
TYPING_INTERVAL_S = 4.0  # Telegram shows "typing…" for about 5 s per action
CAPTION_LIMIT = 1024
MARKUP_ERROR = "can't parse entities"


def file_url_for(base_url: str) -> str | None:
    """``http://host/bot`` → ``http://host/file/bot`` (PTB's ``base_file_url``)."""
    head, sep, tail = base_url.rpartition("/bot")
    return f"{head}/file/bot{tail}" if sep else None


class TelegramAdapter(Adapter):
    """Telegram through python-telegram-bot. ``async with adapter:`` runs it.

    ``start`` connects (``getMe``), registers ``commands`` (name, description) and begins
    polling or serving the webhook; ``stop`` stops intake, gives running handlers
    ``telegram.shutdown_grace_s`` to finish (the rest are cancelled and not acknowledged),
    and closes every connection; a webhook stays registered so Telegram queues updates
    until the next start. ``send`` splits text longer than 4096 UTF-16 units itself, sends
    nothing for blank text, and raises PTB's ``TelegramError`` when Telegram refuses a
    message for good (blocked by the user, chat not found, …).
    """

    platform: ClassVar[str] = "telegram"
    max_message_chars: ClassVar[int] = 4096

    def __init__(
        self,
        settings: Settings,
        on_message: InboundHandler,
        on_button: ButtonHandler | None = None,
        *,
        commands: Sequence[tuple[str, str]] = (),
    ) -> None:
        config = settings.telegram
        if config.bot_token is None:
            raise ConfigError("telegram.bot_token (TELEGRAM_BOT_TOKEN) is not set")
        if config.webhook_url and config.webhook_secret is None:
            raise ConfigError(
                "telegram.webhook_url is set but telegram.webhook_secret "
                "(MNEMOGATE_TELEGRAM__WEBHOOK_SECRET) is not: refusing an unauthenticated webhook"
            )
        self._config = config
        self._on_message = on_message
        self._on_button = on_button
        self._commands = [BotCommand(name, description) for name, description in commands]
        self._app: Application | None = None
        self._poller: Poller | None = None
        self._webhook: WebhookServer | None = None
        self._typing: set[asyncio.Task[None]] = set()

    @staticmethod
    def measure(text: str) -> int:
        return utf16_len(text)

    @property
    def bot(self) -> Bot:
        if self._app is None:
            raise RuntimeError("TelegramAdapter is not started")
        return self._app.bot

    @property
    def webhook_address(self) -> tuple[str, int] | None:
        """Where the webhook server listens, in webhook mode once started."""
        return None if self._webhook is None else self._webhook.address

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        if self._app is not None:
            raise RuntimeError("TelegramAdapter already started")
        self._app = self._build_application()
        try:
            await self._app.initialize()  # getMe: a bad token fails here
            await self._connect(self._app.bot)
        except InvalidToken:
            await self.stop()
            # PTB's message quotes the token; ours must not.
            raise ConfigError("Telegram rejected the bot token (TELEGRAM_BOT_TOKEN)") from None
        except BaseException:
            await self.stop()
            raise
        log.info("Telegram bot @%s connected", self._app.bot.username)

    async def stop(self) -> None:
        app, poller, webhook = self._app, self._poller, self._webhook
        self._poller = self._webhook = None
        grace = self._config.shutdown_grace_s
        if poller is not None:
            await poller.stop(grace)
        if webhook is not None:
            await webhook.stop(grace)
        for task in list(self._typing):
            task.cancel()
        await asyncio.gather(*self._typing, return_exceptions=True)
        if app is not None:
            await app.shutdown()
            await app.bot.shutdown()  # a no-op unless initialize() failed half-way
        self._app = None

    def _build_application(self) -> Application:
        config = self._config
        assert config.bot_token is not None  # checked in __init__
        builder = (
            ApplicationBuilder()
            .token(config.bot_token.get_secret_value())
            .updater(None)
            .get_updates_request(TolerantUpdatesRequest(read_timeout=10.0))
        )
        if config.base_url:
            builder = builder.base_url(config.base_url)
            file_url = file_url_for(config.base_url)
            if file_url is not None:
                builder = builder.base_file_url(file_url)
        return builder.build()

    async def _connect(self, bot: Bot) -> None:
        if self._commands:
            await with_flood_retry(
                lambda: bot.set_my_commands(self._commands), what="setMyCommands"
            )
        lanes = ChatLanes(self._handle, concurrency=self._config.concurrency)
        config = self._config
        if config.webhook_url and config.webhook_secret is not None:
            secret = config.webhook_secret.get_secret_value()
            self._webhook = WebhookServer(
                bot,
                lanes,
                path=urlsplit(config.webhook_url).path,
                secret=secret,
                host=config.webhook_listen,
                port=config.webhook_port,
            )
            await self._webhook.start()
            await bot.set_webhook(
                config.webhook_url, secret_token=secret, allowed_updates=list(ALLOWED_UPDATES)
            )
            return
        await bot.delete_webhook(drop_pending_updates=False)  # getUpdates fails while one is set
        self._poller = Poller(
            bot, lanes, timeout_s=config.poll_timeout_s, allowed_updates=ALLOWED_UPDATES
        )
        self._poller.start()

    # -- inbound ---------------------------------------------------------------------------

    async def _handle(self, update: Update) -> None:
        """One update, start to finish; exceptions are logged by :class:`ChatLanes`."""
        if update.callback_query is not None:
            await self._handle_button(update)
            return
        bot = self.bot
        message = inbound_from_update(update, bot_id=bot.id, bot_username=bot.username)
        if message is None:
            log.debug("ignoring Telegram update %s", update.update_id)
            return
        await self._on_message(message)

    async def _handle_button(self, update: Update) -> None:
        query = update.callback_query
        assert query is not None
        press = button_from_update(update)
        answer: str | None = None
        try:
            if press is not None and self._on_button is not None:
                answer = await self._on_button(press)
        finally:  # always stop the client's spinner, even when the handler failed
            bot = self.bot
            await with_flood_retry(
                lambda: bot.answer_callback_query(query.id, text=answer),
                what="answerCallbackQuery",
            )

    # -- outbound --------------------------------------------------------------------------

    async def send(self, message: OutboundMessage) -> str | None:
        if message.document is not None:
            return await self._send_document(message)
        if not message.text.strip():
            return None  # Telegram refuses empty messages
        chunks = [message.text]
        if self.measure(message.text) > self.max_message_chars:
            chunks = self.split(message.text)
        sent: Message | None = None
        for index, chunk in enumerate(chunks):
            last = index == len(chunks) - 1
            part = replace(
                message,
                text=chunk,
                buttons=message.buttons if last else (),
                reply_to_message_id=message.reply_to_message_id if index == 0 else None,
            )
            sent = await self._send_text(part)
        return None if sent is None else str(sent.message_id)

    async def _send_text(self, message: OutboundMessage) -> Message:
        bot = self.bot
        formatted = send_message_kwargs(message, formatted=True)
        if visible_length(formatted["text"]) <= self.max_message_chars:
            try:
                return await with_flood_retry(
                    lambda: bot.send_message(**formatted), what="sendMessage"
                )
            except BadRequest as exc:
                if MARKUP_ERROR not in exc.message.lower():
                    raise
                log.warning("Telegram refused the formatting (%s); sending plain text", exc)
        plain = send_message_kwargs(message, formatted=False)
        return await with_flood_retry(lambda: bot.send_message(**plain), what="sendMessage")

    async def _send_document(self, message: OutboundMessage) -> str | None:
        assert message.document is not None
        bot = self.bot
        filename, data = message.document
        caption = message.text if 0 < utf16_len(message.text) <= CAPTION_LIMIT else None
        sent = await with_flood_retry(
            lambda: bot.send_document(
                chat_id_arg(message.chat_id),
                document=data,
                filename=filename,
                caption=caption,
                message_thread_id=thread_id_arg(message.thread_id),
            ),
            what="sendDocument",
        )
        if caption is None and message.text.strip():
            return await self.send(replace(message, document=None))
        return str(sent.message_id)

    def typing(self, chat_id: str, thread_id: str | None) -> TypingContext:
        return _Typing(lambda: self._spawn_typing(chat_id, thread_id))

    def _spawn_typing(self, chat_id: str, thread_id: str | None) -> asyncio.Task[None]:
        task = asyncio.create_task(
            self._typing_loop(self.bot, chat_id, thread_id), name=f"telegram-typing-{chat_id}"
        )
        self._typing.add(task)  # stop() cancels any a caller forgot to close
        task.add_done_callback(self._typing.discard)
        return task

    @staticmethod
    async def _typing_loop(bot: Bot, chat_id: str, thread_id: str | None) -> None:
        while True:
            try:
                await bot.send_chat_action(
                    chat_id_arg(chat_id),
                    ChatAction.TYPING,
                    message_thread_id=thread_id_arg(thread_id),
                )
            except TelegramError as exc:  # cosmetic: never let it disturb the reply
                log.debug("typing action for chat %s failed: %s", chat_id, exc)
            await asyncio.sleep(TYPING_INTERVAL_S)


class _Typing(TypingContext):
    """Sends "typing…" at once and every few seconds until the block exits."""

    def __init__(self, spawn: Callable[[], asyncio.Task[None]]) -> None:
        self._spawn = spawn
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> None:
        self._task = self._spawn()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            # gather, not ``await task``: a cancellation of *our* caller must still propagate.
            await asyncio.gather(task, return_exceptions=True)
