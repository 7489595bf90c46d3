"""The pluggy markers for the `atomic_agent` project name (the only pluggy names plugins see)."""

import pluggy

PROJECT_NAME = "atomic_agent"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
