"""The single cattrs converter for config blocks: camelCase keys, unknown keys refused."""

from __future__ import annotations

import functools
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from atomic_agent.config.config_fields import to_camel

T = TypeVar("T")


def _strict_int(value: object, _type: type) -> int:
    """An int field takes a JSON integer only: 4.5, 4.0, "4" and true are refused, never
    truncated or coerced (cattrs' default `int(value)` made `4.5` silently a 4)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"value must be an integer, got {value!r}")
    return value


def _strict_bool(value: Any, _type: type) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"value must be true or false, got {value!r}")
    return value


def _make_converter(forbid_extra_keys: bool, detailed_validation: bool = False) -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=forbid_extra_keys, detailed_validation=detailed_validation)
    conv.register_structure_hook(int, _strict_int)
    conv.register_structure_hook(bool, _strict_bool)  # bool is an int subclass: keep it off the int hook

    # dict[str, Any]: mypy cannot tell a ** mapping of attribute names from the named parameters
    def structure_factory(cls: type) -> Any:
        overrides: dict[str, Any] = {f.name: override(rename=to_camel(f.name)) for f in attrs.fields(cls)}
        return make_dict_structure_fn(cls, conv, _cattrs_forbid_extra_keys=forbid_extra_keys, **overrides)

    def unstructure_factory(cls: type) -> Any:
        overrides: dict[str, Any] = {f.name: override(rename=to_camel(f.name)) for f in attrs.fields(cls)}
        return make_dict_unstructure_fn(cls, conv, **overrides)

    conv.register_structure_hook_factory(attrs.has, structure_factory)
    conv.register_unstructure_hook_factory(attrs.has, unstructure_factory)
    return conv


#: for files at or below the running version: a misspelled key is an error
strict_converter = _make_converter(forbid_extra_keys=True)
#: for files written by a newer build: keys this build does not know are ignored
lenient_converter = _make_converter(forbid_extra_keys=False)


@functools.cache
def _detailed(forbid_extra_keys: bool) -> cattrs.Converter:
    """The same converter with cattrs' detailed validation, whose errors name every bad field."""
    return _make_converter(forbid_extra_keys, detailed_validation=True)


def structure_block(raw: Any, cls: type[T], *, newer: bool = False) -> T:
    """`raw` (a config block as on disk) as `cls`; raises what `describe_structure_error` reads.

    The structuring code cattrs generates without detailed validation is half the work of a
    start's config load, so a block is structured that way first; only one that fails is
    structured again with detailed validation, which raises the error naming the field (or, were
    the two ever to disagree, returns what the detailed one accepts)."""
    try:
        return (lenient_converter if newer else strict_converter).structure(raw, cls)
    except Exception:
        return _detailed(not newer).structure(raw, cls)


def unstructure_block(value: object) -> dict[str, Any]:
    block: dict[str, Any] = strict_converter.unstructure(value)
    return block


def describe_structure_error(exc: Exception, block_key: str) -> tuple[str, str]:
    """(location, problem) for a structuring failure, with camelCase `block.field` paths."""
    leaf = _first_validator_error(exc)
    if leaf is not None:
        field = str(leaf).split(" ", 1)[0]
        return f"{block_key}.{field}", str(leaf)
    if isinstance(exc, cattrs.BaseValidationError):
        messages = cattrs.transform_error(exc, path=block_key)
    else:
        messages = [f"{exc} @ {block_key}"]
    problem, _, location = messages[0].partition(" @ ")
    hook = _hook_error(exc)
    if hook is not None:  # our strict int/bool hooks say what was given
        problem = str(hook).replace("value must be", "must be", 1)
    parts = location.split(".")
    return ".".join([parts[0], *(to_camel(p) for p in parts[1:])]), problem


def _hook_error(exc: BaseException) -> BaseException | None:
    if isinstance(exc, cattrs.BaseValidationError):
        for inner in exc.exceptions:
            found = _hook_error(inner)
            if found is not None:
                return found
        return None
    return exc if type(exc) is ValueError and str(exc).startswith("value must be") else None


def _first_validator_error(exc: BaseException) -> BaseException | None:
    """attrs validators raise ValueError with our own message; cattrs nests it."""
    if isinstance(exc, cattrs.BaseValidationError):
        for inner in exc.exceptions:
            found = _first_validator_error(inner)
            if found is not None:
                return found
        return None
    return exc if type(exc) is ValueError and " must be " in str(exc) and not str(exc).startswith("value ") else None
