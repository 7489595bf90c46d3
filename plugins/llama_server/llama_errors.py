"""The errors the llama-server plugin raises; `str()` of each is a complete one-paragraph
message (what went wrong and what to do), so commands print it as is."""

from __future__ import annotations


class LlamaServerError(Exception):
    """Base class: a problem with the local llama-server, its binary or its models."""


class BinaryMissingError(LlamaServerError):
    """No runnable llama-server binary (not built yet, or `llama.binary` is wrong)."""


class BuildError(LlamaServerError):
    """Fetching or compiling llama-server failed."""


class ModelMissingError(LlamaServerError):
    """The configured model is not registered or its file is gone."""


class ModelRegistryError(LlamaServerError):
    """A models.json problem or a bad `models add/use` request."""


class DownloadError(LlamaServerError):
    """A model download failed (HTTP error, not a GGUF, checksum mismatch)."""


class PortInUseError(LlamaServerError):
    """Something already listens on the port the server should use."""


class ServerStartError(LlamaServerError):
    """The server process exited, or never became healthy, while starting."""


class ServerStopError(LlamaServerError):
    """The server process could not be stopped."""


class WorkStopped(LlamaServerError):
    """An install or a pull was stopped part-way because the task awaiting it was cancelled
    (the TUI quit); the message says what was kept and how the next run goes on."""
