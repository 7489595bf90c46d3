"""atomic-agent: a local operator agent runtime composed from plugins.

Plugins write ``from atomic_agent import hookimpl``; everything else a plugin or embedder
may use lives in :mod:`atomic_agent.api`.
"""

from atomic_agent.hookspecs import hookimpl

__version__ = "0.1.0"

__all__ = ["hookimpl", "__version__"]
