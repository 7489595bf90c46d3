"""The program starts up with the cyclic collector off, then freezes what start-up made and
collects as usual; a caller's `main([...])` (a test, an embedder) leaves the collector alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import gc, json, sys
from atomic_agent.cli import main as cli_main

seen = {}
real_compose = cli_main.compose

def compose(args):
    seen["enabled_during_start_up"] = gc.isenabled()
    return real_compose(args)

cli_main.compose = compose
sys.argv = ["atomic-agent", *sys.argv[1:]] if sys.argv[1:2] != ["--given"] else sys.argv[:1]
try:
    if len(sys.argv) > 1:
        cli_main.main()
    else:
        cli_main.main(["--state-dir", STATE, "config", "path"])
except SystemExit:
    pass
seen.update(enabled_after=gc.isenabled(), frozen=gc.get_freeze_count())
print("GC=" + json.dumps(seen), file=sys.stderr)
"""


def _probe(tmp_path: Path, *args: str) -> dict[str, object]:
    code = PROBE.replace("STATE", repr(str(tmp_path)))
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ})
    line = next(x for x in done.stderr.splitlines() if x.startswith("GC="))
    return json.loads(line[3:])


def test_the_program_starts_up_without_the_collector_then_freezes_and_collects(tmp_path: Path) -> None:
    seen = _probe(tmp_path, "--state-dir", str(tmp_path), "config", "path")
    assert seen["enabled_during_start_up"] is False
    assert seen["enabled_after"] is True and int(seen["frozen"]) > 1000  # type: ignore[arg-type]


def test_a_caller_with_its_own_command_line_keeps_its_collector_as_it_was(tmp_path: Path) -> None:
    seen = _probe(tmp_path, "--given")
    assert seen == {"enabled_during_start_up": True, "enabled_after": True, "frozen": 0}
