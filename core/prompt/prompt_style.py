"""Which prompt a model gets (`prompt.style`): `coached`, `full`, or `auto` to choose by model.

`coached` is the prompt fitted to the 135M starter model: a two-step turn, an example tool
picked from the request's words, and a reply prefilled with the latest tool result for it to
copy. A capable model is held back by all three (one lookup per turn, raw output pasted as
the answer), so `full` describes multi-step work instead and leaves the steps and the words
of the reply to the model.

`auto` reads the model from the provider's `describe()` facts: the parameter count
llama-server reports (`/v1/models` `meta.n_params`) when there is one, else the model's
name, else the kind of provider. Only a small model is coached; anything unknown gets `full`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath

import attrs

# the values prompt.style takes are config's; re-exported for the prompt code
from atomic_agent.config.app_config import AUTO as AUTO
from atomic_agent.config.app_config import COACHED as COACHED
from atomic_agent.config.app_config import FULL as FULL
from atomic_agent.config.app_config import PROMPT_STYLES as PROMPT_STYLES

# (stable prefix, tail) templates of each style, each named for its style: neither is the
# default, and `auto` picks `full` for any model it does not know to be small
STYLE_TEMPLATES: dict[str, tuple[str, str]] = {
    COACHED: ("stable_prefix_coached.j2", "variable_tail_coached.j2"),
    FULL: ("stable_prefix_full.j2", "variable_tail_full.j2"),
}

# below this a model follows one worked example better than rules (SmolLM2 135M/360M, and the
# sub-billion class generally); at or above it the coaching only gets in the way
SMALL_MODEL_MAX_PARAMS = 1_000_000_000
# name fragments of models that are small whatever their server reports (lower case)
SMALL_MODEL_NAMES = ("135m", "360m", "smollm")


@attrs.frozen
class PromptStyle:
    """The style in use (`coached` or `full`, never `auto`) and why it was chosen."""

    name: str = attrs.field(validator=attrs.validators.in_((COACHED, FULL)))
    reason: str = ""

    @property
    def stable_prefix_template(self) -> str:
        return STYLE_TEMPLATES[self.name][0]

    @property
    def tail_template(self) -> str:
        return STYLE_TEMPLATES[self.name][1]

    def describe(self) -> str:
        """`coached (auto: model reports 135M parameters)`."""
        return f"{self.name} ({self.reason})" if self.reason else self.name


# what a plan or preview built without a provider's facts uses: the prompt there always was
COACHED_STYLE = PromptStyle(COACHED, "the default without model facts")


def templates_of(style: str) -> tuple[str, str]:
    """(stable prefix, tail) template names of a resolved style; `auto` must be resolved first."""
    try:
        return STYLE_TEMPLATES[style]
    except KeyError:
        raise ValueError(f"prompt style {style!r} has no templates; resolved styles are "
                         f"{', '.join(STYLE_TEMPLATES)} (resolve {AUTO!r} with resolve_prompt_style)") from None


def format_params(count: int) -> str:
    """134515008 -> '135M', 7615616512 -> '7.6B'."""
    if count >= 1_000_000_000:
        return f"{count / 1e9:.1f}".rstrip("0").rstrip(".") + "B"
    if count >= 1_000_000:
        return f"{round(count / 1e6)}M"
    return str(count)


def model_names(facts: Mapping[str, object]) -> list[str]:
    """The names a provider reports for its model: alias, model id, the GGUF file's name."""
    names = [str(facts.get(key) or "") for key in ("model_alias", "model")]
    path = str(facts.get("model_path") or "")
    if path:
        names.append(PurePath(path).name)
    return [name for name in names if name]


def parameter_count(facts: Mapping[str, object]) -> int | None:
    count = facts.get("n_params")
    # bool is an int: a `true` from a confused server is no count
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else None


def resolve_prompt_style(setting: str, facts: Mapping[str, object] | None = None) -> PromptStyle:
    """The style `setting` (one of PROMPT_STYLES) means for the model `facts` describe."""
    if setting in (COACHED, FULL):
        return PromptStyle(setting, "set by prompt.style")
    if setting != AUTO:
        raise ValueError(f"prompt.style must be one of {', '.join(PROMPT_STYLES)}; got {setting!r}")
    facts = facts or {}
    count = parameter_count(facts)
    if count is not None:
        name = COACHED if count < SMALL_MODEL_MAX_PARAMS else FULL
        return PromptStyle(name, f"auto: model reports {format_params(count)} parameters")
    names = model_names(facts)
    small = next((n for n in names if any(mark in n.lower() for mark in SMALL_MODEL_NAMES)), None)
    if small is not None:
        return PromptStyle(COACHED, f"auto: no parameter count reported; model {small!r} is a small model")
    remote = facts.get("provider") or facts.get("cli")
    if remote:
        return PromptStyle(FULL, f"auto: remote provider {remote!r}")
    if facts.get("reachable") is False:
        return PromptStyle(FULL, "auto: the model is unknown (no server answered)")
    if not names:
        return PromptStyle(FULL, "auto: the provider reports neither a model size nor a name")
    return PromptStyle(FULL, f"auto: no parameter count reported; model {names[0]!r} is not a known small model")
