"""`atomic-agent prompt show`: the exact next prompt, each section with its token count, and
the prompt style in use with the reason it was chosen."""

from __future__ import annotations

import json

import typer

from atomic_agent.api import current_cli_state, fail

prompt_app = typer.Typer(no_args_is_help=True)


@prompt_app.command("show")
def prompt_show_command(
    ctx: typer.Context,
    session: str = typer.Option(None, "--session", help="Render the next step of this session."),
    message: str = typer.Option(None, "--message", help="Add this as the next user message."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON (prompt, sections, grammar)."),
    no_grammar: bool = typer.Option(False, "--no-grammar", help="Leave the grammar out."),
) -> None:
    """Render the prompt and grammar the next step would send; works with no server."""
    import asyncio

    from atomic_agent.api import SessionNotFoundError, create_runtime

    state = current_cli_state(ctx)

    async def go():  # the preview record is not public API: its type stays inferred
        runtime = await create_runtime(boot_context=state.require())
        try:
            return await runtime.preview_prompt(session, message)
        finally:
            await runtime.close()

    try:
        preview = asyncio.run(go())
    except SessionNotFoundError as exc:
        fail(str(exc))
    mark = "~" if preview.estimated else ""
    if json_out:
        print(json.dumps({"prompt": preview.text, "profile": preview.profile, "estimated": preview.estimated,
                          "style": preview.style.name, "styleReason": preview.style.reason,
                          "note": preview.server_note, "grammar": None if no_grammar else preview.grammar,
                          "sections": [{"name": n, "tokens": t, "text": x} for n, x, t in preview.sections]}, indent=2))
        return
    print(preview.text, end="" if preview.text.endswith("\n") else "\n")
    print("\n--- sections (tokens" + (", estimated" if preview.estimated else "") + ") ---")
    for name, _text, tokens in preview.sections:
        print(f"{name:<16} {mark}{tokens}")
    print(f"{'total':<16} {mark}{sum(t for _, _, t in preview.sections)}   profile: {preview.profile}")
    print(f"style: {preview.style.describe()}")
    if preview.server_note:
        print(f"note: {preview.server_note}")
    if not no_grammar and preview.grammar:
        print("\n--- grammar ---")
        print(preview.grammar, end="")
