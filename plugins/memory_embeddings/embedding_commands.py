"""`atomic-agent memory embeddings` (status) and `atomic-agent memory reembed`.

They join the memory plugin's `memory` command group when it is there (the memory plugin
owns memory.sqlite and that group); without it they stand under `memory-embeddings`.
"""

from __future__ import annotations

from typing import Any

import typer

from atomic_agent.api import current_cli_state, fail, print_json

JSON_OPT = typer.Option(False, "--json", help="Print JSON instead of text.")


def status_command(ctx: typer.Context, json_out: bool = JSON_OPT) -> None:
    """Hybrid recall: on or off, the embedding model, how many notes have vectors, the last failure."""
    from . import CONFIG_KEY
    from .embedding_status import embedding_status

    config = current_cli_state(ctx).config
    status = embedding_status(config.state_dir, bool(config.block(CONFIG_KEY).enabled))
    if json_out:
        print_json(status)
        return
    print(f"hybrid recall: {'on' if status['enabled'] else 'off'} (memoryEmbeddings.enabled)")
    print(f"  model:      {status['model'] or 'none yet'}" + (f" ({status['dim']} dimensions)" if status['dim'] else ""))
    print(f"  embedded:   {status['embedded']} of {status['notes']} notes ({status['pending']} pending)")
    for model, count in status["byModel"].items():
        if model != status["model"]:
            print(f"  other:      {count} vectors of {model} (unused; `memory reembed --all` drops them)")
    print(f"  index:      {status['index']}" + ("" if status["indexExists"] else " (not created yet)"))
    print(f"  fallbacks:  {status['fallbacks']}")
    failure = status["lastFailure"]
    if failure:
        print(f"  last fallback: {failure['path']} {failure['reason']} at {failure['at']}: {failure['detail']}")


def reembed_command(ctx: typer.Context,
                    every_model: bool = typer.Option(False, "--all", help="Also drop vectors of other models."),
                    json_out: bool = JSON_OPT) -> None:
    """Embed every note again with the current embedding model (after changing the model)."""
    from . import CONFIG_KEY, SERVICE_NAME

    state = current_cli_state(ctx)
    if not state.config.block(CONFIG_KEY).enabled:
        fail("hybrid recall is off; set memoryEmbeddings.enabled to true first")

    async def run() -> dict[str, Any]:
        from atomic_agent.api import EmbeddingUnavailable, create_runtime

        runtime = await create_runtime(boot_context=state.require())
        try:
            hybrid = runtime.service(SERVICE_NAME)
            try:
                written = await hybrid.writer.reembed(every_model)
            except EmbeddingUnavailable as exc:
                fail(str(exc))
            from .embedding_status import embedding_status

            return {"written": written, **embedding_status(runtime.state_dir, True)}
        finally:
            await runtime.close()

    import asyncio  # here, not at import: `--help` lists this command without asyncio

    result = asyncio.run(run())
    if json_out:
        print_json(result)
    else:
        print(f"embedded {result['written']} notes with {result['model']}; {result['pending']} pending")
    if result["pending"]:
        failure = result.get("lastFailure") or {}
        fail(f"{result['pending']} notes could not be embedded: {failure.get('detail', 'see `memory embeddings`')}")


def add_memory_commands(app: Any) -> None:
    group = next((info.typer_instance for info in getattr(app, "registered_groups", [])
                  if info.name == "memory" and info.typer_instance is not None), None)
    if group is None:
        group = typer.Typer(no_args_is_help=True)
        app.add_typer(group, name="memory-embeddings", help="Hybrid memory recall: status and re-embedding.")
    group.command("embeddings")(status_command)
    group.command("reembed")(reembed_command)
