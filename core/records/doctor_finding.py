"""What a `report_doctor_findings` hook returns: one read-only observation about the installation."""

from __future__ import annotations

import attrs

OK, WARN, ERROR = "ok", "warn", "error"


@attrs.frozen
class DoctorFinding:
    """One line of `atomic-agent doctor`: what was checked, how it stands (ok, warn or
    error), what was seen, and what to do about it."""

    check: str
    level: str = attrs.field(validator=attrs.validators.in_((OK, WARN, ERROR)))
    detail: str
    advice: str = ""
    path: str | None = None
    plugin: str = ""
