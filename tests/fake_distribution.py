"""Write a real installed distribution (module + .dist-info) into a site directory.

This is the same on-disk shape pip leaves behind, so importlib.metadata discovers it
exactly as it would a pip-installed third-party plugin.
"""

from __future__ import annotations

from pathlib import Path


def write_distribution(site: Path, dist: str, version: str, modules: dict[str, str],
                       entry_points: dict[str, str]) -> Path:
    site.mkdir(parents=True, exist_ok=True)
    for module, source in modules.items():
        (site / f"{module}.py").write_text(source)
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[atomic_agent]\n{lines}")
    (info / "RECORD").write_text("")
    return info
