"""The `atomic-agent` command line, composed from the core's and every plugin's commands."""
