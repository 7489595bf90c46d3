"""The hard ceiling on tool calls in one step, shared by the grammar and the parser."""

# The grammar never allows more; the runtime's agent.maxParallelToolCalls soft cap sits below it.
HARD_MAX_TOOL_CALLS = 16
