"""Writing the TOML config file (the setup wizard); reading stays in ``gateway.settings``."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

import tomli_w

from gateway.errors import ConfigError
from gateway.fsutil import atomic_write_text
from gateway.settings import SECRET_KEYS

TomlValue = str | int | float | bool


def update_config(path: Path, section: str, values: Mapping[str, TomlValue]) -> None:
    """Set ``[section] key = value`` for each item, keeping everything else in the file."""
    leaked = SECRET_KEYS.intersection(values)
    if leaked:
        raise ConfigError(f"refusing to write secret {sorted(leaked)[0]!r} to {path}")
    data: dict[str, object] = {}
    if path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    table = data.get(section)
    if table is None:
        table = data[section] = {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {section} is not a table")
    table.update(values)
    atomic_write_text(path, tomli_w.dumps(data))
