"""What the TUI's Providers panel may do, and the only code of the panel that touches the runtime.

Cloud (and other OpenAI-compatible) providers: list, add with the key verified before
anything is saved, re-verify, choose the active one; and the fallback chain: add, remove,
move. Every edit reads config.json as it is now, validates the whole `llm` block, then
writes it (the runtime's config is the boot snapshot; a restart applies the change). Keys
go to the state dir's `.env` (0600) and are never returned or put in a message. Nothing
here imports Textual.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs

from .endpoint_entry import EntryError, resolve_endpoint
from .fallback_chain import declared_links, effective_chain, fixed_positions
from .key_variables import default_key_env, key_env
from .vendor_presets import PRESETS, PRESETS_BY_ID
from .verify_key import VerifyTarget, VerifyVerdict, verify_provider_key

KIND = "openai-compatible"
PRESET_IDS = tuple(p.id for p in PRESETS)


class ProviderRejected(ValueError):
    """The key check refused the key (rejected, or no credit): nothing was saved."""

    def __init__(self, verdict: VerifyVerdict) -> None:
        super().__init__(f"the key check said {verdict.status}: {verdict.detail}")
        self.verdict = verdict


@attrs.frozen
class ProviderRow:
    id: str
    kind: str
    model: str
    preset: str
    key: str  # "$NAME set" / "$NAME missing" / "not needed" / "-", never the key
    active: bool


@attrs.frozen
class ChainRow:
    id: str
    tag: str  # why a link cannot move, or ""
    movable: bool


def key_of(entry: dict[str, Any], environ: dict[str, str]) -> str:
    env = key_env(entry)
    return environ.get(env, "").strip() if env else ""


def _without(verdict: VerifyVerdict, key: str) -> VerifyVerdict:
    """The verdict with the key cut out of its detail: the detail quotes the endpoint's answer,
    and an endpoint that echoes the request would otherwise put the key in a notice."""
    if len(key) < 4 or key not in verdict.detail:
        return verdict
    return attrs.evolve(verdict, detail=verdict.detail.replace(key, "<key>"))


class ProvidersPanelOrchestrator:
    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime

    @property
    def path(self) -> Path:
        return Path(self.runtime.config.path)

    @property
    def dotenv(self) -> Path:
        return Path(self.runtime.state_dir) / ".env"

    def _environ(self) -> dict[str, str]:
        """Where keys are looked up: the process environment and the state dir's .env as it is now."""
        from atomic_agent.api import dotenv_file

        environ = dict(getattr(self.runtime, "environ", None) or os.environ)
        try:
            values, _problems = dotenv_file.parse_dotenv(self.dotenv.read_text(encoding="utf-8"))
        except OSError:
            values = {}
        return {**environ, **values}

    def _raw(self) -> tuple[dict[str, Any], dict[str, Any]]:
        from atomic_agent.api import read_raw_config

        raw = read_raw_config(self.path)
        llm = raw.get("llm")
        if llm is None:
            llm = raw["llm"] = {}
        if not isinstance(llm, dict):
            raise ValueError(f"{self.path}: `llm` must be an object; fix it by hand first")
        return raw, llm

    def llm(self) -> Any:
        from atomic_agent.api import llm_config

        return llm_config.structure_llm_block(self._raw()[1], self.path)

    def _save(self, raw: dict[str, Any], llm: dict[str, Any]) -> None:
        """Validate the whole edited block, then write; ConfigError names what is wrong."""
        from atomic_agent.api import config_file, llm_config

        llm_config.structure_llm_block(llm, self.path)
        raw["llm"] = llm
        config_file.save_raw_config(self.path, raw, self.runtime.config_blocks)

    # -- providers -------------------------------------------------------------------------
    def providers(self) -> list[ProviderRow]:
        llm, environ = self.llm(), self._environ()
        entries = [dict(e) for e in llm.providers] or [{"id": "local", "kind": "llama-server"}]
        active = llm.active_text_provider or entries[0]["id"]
        rows = []
        for entry in entries:
            rows.append(ProviderRow(entry["id"], entry["kind"], str(entry.get("model") or ""),
                                    str(entry.get("preset") or ""), self._key_state(entry, environ),
                                    entry["id"] == active))
        return rows

    @staticmethod
    def _key_state(entry: dict[str, Any], environ: dict[str, str]) -> str:
        if entry.get("kind") != KIND:
            return "-"
        env = key_env(entry)
        if not env:
            return "not needed"
        return f"${env} set" if environ.get(env, "").strip() else f"${env} missing"

    async def add(self, provider_id: str, preset: str, model: str, base_url: str, key: str) -> VerifyVerdict | None:
        """Add an openai-compatible provider; the key is checked first and a rejected key saves
        nothing (ProviderRejected). ValueError for a form that cannot make an entry. Returns the
        verdict (None for a local preset, which needs no check)."""
        provider_id, preset, model, base_url, key = (v.strip() for v in (provider_id, preset, model, base_url, key))
        if not provider_id:
            raise ValueError("the provider needs an id, e.g. openrouter-mini")
        if preset not in PRESETS_BY_ID:
            raise ValueError(f"unknown preset {preset!r}; one of {', '.join(PRESET_IDS)}")
        entry: dict[str, Any] = {"id": provider_id, "kind": KIND, "preset": preset}
        for field, value in (("model", model), ("baseUrl", base_url)):
            if value:
                entry[field] = value
        raw, llm = self._raw()
        if any(isinstance(e, dict) and e.get("id") == provider_id for e in llm.get("providers") or []):
            raise ValueError(f"a provider with id {provider_id!r} already exists; pick another id")
        if key and not key_env(entry):
            entry["apiKeyEnv"] = default_key_env(provider_id)  # the entry must name where its key lives
        verdict = None
        if not PRESETS_BY_ID[preset].local:
            verdict = _without(await self._verify(entry, key or None), key)
            if verdict.blocking:
                raise ProviderRejected(verdict)
        llm["providers"] = [*(llm.get("providers") or []), entry]
        self._save(raw, llm)
        if key:
            from atomic_agent.api import dotenv_file

            dotenv_file.set_dotenv_key(self.dotenv, key_env(entry), key)
        return verdict

    async def verify(self, provider_id: str) -> VerifyVerdict:
        entry = next((dict(e) for e in self.llm().providers if e["id"] == provider_id), None)
        if entry is None or entry.get("kind") != KIND:
            raise ValueError(f"{provider_id!r} is not an openai-compatible provider; only those have a key to check")
        return _without(await self._verify(entry, None), key_of(entry, self._environ()))

    async def _verify(self, entry: dict[str, Any], key: str | None) -> VerifyVerdict:
        environ = self._environ()
        if key is not None and key_env(entry):
            environ[key_env(entry)] = key
        try:
            ep = resolve_endpoint(entry, environ)
        except EntryError as exc:
            raise ValueError(str(exc)) from None
        return await verify_provider_key(VerifyTarget(ep.base_url, ep.model, ep.api_key, ep.api_key_header,
                                                      ep.headers, ep.preset))

    def use(self, provider_id: str) -> None:
        raw, llm = self._raw()
        llm["activeTextProvider"] = provider_id
        self._save(raw, llm)

    # -- the fallback chain ----------------------------------------------------------------
    def chain(self) -> list[ChainRow]:
        llm = self.llm()
        chain, local, _ids = effective_chain(llm)
        fixed = fixed_positions(chain, llm, local)
        rows = []
        for n, pid in enumerate(chain):
            tag = "active (primary)" if n == 0 else ("local last resort" if n in fixed else "")
            rows.append(ChainRow(pid, tag, n not in fixed))
        return rows

    def _store_chain(self, new_chain: list[str]) -> None:
        from atomic_agent.api import llm_config

        raw, block = self._raw()
        llm = llm_config.structure_llm_block(block, self.path)
        _, local, _ = effective_chain(llm)
        fallback = dict(block.get("fallback") or {})
        fallback["chain"] = list(declared_links(new_chain, llm.fallback, local))
        block["fallback"] = fallback
        self._save(raw, block)

    def chain_add(self, provider_id: str) -> None:
        llm = self.llm()
        chain, local, ids = effective_chain(llm)
        if provider_id not in ids:
            raise ValueError(f"no provider {provider_id!r} is configured")
        if provider_id in chain:
            raise ValueError(f"{provider_id!r} is already in the fallback chain")
        fixed = fixed_positions(chain, llm, local)
        at = len(chain) - 1 if (len(chain) - 1) in fixed and len(chain) > 1 else len(chain)
        chain.insert(at, provider_id)
        self._store_chain(chain)

    def chain_remove(self, provider_id: str) -> None:
        llm = self.llm()
        chain, local, _ = effective_chain(llm)
        if provider_id not in chain:
            raise ValueError(f"{provider_id!r} is not in the fallback chain")
        if chain.index(provider_id) in fixed_positions(chain, llm, local):
            raise ValueError(f"{provider_id!r} stays: the head is the active provider and the local last resort "
                             "follows llm.fallback.appendLocal")
        chain.remove(provider_id)
        self._store_chain(chain)

    def chain_move(self, provider_id: str, step: int) -> bool:
        """Move one place up (-1) or down (+1); False when it is already at the movable end."""
        llm = self.llm()
        chain, local, _ = effective_chain(llm)
        fixed = fixed_positions(chain, llm, local)
        here = chain.index(provider_id) if provider_id in chain else -1
        if here < 0 or here in fixed:
            raise ValueError(f"{provider_id!r} cannot move: the head is the active provider and the local last "
                             "resort stays last")
        there = here + step
        if not 0 <= there < len(chain) or there in fixed:
            return False
        chain[here], chain[there] = chain[there], chain[here]
        self._store_chain(chain)
        return True
