"""Provider discovery: bundled names, real entry points, validation and lazy imports."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gateway.settings import MemorySettings, Settings
from providers.errors import InvalidProvider, ProviderLoadError, UnknownProvider
from providers.reference import ReferenceProvider
from providers.registry import (
    ENTRY_POINT_GROUP,
    available_providers,
    build_manager,
    load_provider,
)

REPO = Path(__file__).resolve().parents[2]

GOOD_PLUGIN = """
from providers.base import MemoryProvider

class Plugin(MemoryProvider):
    name = "{name}"

    def is_available(self):
        return True

    def initialize(self, ctx):
        return None

    def tool_schemas(self):
        params = {{"type": "object", "properties": {{"q": {{"type": "string"}}}}}}
        function = {{"name": "{name}_search", "parameters": params}}
        return [{{"type": "function", "function": function}}]
"""

PluginFactory = Callable[..., tuple[str, str]]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


@pytest.fixture
def make_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginFactory]:
    """Install a real distribution (module + dist-info with entry_points.txt) on sys.path."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    modules: list[str] = []

    def install(
        source: str = GOOD_PLUGIN,
        attribute: str = "Plugin",
        name: str | None = None,
        ep_name: str | None = None,
    ) -> tuple[str, str]:
        unique = uuid.uuid4().hex[:8]
        name = name or f"plug{unique}"
        module = f"mg_plugin_{unique}"
        (site / f"{module}.py").write_text(source.format(name=name), encoding="utf-8")
        info = site / f"{module}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n", encoding="utf-8"
        )
        (info / "entry_points.txt").write_text(
            f"[{ENTRY_POINT_GROUP}]\n{ep_name or name} = {module}:{attribute}\n", encoding="utf-8"
        )
        modules.append(module)
        importlib.invalidate_caches()
        return ep_name or name, module

    yield install
    for module in modules:
        sys.modules.pop(module, None)


def test_bundled_reference_provider_loads(settings: Settings) -> None:
    assert available_providers()["reference"] == "providers.reference:ReferenceProvider"
    provider = load_provider("reference", settings)
    assert isinstance(provider, ReferenceProvider)
    assert provider.path == settings.home / "reference-provider.db"


def test_unknown_name_lists_what_exists(settings: Settings) -> None:
    with pytest.raises(UnknownProvider) as excinfo:
        load_provider("honchoo", settings)
    assert "unknown memory provider 'honchoo'; available: " in str(excinfo.value)
    assert "reference" in excinfo.value.known


def test_entry_point_is_discovered_and_imported_only_when_selected(
    make_plugin: PluginFactory, settings: Settings
) -> None:
    name, module = make_plugin()
    other, other_module = make_plugin()
    assert available_providers()[name] == f"{module}:Plugin"
    assert module not in sys.modules
    provider = load_provider(name, settings)
    assert provider.name == name and type(provider).__module__ == module
    assert other in available_providers() and other_module not in sys.modules


def test_build_manager_registers_the_configured_provider(
    make_plugin: PluginFactory, tmp_path: Path
) -> None:
    name, _ = make_plugin()
    manager = build_manager(Settings(home=tmp_path, memory=MemorySettings(provider=name)))
    assert manager.provider is not None and manager.provider.name == name
    assert [s["function"]["name"] for s in manager.tool_schemas()] == [f"{name}_search"]
    assert build_manager(Settings(home=tmp_path)).provider is None


NOT_A_CLASS = "def Plugin():\n    return None\n"
WRONG_NAME = GOOD_PLUGIN.replace('name = "{name}"', 'name = "something-else"')
ABSTRACT = "from providers.base import MemoryProvider\n\nclass Plugin(MemoryProvider):\n" + (
    '    name = "{name}"\n'
)
BAD_TOOL = GOOD_PLUGIN.replace('"{name}_search"', '"{name} search!"')
RESERVED_ARG = GOOD_PLUGIN.replace('{{"q": {{', '{{"tenant": {{')


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (NOT_A_CLASS, "is not a MemoryProvider subclass"),
        (WRONG_NAME, "has name 'something-else', expected"),
        (ABSTRACT, "does not implement initialize, is_available, tool_schemas"),
        (BAD_TOOL, "search!' does not match"),
        (RESERVED_ARG, "declares tenant: the tenant comes from the gateway's context"),
    ],
    ids=["not-a-class", "wrong-name", "abstract", "bad-tool-name", "identity-argument"],
)
def test_invalid_provider_is_rejected_with_a_clear_message(
    source: str, message: str, make_plugin: PluginFactory, settings: Settings
) -> None:
    name, _ = make_plugin(source)
    with pytest.raises(InvalidProvider, match=f"memory provider '{name}' is invalid: ") as exc:
        load_provider(name, settings)
    assert message in str(exc.value)


@pytest.mark.parametrize(
    ("source", "attribute", "reason"),
    [
        ("import mnemogate_missing_dependency_xyz\n", "Plugin", "mnemogate_missing_dependency"),
        ("VALUE = 1\n", "Plugin", "has no attribute 'Plugin'"),
    ],
)
def test_import_failure_is_reported(
    source: str, attribute: str, reason: str, make_plugin: PluginFactory, settings: Settings
) -> None:
    name, module = make_plugin(source, attribute)
    with pytest.raises(ProviderLoadError, match=f"'{name}' \\({module}:Plugin\\) failed to import"):
        load_provider(name, settings)
    with pytest.raises(ProviderLoadError, match=reason):
        load_provider(name, settings)


def test_two_entry_points_claiming_one_name_are_refused(
    make_plugin: PluginFactory, settings: Settings
) -> None:
    name, _ = make_plugin()
    make_plugin(ep_name=name, name=name)
    with pytest.raises(InvalidProvider, match="several entry points claim this name"):
        load_provider(name, settings)


def test_bundled_name_wins_over_an_entry_point(
    make_plugin: PluginFactory, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    _, module = make_plugin(name="reference")
    assert isinstance(load_provider("reference", settings), ReferenceProvider)
    assert f"entry point {module}:Plugin ignored: 'reference' is a bundled provider" in caplog.text


def test_bundled_provider_module_is_imported_only_when_selected() -> None:
    script = textwrap.dedent(
        """
        import sys
        import providers
        from providers.registry import available_providers, load_provider_class
        from providers.errors import UnknownProvider
        assert "reference" in available_providers()
        try:
            load_provider_class("not-there")
        except UnknownProvider:
            pass
        assert "providers.reference" not in sys.modules, "imported before selection"
        load_provider_class("reference")
        assert "providers.reference" in sys.modules
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
