"""The rewrite parser fails closed: NONE, empty, malformed -> no rewrite; enormous -> clamped."""

from __future__ import annotations

from atomic_agent.plugins.memory_rewriter.rewrite_parser import parse_rewrite


def test_an_envelope_gives_its_body_on_one_line() -> None:
    parsed = parse_rewrite("<rewritten_query>  did Anna   fix\nthe staging deploy </rewritten_query>", 400)
    assert (parsed.query, parsed.reason) == ("did Anna fix the staging deploy", "ok")


def test_none_empty_and_malformed_answers_give_no_rewrite() -> None:
    assert parse_rewrite("NONE", 400).reason == "none"
    assert parse_rewrite("<rewritten_query></rewritten_query>", 400).reason == "empty"
    assert parse_rewrite("<rewritten_query> ... !!! </rewritten_query>", 400).reason == "empty"
    assert parse_rewrite("sure! here is the query: staging deploy", 400).reason == "malformed"
    assert all(parse_rewrite(t, 400).query is None for t in ("NONE", "", "<rewritten_query></rewritten_query>"))


def test_an_enormous_rewrite_is_clamped_on_a_word_boundary() -> None:
    body = " ".join(["staging"] * 5000)
    parsed = parse_rewrite(f"<rewritten_query>{body}</rewritten_query>", 400)
    assert parsed.reason == "clamped" and len(parsed.query or "") <= 400 and (parsed.query or "").endswith("staging")
    unclosed = parse_rewrite("<rewritten_query>" + "x" * 10_000, 50)
    assert unclosed.reason == "clamped" and len(unclosed.query or "") == 50
