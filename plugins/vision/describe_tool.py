"""`vision.describe {prompt, path | paths}`: ask the model that can see to describe images.

The tool is registered whenever `vision.enabled` is on; whether the active model can see is
asked at call time (a server restarted with a projector is seen without restarting the
agent), and a model that cannot gets a clear error result, never a crash. The answer comes
back as an ordinary tool result: images never enter the conversation transcript.

Each image goes through the os plugin's `file_reads` guard (workspace containment on the
canonical path, the runtime's secrets refused, credential stores asked), then the byte cap
and the content sniff of `image_file`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView, ToolContext, ToolResult, ToolSpec

NAME = "vision.describe"
CONFIG_KEY = "vision"
MAX_PROMPT_CHARS = 4000
SUMMARY = "Describe or answer a question about image files (PNG, JPEG, GIF, WebP) in the workspace."
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "description": "what to look for or ask about the image(s)"},
        "path": {"type": "string", "description": "one image file, relative to the working directory"},
        "paths": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                  "description": "several images, looked at together (instead of path)"},
    },
    "required": ["prompt"],
    "additionalProperties": False,
}
EXAMPLE = '{"tool":"vision.describe","args":{"prompt":"What error does this screenshot show?","path":"shot.png"}}'


def _paths(args: Mapping[str, Any], cap: int) -> list[str] | str:
    """The image paths asked for, or the error text."""
    path, paths = args.get("path"), args.get("paths")
    if path is not None and paths is not None:
        return "pass either path (one image) or paths (several), not both"
    if path is None and paths is None:
        return "pass path (one image file) or paths (a list of image files)"
    if path is not None:
        return [path] if isinstance(path, str) and path.strip() else "path must be a non-empty string"
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p.strip() for p in paths):
        return "paths must be a non-empty list of file paths"
    if len(paths) > cap:
        return f"{len(paths)} images in one call; at most {cap} (vision.maxImagesPerCall). Split them over several calls."
    return list(paths)


def make_describe(runtime: RuntimeView) -> ToolSpec:
    from atomic_agent.api import ResourceClass, Tier, ToolSpec

    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return await describe(runtime, args, ctx)

    # tier frequent: the full schema and example sit in the stable prefix, so the first call is well formed
    return ToolSpec(name=NAME, summary=SUMMARY, args_schema=SCHEMA, resource_class=ResourceClass.VISION, run=run,
                    tier=Tier.FREQUENT, example=EXAMPLE, durable=True)


async def describe(runtime: RuntimeView, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    from atomic_agent.api import ProviderError, ToolResult
    from atomic_agent.plugins.os.file_reads_contract import FILE_READS_SERVICE

    from .image_describer import image_describer, provider_label
    from .image_file import ImageFileError, read_image
    from .vision_contract import VISION_UNSUPPORTED

    cfg = runtime.config.block(CONFIG_KEY)
    prompt = args.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return ToolResult.error("prompt must say what to look for, e.g. \"Describe this image\"")
    if len(prompt) > MAX_PROMPT_CHARS:
        return ToolResult.error(f"prompt is {len(prompt)} characters; keep it under {MAX_PROMPT_CHARS}")
    wanted = _paths(args, cfg.max_images_per_call)
    if isinstance(wanted, str):
        return ToolResult.error(wanted)

    provider = runtime.provider
    describer = image_describer(provider)
    if describer is None:
        return ToolResult.error(f"the active provider {provider_label(provider)} cannot look at images; use a "
                                "llama-server model started with a projector (models add --mmproj) or a hosted "
                                "model with vision (\"vision\": true in its llm.providers entry)",
                                errorType=VISION_UNSUPPORTED)
    source = "config"
    if cfg.auto_detect:
        try:
            supported, source = await describer.vision_support()
            if not supported:  # the server may have been restarted with a projector since
                supported, source = await describer.vision_support(refresh=True)
        except ProviderError as exc:
            return ToolResult.error(f"could not ask the provider whether it sees images: {exc}")
        if not supported:
            return ToolResult.error("the active model cannot see images (the provider reports no vision); start "
                                    "llama-server with the model's projector (`atomic-agent models add MODEL.gguf "
                                    "--mmproj MMPROJ.gguf`, then `atomic-agent llama start`) or switch to a model "
                                    "with vision. Answer without looking at the image.",
                                    errorType=VISION_UNSUPPORTED)

    reads = runtime.service(FILE_READS_SERVICE, None)
    if reads is None:
        return ToolResult.error("vision.describe reads files through the os plugin, which is disabled; enable it "
                                "(plugins.disabled) to describe images")
    images = []
    for raw in wanted:
        try:
            path = await reads.admit_workspace_read(ctx, raw, NAME)
            images.append(await asyncio.to_thread(read_image, path, raw, cfg.max_image_bytes))
        except (ImageFileError, ValueError) as exc:
            return ToolResult.error(str(exc), path=raw)
    try:
        text = await describer.describe_images(prompt, [(i.mime, i.data) for i in images],
                                               max_images=cfg.max_images_per_call, max_tokens=cfg.max_tokens,
                                               assume_vision=not cfg.auto_detect)
    except ProviderError as exc:
        kind = VISION_UNSUPPORTED if exc.error_type == VISION_UNSUPPORTED else "provider_error"
        return ToolResult.error(f"the model could not describe the image(s): {exc}", errorType=kind)
    except ValueError as exc:
        return ToolResult.error(str(exc))
    if not text:
        return ToolResult.error("the model returned an empty description; ask a more specific question")
    listed = ", ".join(f"{i.shown} ({i.mime}, {len(i.data):,} bytes)" for i in images)
    return ToolResult.ok(f"{listed}:\n{text}", images=[{"path": i.shown, "mime": i.mime, "bytes": len(i.data)}
                                                       for i in images], visionSource=source)
