"""The runtime's channels: built and started after `runtime_started`, stopped before
`runtime_stopping`, each failure isolated to its own channel and reported."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from atomic_agent.plugin_host.collect_registrations import report_failure
from atomic_agent.plugin_host.plugin_host import PluginHost
from atomic_agent.hook_records import Channel, ChannelSpec


class ChannelRunner:
    def __init__(self, host: PluginHost, specs: Sequence[ChannelSpec]) -> None:
        self._host = host
        self.specs = list(specs)
        self.running: dict[str, Channel] = {}
        self.failed: dict[str, str] = {}  # channel name -> what went wrong

    async def start_all(self, runtime: Any) -> None:
        """Build and start every channel in name order; one that raises is reported and left
        out, the others start."""
        for spec in self.specs:
            if spec.name in self.running:
                continue
            try:
                channel = spec.factory(runtime)
                await channel.start()
            except Exception as exc:
                self.failed[spec.name] = f"{type(exc).__name__}: {exc}"
                report_failure(self._host, spec.plugin, f"channel {spec.name!r} start", exc, "it is not running")
                continue
            self.running[spec.name] = channel

    async def stop_all(self) -> None:
        """Stop the running channels, newest first; a failing stop is reported, the rest stop."""
        for name in reversed(list(self.running)):
            channel = self.running.pop(name)
            try:
                await channel.stop()
            except Exception as exc:
                print(f"atomic-agent: channel {name!r} failed to stop: {type(exc).__name__}: {exc}",
                      file=sys.stderr)

    def status(self) -> dict[str, dict[str, Any]]:
        """Each registered channel: running (with its own status) or failed (with the error)."""
        out: dict[str, dict[str, Any]] = {}
        for spec in self.specs:
            if spec.name in self.running:
                try:
                    detail = dict(self.running[spec.name].status())
                except Exception as exc:
                    detail = {"statusError": f"{type(exc).__name__}: {exc}"}
                out[spec.name] = {"state": "running", **detail}
            elif spec.name in self.failed:
                out[spec.name] = {"state": "failed", "error": self.failed[spec.name]}
            else:
                out[spec.name] = {"state": "stopped"}
        return out
