"""Open product bugs the chaos suites found, named once so every pin says the same thing.

Each is pinned as a non-strict xfail (a regression seed or an exhaustive scenario) that
fails deterministically today; when the bug is fixed the pin shows up as XPASS — then
delete the constant and its marks.
"""

from __future__ import annotations

import re

# SteeringInbox.close_and_drain calls SteerQueue.discard, which deletes the accepted steers
# from steer_queue and commits, before the TurnResult carrying them as `undelivered` reaches
# the caller. A death right after that commit loses an accepted steer for good: it is not
# in the conversation, not in the queue (so recovery cannot requeue it), and no caller has it.
HANDBACK_LOST = ("a handed-back steer is deleted from steer_queue before its caller has it "
                 "(SteerQueue.discard in SteeringInbox.close_and_drain): a death after that commit loses it")
HANDBACK_LOST_SIGNATURE = re.compile(r"acknowledged message steer-\S+ is in the conversation 0 times")

# TurnLifecycle._start_in_turn (formerly _catch_up) runs an older queued turn of this owner
# whose own start failed with a store error (its caller already got that error and left), and
# parks the TurnResult in `_results_for_waiters` — where nobody is waiting. A steer accepted while that turn ran and
# handed back at its end is deleted from steer_queue and returned only in that parked result:
# lost without any crash, just one transient write failure.
CATCH_UP_HANDBACK_LOST = ("a turn run for its lane by TurnLifecycle._start_in_turn after its own start failed hands "
                          "its undelivered steers back into _results_for_waiters, which its departed caller never reads")
