"""``mnemogate memory setup|status``: choose and configure the external memory provider."""

from __future__ import annotations

import click
import redis
from rq.registry import FailedJobRegistry

from gateway.cli.common import settings_or_exit
from gateway.config_file import update_config
from gateway.errors import MnemogateError
from gateway.history.db import Database
from gateway.settings import config_file_path
from providers.registry import available_providers, load_provider, missing_requirements
from workers.queues import QUEUE_ORDER, JobQueues, redis_client


@click.command()
@click.argument("provider", required=False)
def setup(provider: str | None) -> None:
    """Interactive wizard: pick a provider, answer its questions, save the config file.

    Secrets are never written: the wizard names the environment variable to set instead.
    """
    settings = settings_or_exit()
    known = available_providers()
    if provider is None:
        click.echo("Available providers: " + ", ".join(sorted(known)))
        provider = click.prompt("Provider", type=click.Choice(sorted(known)))
    try:
        missing = missing_requirements(provider, settings)
        if missing and missing[0].startswith("Python packages missing"):
            raise click.ClickException(f"{provider}: {missing[0]}")
        instance = load_provider(provider, settings)
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    for line in missing:
        click.echo(f"missing: {line}")
    values: dict[str, str] = {}
    for field in instance.config_schema():
        if field.secret:
            where = field.env_var or f"{provider.upper()}_{field.name.upper()}"
            click.echo(
                f"• {field.description}\n  secret: set {where} in the environment "
                "(it is not written to any file)"
            )
            continue
        values[field.name] = click.prompt(
            f"• {field.description}", default=field.default or "", show_default=bool(field.default)
        )
    path = config_file_path() or settings.home / "config.toml"
    try:
        instance.save_config(values, settings.home)
        update_config(path, "memory", {"provider": provider})
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        instance.shutdown()
    click.echo(f"Saved: memory.provider = {provider!r} in {path}")
    if not instance.is_available():
        click.echo(
            "Note: the provider reports it is not available yet (missing secret?). "
            "Run `mnemogate memory status` after setting it."
        )


@click.command()
def status() -> None:
    """Provider, availability and tools, outbox backlog, queue lengths and failed jobs."""
    settings = settings_or_exit()
    name = settings.memory.provider
    if name is None:
        click.echo("provider: none (curated memory and session search only)")
    else:
        try:
            instance = load_provider(name, settings)
        except MnemogateError as exc:
            raise click.ClickException(str(exc)) from None
        tools = ", ".join(t["function"]["name"] for t in instance.tool_schemas()) or "none"
        click.echo(f"provider: {name} (available: {'yes' if instance.is_available() else 'no'})")
        click.echo(f"tools: {tools}")
        instance.shutdown()
    db = Database(settings.state_db)
    rows = db.read(
        lambda c: c.execute(
            "SELECT kind, COUNT(*) AS n FROM outbox WHERE done_at IS NULL "
            "GROUP BY kind ORDER BY kind"
        ).fetchall()
    )
    db.close()
    backlog = ", ".join(f"{r['kind']} {r['n']}" for r in rows) or "empty"
    click.echo(f"outbox backlog: {backlog}")
    client = redis_client(settings.redis_url)
    try:
        queues = JobQueues(client, settings)
        parts = []
        for queue_name in QUEUE_ORDER:
            queue = queues.queue(queue_name)
            failed = FailedJobRegistry(queue=queue).count
            parts.append(f"{queue.name} {queue.count} queued / {failed} failed")
        click.echo("queues: " + "; ".join(parts))
    except redis.RedisError as exc:
        click.echo(f"queues: Redis at {settings.redis_url} unreachable ({exc})")
    finally:
        client.close()
