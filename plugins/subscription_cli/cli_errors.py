"""Errors of a subscription CLI run, as ProviderErrors the fallback chain understands."""

from __future__ import annotations

from atomic_agent.api import ProviderError, ProviderUnavailableError


class SubscriptionCliError(ProviderError):
    """The CLI failed. `timed_out` marks our own time limit (weak evidence for the chain)."""

    def __init__(self, message: str, status: int | None = None, *, exit_code: int | None = None,
                 stderr: str = "", timed_out: bool = False) -> None:
        super().__init__(message, status=status)
        self.exit_code = exit_code
        self.stderr = stderr
        self.timed_out = timed_out


class SubscriptionCliAuthError(SubscriptionCliError, ProviderUnavailableError):
    """The CLI is signed out (or its plan cannot serve): sign in with the CLI itself."""


class SubscriptionCliMissingError(SubscriptionCliError, ProviderUnavailableError):
    """The CLI is not installed (not on PATH, or the configured binary is gone)."""
