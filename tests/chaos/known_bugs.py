"""Open product bugs the chaos suites found, named once so every pin says the same thing.

Each is pinned as a non-strict xfail (a regression seed or an exhaustive scenario) that
fails deterministically today; when the bug is fixed the pin shows up as XPASS — then
delete the constant and its marks.
"""

from __future__ import annotations

# (none open)
