"""The entry-point reader the plugin host uses instead of importlib.metadata finds exactly
what importlib.metadata finds: same entries, same distribution name and version, the first
distribution on the path winning a duplicate name, and an archive on the path handed back."""

from __future__ import annotations

import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from atomic_agent.plugin_host.entry_point_scan import FoundEntryPoint, scan
from tests.fake_distribution import write_distribution


def as_rows(found: list[FoundEntryPoint]) -> list[tuple[str, str, str, str]]:
    return sorted((e.name, e.value, e.dist_name, e.dist_version) for e in found)


def test_scan_agrees_with_importlib_metadata_on_the_installed_plugins() -> None:
    found = scan("atomic_agent")
    assert found is not None
    expected = sorted((e.name, e.value, e.dist.metadata["Name"], e.dist.version)
                      for e in entry_points(group="atomic_agent"))
    assert as_rows(found) == expected and expected


def test_scan_reads_a_written_distribution_and_the_first_on_the_path_wins(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write_distribution(first, "aa-scan-dist", "2.0", {"aa_scan_mod": ""}, {"scanned": "aa_scan_mod:thing"})
    write_distribution(second, "aa-scan-dist", "1.0", {"aa_scan_mod": ""}, {"older": "aa_scan_mod"})
    egg = second / "aa_egg_dist.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: aa-egg-dist\nVersion: 0.3\n\nbody: not a header\n")
    (egg / "entry_points.txt").write_text("[other]\nx = y\n\n[atomic_agent]\negged = aa_egg_mod\n")
    found = scan("atomic_agent", [str(first), str(second), str(tmp_path / "missing")])
    assert found is not None
    assert as_rows(found) == [("egged", "aa_egg_mod", "aa-egg-dist", "0.3"),
                              ("scanned", "aa_scan_mod:thing", "aa-scan-dist", "2.0")]


def test_an_archive_on_the_path_is_left_to_importlib_metadata(tmp_path: Path) -> None:
    archive = tmp_path / "plugins.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    assert scan("atomic_agent", [str(archive)]) is None


def test_load_resolves_module_and_attribute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "aa_scan_target.py").write_text("class Holder:\n    value = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert FoundEntryPoint("x", "aa_scan_target:Holder.value", "", "").load() == 42
    assert FoundEntryPoint("x", "aa_scan_target", "", "").load() is sys.modules["aa_scan_target"]
    with pytest.raises(ValueError):
        FoundEntryPoint("x", "not a value!", "", "").load()
