"""Field names on disk are camelCase (`maxParallelToolCalls`); in Python, snake_case."""


def to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)
