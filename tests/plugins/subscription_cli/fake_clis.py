"""Fake `claude` and `codex` executables that honour the documented headless flags and print
the documented output formats. FAKE_CLI_MODE picks a behaviour; every run appends one JSON
line (argv, what it saw of ANTHROPIC_API_KEY, its pid, the prompt it read) to FAKE_CLI_LOG.

Modes: ok | signed_out (exits 1 without reading stdin) | rate_limited | trap_term (ignores
SIGTERM and never exits) | truncate (codex: reads 100 bytes, then exits 0 as usual).
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

_COMMON = r'''
import json, os, signal, sys, time

args = sys.argv[1:]
mode = os.environ.get("FAKE_CLI_MODE", "ok")
answer = os.environ.get("FAKE_CLI_ANSWER", "hello from the fake cli")
record = {"cli": __CLI_NAME__, "argv": args, "anthropic_key": os.environ.get("ANTHROPIC_API_KEY"), "pid": os.getpid()}

def log(**extra):
    record.update(extra)
    with open(os.environ["FAKE_CLI_LOG"], "a") as fh:
        fh.write(json.dumps(record) + "\n")

def fail(message, code=1):
    log(failed=message)
    print(message, file=sys.stderr)
    sys.exit(code)

if "--bare" in args:
    fail("error: --bare was passed", 2)
if mode == "signed_out":
    fail(__SIGNED_OUT__)
if mode == "rate_limited":
    fail("API Error: 429 rate limit reached, try again later")
if mode == "trap_term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    log(trapping=True)
    while True:
        time.sleep(0.05)
'''

CLAUDE = _COMMON.replace("__CLI_NAME__", '"claude"').replace(
    "__SIGNED_OUT__", '"Invalid API key \\u00b7 Please run /login"') + r'''
if "--print" not in args and "-p" not in args:
    fail("the fake claude only supports --print")
fmt = args[args.index("--output-format") + 1] if "--output-format" in args else "text"
if fmt == "stream-json" and "--verbose" not in args:
    fail("Error: When using --print, --output-format=stream-json requires --verbose")
prompt = sys.stdin.read()
log(prompt_len=len(prompt), prompt_head=prompt[:120])
usage = {"input_tokens": len(prompt) // 4, "output_tokens": 6, "cache_read_input_tokens": 3}
result = {"type": "result", "subtype": "success", "is_error": False, "result": answer, "session_id": "fake",
          "total_cost_usd": 0.0123, "usage": usage}
if fmt == "json":
    print(json.dumps(result))
elif fmt == "stream-json":
    print(json.dumps({"type": "system", "subtype": "init", "tools": []}))
    if "--include-partial-messages" in args:
        for word in answer.split(" "):
            print(json.dumps({"type": "stream_event", "event": {"type": "content_block_delta", "index": 0,
                                                                "delta": {"type": "text_delta", "text": word + " "}}}),
                  flush=True)
    print(json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": answer}]}}))
    print(json.dumps(result))
else:
    print(answer)
'''

CODEX = _COMMON.replace("__CLI_NAME__", '"codex"').replace(
    "__SIGNED_OUT__", '"Not logged in. Run `codex login` to sign in."') + r'''
if not args or args[0] != "exec" or args[-1] != "-":
    fail("the fake codex only supports `codex exec ... -` (prompt on stdin)")
if mode == "truncate":
    prompt = sys.stdin.read(100)
else:
    prompt = sys.stdin.read()
log(prompt_len=len(prompt), prompt_head=prompt[:120])
events = [{"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"},
          {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "thinking"}},
          {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": answer}},
          {"type": "turn.completed", "usage": {"input_tokens": len(prompt) // 4, "cached_input_tokens": 2,
                                               "output_tokens": 5}}]
for event in events:
    print(json.dumps(event), flush=True)
'''


def install_fake_clis(bin_dir: Path) -> dict[str, Path]:
    bin_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, body in (("claude", CLAUDE), ("codex", CODEX)):
        path = bin_dir / name
        path.write_text(f"#!{sys.executable}\n{body}")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        paths[name] = path
    return paths
