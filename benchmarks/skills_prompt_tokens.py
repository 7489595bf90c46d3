"""What the skills plugin adds to the stable prefix: the `### skills` block with the starter
skills, and the two skill tools' lines under `### tools`, in tokens.

Usage: .venv/bin/python benchmarks/skills_prompt_tokens.py [--style coached|full]

Three stable prefixes from a fresh state dir with every installed plugin: the skills plugin
off, on with every skill disabled (its tools only), on with the seeded starters. Tokens are
the runtime's estimate (chars / 3.6, errs high) unless ATOMIC_AGENT_LLAMA_URL points at a
llama-server, whose /tokenize counts them exactly.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
from pathlib import Path

from atomic_agent.api import ScriptedProvider, create_runtime, estimate_tokens, installed_plugin_host
from atomic_agent.config.migrate_config import CONFIG_VERSION


async def prefix(state: Path, ws: Path, blocks: dict, disabled_plugins: list[str]) -> str:
    from atomic_agent.runtime.boot_context import boot

    state.mkdir(parents=True, exist_ok=True)
    (state / "config.json").write_text(json.dumps({"version": CONFIG_VERSION, **blocks}))
    env: dict[str, str] = {}
    host = installed_plugin_host(environ=env, disabled=disabled_plugins)
    provider = None
    if os.environ.get("ATOMIC_AGENT_LLAMA_URL") is None:
        provider = ScriptedProvider([])
    runtime = await create_runtime(boot_context=boot(state, environ=env, host=host), provider=provider)
    try:
        plan = await runtime.prompt_plan()
        return plan.stable_prefix_for(ws)
    finally:
        await runtime.close()


async def count(text: str) -> tuple[int, str]:
    url = os.environ.get("ATOMIC_AGENT_LLAMA_URL")
    if url:
        import httpx

        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            answer = await client.post("/tokenize", json={"content": text})
            return len(answer.json()["tokens"]), "llama-server /tokenize"
    return estimate_tokens(text), "estimate"


async def main(style: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = root / "ws"
        ws.mkdir()
        prompt = {"prompt": {"style": style}}
        off = await prefix(root / "off", ws, prompt, ["skills"])
        tools_only = await prefix(root / "tools", ws, {**prompt, "skills": {"seedStarters": False}}, [])
        starters = await prefix(root / "starters", ws, prompt, [])
        block = starters[starters.index("### skills\n"):starters.index("### tools\n")]
        rows = [("stable prefix, skills plugin off", off), ("+ skill tools, no skills", tools_only),
                ("+ starter skills (seeded)", starters), ("### skills block alone", block)]
        for label, text in rows:
            tokens, how = await count(text)
            print(f"{label:36} {tokens:6d} tokens ({how}), {len(text)} chars")
        added = (await count(starters))[0] - (await count(off))[0]
        print(f"skills plugin adds {added} tokens to the stable prefix ({style} style)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--style", default="coached", choices=("coached", "full"))
    asyncio.run(main(parser.parse_args().style))
