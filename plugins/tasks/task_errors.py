"""The errors of the task plugin: bad input (with the field to fix) and an unusable store."""

from __future__ import annotations


class TaskValidationError(ValueError):
    """Input a task cannot be made of; `field` names what to fix (a tool shows it to the model)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.problem = message


class TaskNotFoundError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


class TaskStoreError(RuntimeError):
    """tasks.sqlite cannot be used (corrupt, newer, locked); it was left untouched."""


class TaskStateError(ValueError):
    """The change asked for does not apply to the task in its current status (edit a running
    task, pause a completed one); the message says what to do instead."""
