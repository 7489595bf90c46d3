"""Exa through its hosted MCP endpoint: one JSON-RPC `tools/call` of `web_search_exa`.

Keyless by default; with the API key env var set the key rides as `exaApiKey`. The
answer may come as plain JSON or as a server-sent-events stream; the tool result is
text that is either JSON or "Title: / URL: / Text:" blocks.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import attrs

from .search_result import ProviderFailed, SearchResult


def _rpc_payload(body: str) -> Any:
    text = body.strip()
    if text.startswith("{"):
        return json.loads(text)
    payloads = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    for payload in reversed(payloads):
        if payload.startswith("{"):
            return json.loads(payload)
    raise ValueError("no JSON-RPC message in the answer")


def _from_text(text: str) -> list[SearchResult]:
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError:
        decoded = None
    if isinstance(decoded, dict) and isinstance(decoded.get("results"), list):
        results = []
        for item in decoded["results"]:
            if isinstance(item, dict) and isinstance(item.get("url"), str):
                snippet = item.get("text") or item.get("snippet") or item.get("summary") or ""
                results.append(SearchResult(str(item.get("title") or ""), item["url"], str(snippet)[:500]))
        return results
    results = []
    for block in re.split(r"\n(?=Title: )", text):
        title = re.search(r"^Title: (.*)$", block, re.M)
        url = re.search(r"^URL: (\S+)", block, re.M)
        body = re.search(r"^(?:Text|Summary|Highlights): ?(.*)", block, re.M | re.S)
        if url:
            results.append(SearchResult(title.group(1).strip() if title else "", url.group(1),
                                        re.sub(r"\s+", " ", body.group(1)).strip()[:500] if body else ""))
    return results


@attrs.define
class ExaProvider:
    url: str
    api_key_env: str = "EXA_API_KEY"
    name: str = "exa"

    async def search(self, query: str, limit: int, http: Any) -> list[SearchResult]:
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        payload = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "web_search_exa", "arguments": {"query": query, "numResults": limit}}}
        response = await http.request(self.name, "POST", self.url, params={"exaApiKey": key} if key else None,
                                      headers={"Accept": "application/json, text/event-stream"}, json_body=payload)
        try:
            message = _rpc_payload(response.text)
        except (ValueError, json.JSONDecodeError) as exc:
            raise ProviderFailed(f"exa: unreadable answer ({exc})") from None
        if "error" in message:
            raise ProviderFailed(f"exa: {str(message['error'])[:200]}")
        content = (message.get("result") or {}).get("content") or []
        text = "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
        return _from_text(text)[:limit]
