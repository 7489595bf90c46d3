"""A stdio "MCP server" that starts and never answers the handshake (reads and ignores stdin)."""

import sys
import time

for _line in sys.stdin:
    time.sleep(0.01)
time.sleep(3600)
