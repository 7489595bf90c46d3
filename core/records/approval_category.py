"""What a plugin registers to add a category to the five-level approval ladder."""

import attrs


def _check_level(_inst: object, _attr: attrs.Attribute, value: int) -> None:
    if not isinstance(value, int) or not 1 <= value <= 5:
        raise ValueError(f"auto_approve_level must be an integer in 1..5, got {value!r}")


@attrs.frozen
class ApprovalCategory:
    """A named category: calls in it are auto-approved from `auto_approve_level` up.

    `grantable` says whether a per-session grant may silence it (trust_config never).
    `always_asks` makes a category that no level silences, not even 5 (full trust): the
    gate asks every time, and with no one to ask the answer is no. It is for calls the
    guards cannot judge (a shell line whose effect depends on what a download or a
    decoder produces), never for ordinary work.
    """

    name: str
    auto_approve_level: int = attrs.field(validator=_check_level)
    label: str
    grantable: bool = True
    plugin: str = ""
    always_asks: bool = False
