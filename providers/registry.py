"""Finding and loading memory providers: bundled ones and ``mnemogate.providers`` entry points.

Only the selected provider is imported. A third-party package offers a provider with an
entry point whose value names a :class:`~providers.base.MemoryProvider` subclass::

    [project.entry-points."mnemogate.providers"]
    mystore = "mystore_mnemogate:MyStoreProvider"

What is loaded is validated before anyone uses it: a MemoryProvider subclass whose ``name``
is the selected name and whose tools are well-formed function tools. Bundled names win over
entry points of the same name.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
from collections.abc import Mapping
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import TYPE_CHECKING

from gateway.errors import MnemogateError
from providers.base import PROVIDER_NAME, MemoryProvider, ProviderServices, check_tool_schemas
from providers.errors import InvalidProvider, ProviderLoadError, UnknownProvider
from providers.manager import MemoryManager

if TYPE_CHECKING:
    from gateway.settings import Settings

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "mnemogate.providers"
# name → "module:attribute"; imported only when that name is selected.
BUNDLED: Mapping[str, str] = MappingProxyType(
    {
        "reference": "providers.reference:ReferenceProvider",
        "honcho": "providers.honcho.provider:HonchoProvider",
        "holographic": "providers.holographic.provider:HolographicProvider",
        "hindsight": "providers.hindsight.provider:HindsightProvider",
        "mem0": "providers.mem0.provider:Mem0Provider",
        "supermemory": "providers.supermemory.provider:SupermemoryProvider",
        "openviking": "providers.openviking.provider:OpenVikingProvider",
        "retaindb": "providers.retaindb.provider:RetainDBProvider",
        "byterover": "providers.byterover.provider:ByteRoverProvider",
    }
)


def available_providers() -> dict[str, str]:
    """Every provider name mapped to its ``module:attribute`` target, importing none of them."""
    found = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    found.update(BUNDLED)
    return dict(sorted(found.items()))


def load_provider_class(name: str) -> type[MemoryProvider]:
    """Import the provider called ``name`` (and nothing else) and validate the class."""
    target = BUNDLED.get(name)
    candidates = list(entry_points(group=ENTRY_POINT_GROUP, name=name))
    if target is not None:
        if candidates:
            log.warning(
                "entry point %s ignored: %r is a bundled provider", candidates[0].value, name
            )
        loaded = _import_target(name, target)
    else:
        if not candidates:
            raise UnknownProvider(name, available_providers())
        if len({ep.value for ep in candidates}) > 1:
            targets = ", ".join(sorted({ep.value for ep in candidates}))
            raise InvalidProvider(name, [f"several entry points claim this name: {targets}"])
        target = candidates[0].value
        try:
            loaded = candidates[0].load()
        except Exception as exc:
            raise ProviderLoadError(name, target, repr(exc)) from exc
    return validate_provider_class(name, loaded, target)


def load_provider(name: str, settings: Settings) -> MemoryProvider:
    """Build the selected provider from settings and validate the instance and its tools."""
    cls = load_provider_class(name)
    try:
        provider = cls.from_settings(settings)
    except MnemogateError:
        raise  # e.g. a ConfigError that already names the setting to fix
    except Exception as exc:
        raise InvalidProvider(name, [f"{cls.__name__}.from_settings() raised {exc!r}"]) from exc
    if not isinstance(provider, cls):
        problem = f"from_settings() returned {type(provider).__name__}, not {cls.__name__}"
        raise InvalidProvider(name, [problem])
    try:
        schemas = provider.tool_schemas()
    except Exception as exc:
        raise InvalidProvider(name, [f"tool_schemas() raised {exc!r}"]) from exc
    check_tool_schemas(name, schemas)
    return provider


def build_manager(settings: Settings, services: ProviderServices | None = None) -> MemoryManager:
    """The manager with ``memory.provider`` registered (or none); raises ProviderError.

    ``services`` are what the gateway lends the provider (its scope registry on the state
    store); without them an in-memory registry stands in.
    """
    manager = MemoryManager.from_settings(settings, services)
    if settings.memory.provider:
        manager.register(load_provider(settings.memory.provider, settings))
    return manager


def validate_provider_class(name: str, loaded: object, target: str) -> type[MemoryProvider]:
    """``loaded`` as a provider class, or InvalidProvider saying what is wrong with it."""
    if not (isinstance(loaded, type) and issubclass(loaded, MemoryProvider)):
        raise InvalidProvider(name, [f"{target} is not a MemoryProvider subclass"])
    problems = []
    if loaded.name != name:
        problems.append(f"{target} has name {loaded.name!r}, expected {name!r}")
    if not PROVIDER_NAME.match(loaded.name):
        problems.append(f"name {loaded.name!r} does not match {PROVIDER_NAME.pattern}")
    abstract = sorted(getattr(loaded, "__abstractmethods__", ()))
    if abstract:
        problems.append(f"{target} does not implement {', '.join(abstract)}")
    if problems:
        raise InvalidProvider(name, problems)
    return loaded


def _import_target(name: str, target: str) -> object:
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attribute)
    except Exception as exc:
        raise ProviderLoadError(name, target, repr(exc)) from exc


def missing_requirements(name: str, settings: Settings) -> list[str]:
    """What the provider ``name`` still needs: its pip extra's modules, then its secrets.

    Imports the provider's own module (which must import its SDK lazily), looks the SDK's
    modules up without importing them, and only when they are there builds the provider to
    read its questions.
    """
    cls = load_provider_class(name)
    absent = [m for m in cls.requires_modules if importlib.util.find_spec(m) is None]
    if absent:
        extra = cls.extra or name
        return [f"Python packages missing ({', '.join(absent)}): pip install 'mnemogate[{extra}]'"]
    try:
        provider = load_provider(name, settings)
    except MnemogateError as exc:
        return [str(exc)]
    try:
        section = getattr(settings, name, None)
        return [
            f"environment variable {field.env_var or name.upper() + '_' + field.name.upper()} "
            f"is not set ({field.description})"
            for field in provider.config_schema()
            if (field.secret or field.env_var) and getattr(section, field.name, None) is None
        ] + provider.setup_problems()
    finally:
        provider.shutdown()
