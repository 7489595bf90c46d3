"""The run shape of each suite (what it breaks and how often)."""

from __future__ import annotations

from tests.chaos.chaos_run import RunSpec
from tests.chaos.graceful_stop_run import StopSpec
from tests.chaos.workload import Mix

CRASH_RECOVERY = RunSpec(Mix(sessions=2, messages=(3, 6), steer=0.2), crashes=(1, 4), crash_window=40)
QUEUES = RunSpec(Mix(sessions=2, messages=(4, 8), steer=0.6, max_gap=4), crashes=(2, 4), crash_window=25,
                 ops_per_life=(1, 4))
COMPACTION = RunSpec(Mix(sessions=1, messages=(3, 5), steer=0.1, compact=0.8), crashes=(1, 3), crash_window=40)
COMPACTION_UNDER_LOAD = RunSpec(Mix(sessions=2, messages=(5, 8), steer=0.5, compact=0.5, max_gap=2),
                                crashes=(1, 3), crash_window=50)
INTERRUPTION = RunSpec(Mix(sessions=2, messages=(3, 6), steer=0.3, stop=0.4, cancel=0.4, abort=0.4), crashes=(0, 2),
                       crash_window=50)
FLAKY_STORE = RunSpec(Mix(sessions=2, messages=(3, 6), steer=0.3), crashes=(1, 1), crash_window=10_000, flaky=0.08)
CONCURRENCY = RunSpec(Mix(sessions=3, messages=(6, 10), steer=0.5, stop=0.15, cancel=0.15, compact=0.1, max_gap=1),
                      crashes=(0, 0))
TWO_OWNERS = RunSpec(Mix(sessions=2, messages=(4, 8), steer=0.4, max_gap=3), crashes=(0, 2), crash_window=40,
                     owners=2)
OWNER_PROCESSES = RunSpec(Mix(sessions=2, messages=(4, 8), steer=0.4, max_gap=3), crash_window=40, owners=2)
GRACEFUL_STOP = StopSpec(Mix(sessions=2, messages=(4, 8), steer=0.4, stop=0.1, cancel=0.1, max_gap=3), stops=(1, 3),
                         signal_window=30)
