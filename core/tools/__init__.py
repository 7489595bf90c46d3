"""The tool registry and the tools the core itself provides (reply, finish, tool.view)."""
