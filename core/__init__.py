"""atomic-agent: a local operator agent runtime composed from plugins.

Plugins import ``hookimpl`` and everything else they may use from :mod:`atomic_agent.api`.
"""

from atomic_agent.hookspecs import hookimpl
from atomic_agent.unused_extras import skip_httpx_cli

skip_httpx_cli()  # before anything imports httpx: its CLI (rich, pygments) is never used here

__version__ = "0.1.0"

__all__ = ["hookimpl", "__version__"]
