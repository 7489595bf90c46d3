"""Ranked multi-term model search over the bundled offline OpenRouter catalog."""

from __future__ import annotations

from atomic_agent.plugins.openai_compatible.model_details import context_display, context_tags, model_tags
from atomic_agent.plugins.openai_compatible.model_search import search_models, term_rank
from atomic_agent.plugins.openai_compatible.openrouter_catalog import OPENROUTER_MODELS, CatalogModel, catalog_model


def ids(query: str) -> list[str]:
    return [m.id for m in search_models(query)]


def test_exact_id_ranks_before_prefix_and_substring_matches():
    found = ids("openai/gpt-4.1")
    assert found[0] == "openai/gpt-4.1"
    assert set(found[1:3]) == {"openai/gpt-4.1-mini", "openai/gpt-4.1-nano"}


def test_rank_order_exact_prefix_tag_wordstart_substring_subsequence():
    model = CatalogModel("acme/turbo-chat", "Acme: Turbo Chat", 131_072, 0.1, 0.2)
    assert term_rank(model, "acme/turbo-chat") == 0
    assert term_rank(model, "acme/tur") == 1
    assert term_rank(model, "acme") == 1  # the vendor is also an id prefix
    assert term_rank(model, "128k") == 2
    assert term_rank(model, "chat") == 3
    assert term_rank(model, "urbo") == 4
    assert term_rank(model, "atc") == 5
    assert term_rank(model, "zzz") is None


def test_terms_are_anded():
    found = search_models("vision cheap")
    assert found and all("vision" in model_tags(m) and "cheap" in model_tags(m) for m in found)
    assert ids("anthropic free") == []


def test_equal_ranks_keep_catalog_order():
    found = ids("tools")
    catalog_order = [m.id for m in OPENROUTER_MODELS if m.tools]
    assert found == catalog_order


def test_context_window_answers_to_display_floor_and_binary_tags():
    assert context_tags(131_072) >= {"131k", "128k"}
    assert context_tags(1_310_720) >= {"1.3m", "1m"}
    assert "1m" not in context_tags(2_000_000) and "2m" in context_tags(2_000_000)
    assert context_display(1_048_576) == "1.0m" and context_display(200_000) == "200k"


def test_free_cheap_routed_and_vendor_tags():
    assert "free" in model_tags(catalog_model("deepseek/deepseek-r1:free"))
    assert "cheap" in model_tags(catalog_model("openai/gpt-4o-mini"))
    assert "routed" in model_tags(catalog_model("openrouter/auto"))
    assert "google" in model_tags(catalog_model("google/gemini-2.5-pro"))
    assert ids("1m google")[0].startswith("google/")


def test_empty_query_lists_everything_in_order():
    assert search_models("") == list(OPENROUTER_MODELS)
