"""A real MCP server written with the SDK's own server API (`MCPServer`), run by the tests
over stdio (`python demo_server.py`) or streamable HTTP (`python demo_server.py --http PORT`).

Behaviour switches come from the environment so one file serves every scenario:
DEMO_DESCRIPTION replaces `echo`'s description (drift), DEMO_BAD_TOOLS adds tools with
invalid names and a colliding duplicate, DEMO_MARKER_FILE is appended to on every
`write_note` call (proves whether the server was contacted), DEMO_WRITE_NOTE_READ_ONLY
flips `write_note`'s readOnlyHint to true, DEMO_LATE_TOOL adds a tool `late` (a tool the
server adds after its catalog was approved), DEMO_EXTRA_TOOLS=N adds N more tools, and
DEMO_HUGE_SCHEMA adds a tool whose input schema is over 64 KiB.
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import SamplingMessage, TextContent, ToolAnnotations

app = MCPServer("demo", version="1.0")
MARKER = os.environ.get("DEMO_MARKER_FILE")


def _mark(text: str) -> None:
    if MARKER:
        with open(MARKER, "a", encoding="utf-8") as f:
            f.write(text + "\n")


@app.tool(description=os.environ.get("DEMO_DESCRIPTION", "Echo the text back."),
          annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    _mark(f"echo {text}")
    return f"echo: {text}"


@app.tool(description="Answer pong (no arguments).", annotations=ToolAnnotations(readOnlyHint=True))
def ping() -> str:
    _mark("ping")
    return "pong"


@app.tool(description="Add two integers.", annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    return a + b


@app.tool(description="Write a note (a side effect: asks approval on a gated server).",
          annotations=ToolAnnotations(readOnlyHint=True) if os.environ.get("DEMO_WRITE_NOTE_READ_ONLY") else None)
def write_note(text: str) -> str:
    _mark(f"write_note {text}")
    return f"noted: {text}"


@app.tool(description="Sleep, then answer (for timeouts and parallel batches).",
          annotations=ToolAnnotations(readOnlyHint=True))
async def slow(seconds: float) -> str:
    import anyio

    await anyio.sleep(seconds)
    return f"slept {seconds}"


@app.tool(description="Fail with an error result.")
def broken() -> str:
    raise ValueError("this tool always fails")


@app.tool(description="Crash the whole server process mid-call.")
def crash() -> str:
    os._exit(3)


@app.tool(description="Return a very large text.", annotations=ToolAnnotations(readOnlyHint=True))
def huge(chars: int) -> str:
    return "x" * chars


@app.tool(description="Ask the client's model through sampling/createMessage.")
async def ask_model(question: str, ctx: Context) -> str:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reply = await ctx.session.create_message(
            [SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=24)
    return f"model: {reply.content.text}"


@app.tool(description="Register a new tool and announce tools/list_changed.")
async def grow(ctx: Context) -> str:
    def fresh(word: str) -> str:
        return f"fresh {word}"

    app.add_tool(fresh, name="fresh", description="A tool added at run time.")
    await ctx.session.send_tool_list_changed()
    return "grown"


if os.environ.get("DEMO_LATE_TOOL"):
    app.add_tool(lambda: "late", name="late", description="Added after the catalog was approved.",
                 annotations=ToolAnnotations(readOnlyHint=True))

for i in range(int(os.environ.get("DEMO_EXTRA_TOOLS", "0"))):
    app.add_tool(lambda: "x", name=f"extra_{i}", description="One of many.")

if os.environ.get("DEMO_HUGE_SCHEMA"):
    from typing import Annotated

    from pydantic import Field

    def bloated(text: Annotated[str, Field(description="padding " * 10_000)]) -> str:
        return text

    app.add_tool(bloated, name="bloated", description="A tool with an oversized input schema.")

if os.environ.get("DEMO_BAD_TOOLS"):
    app.add_tool(lambda: "x", name="bad name!", description="invalid name")
    app.add_tool(lambda: "x", name="a" * 80, description="name too long")


@app.resource("memo://readme", description="A small memo.")
def readme() -> str:
    return "the memo text"


@app.prompt(description="Greet someone.")
def greet(name: str) -> str:
    return f"Say hello to {name}."


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "--http":
        import anyio

        anyio.run(lambda: app.run_streamable_http_async(host="127.0.0.1", port=int(sys.argv[2])))
    else:
        app.run()


if __name__ == "__main__":
    main()
