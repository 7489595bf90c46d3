"""The environment a tool's child process gets: a safe baseline, not the agent's secrets.

The runtime loads API keys and bot tokens from `<state>/.env` into its own environment;
a subprocess started by a tool (shell, git, ps, a skill script) gets only the baseline
variables plus the names the tool or the user's config declares, so those secrets do not
leak into every child. See `child_environment.child_environment`. The `os` plugin's
`exec` config block holds the user's switch (`filterEnvironment`, `allowedEnvironment`).
"""
