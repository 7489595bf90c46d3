"""Vision support read from /props of current and older llama-server releases, in the order
modalities.vision -> has_multimodal -> multimodal -> mmproj."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.llama_client import ServerProps
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from atomic_agent.plugins.llama_server.vision_detection import VisionSupport, detect_vision
from tests.plugins.vision.vision_kit import llama

PROPS = Path(__file__).parent / "props"


def props(name: str) -> dict:
    return json.loads((PROPS / f"{name}.json").read_text())


@pytest.mark.parametrize(("fixture", "expected"), [
    ("current_modalities_vision", VisionSupport(True, "modalities.vision")),
    ("current_text_only", VisionSupport(False, "none")),
    ("b5_has_multimodal", VisionSupport(True, "has_multimodal")),
    ("b4_multimodal", VisionSupport(True, "multimodal")),
    ("legacy_mmproj", VisionSupport(True, "mmproj")),
    ("legacy_text_only", VisionSupport(False, "none")),
])
def test_each_recorded_props_shape_gives_its_answer_and_source(fixture: str, expected: VisionSupport) -> None:
    assert detect_vision(props(fixture)) == expected
    parsed = ServerProps.from_json(props(fixture))
    assert (parsed.vision, parsed.vision_source) == (expected.supported, expected.source)


def test_the_first_source_that_reports_support_wins_in_the_documented_order() -> None:
    everything = {"modalities": {"vision": True}, "has_multimodal": True, "multimodal": True, "mmproj": "/m.gguf"}
    assert detect_vision(everything).source == "modalities.vision"
    # a current server that says no, with an older flag still set: the older flag reports support
    assert detect_vision({**everything, "modalities": {"vision": False}}).source == "has_multimodal"
    assert detect_vision({"has_multimodal": False, "multimodal": True}).source == "multimodal"
    assert detect_vision({"multimodal": False, "mmproj": "/m.gguf"}).source == "mmproj"


@pytest.mark.parametrize("value", [None, "", "   ", 0, 1, "true", [], {}])
def test_values_that_are_not_a_yes_or_a_projector_path_do_not_turn_vision_on(value: object) -> None:
    shaped = {"modalities": {"vision": value}, "has_multimodal": value, "multimodal": value,
              "default_generation_settings": {"mmproj": value if value != "true" else ""}}
    assert detect_vision(shaped) == VisionSupport(False, "none")


async def test_the_provider_reports_what_props_says_and_nothing_before_it_was_read() -> None:
    with FakeLlamaServer(props=props("b5_has_multimodal")) as fake:
        provider = llama(fake.base_url)
        try:
            assert provider.capabilities.vision is False  # /props not read yet
            assert await provider.vision_support() == (True, "has_multimodal")
            assert provider.capabilities.vision is True
            facts = await provider.describe()
            assert facts["vision_source"] == "has_multimodal" and facts["modalities"]["vision"] is True
        finally:
            await provider.close()
