"""`atomic-agent providers fallback show|add|remove|move`: edit `llm.fallback.chain`.

The chain shown is the effective one (active provider first, local last resort appended);
what is stored is the declared chain, without the synthesised local tail, so an edit
never doubles it. Neither the head nor the appended local link can be moved or removed.
Timing knobs set by hand are kept.
"""

from __future__ import annotations

from typing import Any

import typer

from atomic_agent.api import current_cli_state, fail, print_json, print_table

from .fallback_chain import declared_links, effective_chain, fixed_positions

fallback_app = typer.Typer(no_args_is_help=True)


def _store(ctx: typer.Context, new_chain: list[str]) -> None:
    from atomic_agent.api import llm_config

    from .llm_block_edit import load_llm_block, save_llm_block

    boot, raw, block = load_llm_block(ctx)
    llm = llm_config.structure_llm_block(block, boot.config.path)
    _, local, _ = effective_chain(llm)
    fallback = dict(block.get("fallback") or {})
    fallback["chain"] = list(declared_links(new_chain, llm.fallback, local))
    block["fallback"] = fallback
    save_llm_block(boot, raw, block)


def _current(ctx: typer.Context) -> tuple[Any, list[str], str | None, list[str]]:
    from atomic_agent.api import llm_config

    llm = llm_config.read_llm_config(current_cli_state(ctx).config)
    chain, local, ids = effective_chain(llm)
    return llm, chain, local, ids


@fallback_app.command("show")
def show_command(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The effective chain, primary first."""
    llm, chain, local, ids = _current(ctx)
    fixed = fixed_positions(chain, llm, local)
    rows = []
    for n, pid in enumerate(chain):
        tag = "active (primary)" if n == 0 else ("local last resort (appendLocal)" if n in fixed else "")
        rows.append({"position": n + 1, "id": pid, "tag": tag})
    if as_json:
        print_json({"chain": rows, "appendLocal": llm.fallback.append_local,
                    "addable": [pid for pid in ids if pid not in chain]})
        return
    print_table(["#", "provider", ""], [[r["position"], r["id"], r["tag"]] for r in rows])
    addable = [pid for pid in ids if pid not in chain]
    print(f"appendLocal: {'on' if llm.fallback.append_local else 'off'}"
          + (f"; can add: {', '.join(addable)}" if addable else ""))


@fallback_app.command("add")
def add_command(ctx: typer.Context, provider_id: str = typer.Argument(..., metavar="ID")) -> None:
    """Add a configured provider to the chain (before the appended local last resort)."""
    llm, chain, local, ids = _current(ctx)
    if provider_id not in ids:
        fail(f"no provider {provider_id!r} is configured; configured: {', '.join(ids)}")
    if provider_id in chain:
        fail(f"{provider_id!r} is already in the chain")
    fixed = fixed_positions(chain, llm, local)
    at = len(chain) - 1 if (len(chain) - 1) in fixed and len(chain) > 1 else len(chain)
    chain.insert(at, provider_id)
    _store(ctx, chain)
    print("chain: " + " -> ".join(chain))


@fallback_app.command("remove")
def remove_command(ctx: typer.Context, provider_id: str = typer.Argument(..., metavar="ID")) -> None:
    """Remove a link (not the active head, not the appended local last resort)."""
    llm, chain, local, _ = _current(ctx)
    if provider_id not in chain:
        fail(f"{provider_id!r} is not in the chain ({' -> '.join(chain)})")
    if chain.index(provider_id) in fixed_positions(chain, llm, local):
        fail(f"{provider_id!r} cannot be removed: the head is the active provider and the appended local link "
             "follows llm.fallback.appendLocal")
    chain.remove(provider_id)
    _store(ctx, chain)
    print("chain: " + " -> ".join(chain))


@fallback_app.command("move")
def move_command(ctx: typer.Context, provider_id: str = typer.Argument(..., metavar="ID"),
                 direction: str = typer.Argument(..., help="up or down")) -> None:
    """Move a link one place up or down; a move past either end is a no-op."""
    if direction not in ("up", "down"):
        fail(f"direction must be up or down, not {direction!r}")
    llm, chain, local, _ = _current(ctx)
    if provider_id not in chain:
        fail(f"{provider_id!r} is not in the chain ({' -> '.join(chain)})")
    fixed = fixed_positions(chain, llm, local)
    here = chain.index(provider_id)
    there = here - 1 if direction == "up" else here + 1
    if here in fixed:
        fail(f"{provider_id!r} cannot be moved: the head is the active provider and the appended local link stays last")
    if 0 <= there < len(chain) and there not in fixed:
        chain[here], chain[there] = chain[there], chain[here]
        _store(ctx, chain)
    print("chain: " + " -> ".join(chain))
