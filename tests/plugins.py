"""Install a test provider through a real ``mnemogate.providers`` entry point."""

from __future__ import annotations

from pathlib import Path


def write_entry_point(directory: Path, name: str, target: str) -> Path:
    """A dist-info in ``directory`` declaring ``name = target``; put ``directory`` on the path."""
    info = directory / f"mnemogate_{name}_test-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: mnemogate-{name}-test\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[mnemogate.providers]\n{name} = {target}\n", encoding="utf-8"
    )
    return directory
