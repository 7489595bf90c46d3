from tests.plugins.openai_compatible.tool_template_server import tool_template_server  # noqa: F401
