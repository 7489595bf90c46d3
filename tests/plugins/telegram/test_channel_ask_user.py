"""`ask_user` through Telegram's fake Bot API: the question arrives as option buttons, the
owner's press answers the durable record once and the turn resumes from it; a second press
hears who answered first, a stranger's press and a forged callback (an id never issued, an
option the question does not have) change nothing."""

from __future__ import annotations

from atomic_agent.api import ScriptedProvider
from atomic_agent.testing.scripted_provider import calls

from .channel_harness import OWNER, STRANGER, GateTools, phone_sees, reply_texts, start_runtime, write_state

QUESTION = {"prompt": "Which backup should I restore?", "reason": "human_judgment",
            "evidence": "both backups are from today and differ",
            "options": [{"id": "morning", "label": "09:00 backup"}, {"id": "noon", "label": "12:00 backup"}]}


def row(api, which: int) -> str:
    return api.keyboards()[0].reply_markup["inline_keyboard"][which][0]["callback_data"]


async def test_ask_user_round_trips_through_telegram_buttons(tmp_path, bot_api) -> None:
    provider = ScriptedProvider([calls(("ask_user", QUESTION)), calls(("reply", {"text": "restored"}))])
    runtime = await start_runtime(write_state(tmp_path / "state", bot_api), provider, GateTools())
    records = runtime.gate.records
    try:
        bot_api.send_text(OWNER, "restore please")
        await phone_sees(bot_api, lambda: len(bot_api.keyboards()) == 1)
        prompt = bot_api.keyboards()[0]
        assert "Which backup should I restore?" in prompt.text and prompt.chat_id == OWNER
        noon = row(bot_api, 1)
        question_id = noon.split(":")[1]
        stranger = bot_api.press(STRANGER, noon)
        no_option = bot_api.press(OWNER, f"q:{question_id}:everything")  # forged: no such option
        never_issued = bot_api.press(OWNER, "q:apr_0000000000000000:noon")  # forged: never issued
        await phone_sees(bot_api, lambda: len(bot_api.callback_answers) == 3)
        # updates are handled concurrently, so the answers are matched by their callback id
        texts = {a["callback_query_id"]: a["text"] for a in bot_api.callback_answers}
        assert texts[f"cb{stranger}"] == "Only the owner can answer approvals."
        assert "not an option" in texts[f"cb{no_option}"]
        assert "no approval or question" in texts[f"cb{never_issued}"]
        assert records.get(question_id).state == "pending"
        bot_api.press(OWNER, noon, prompt.message_id)
        await phone_sees(bot_api, lambda: "restored" in reply_texts(bot_api))
        assert "the person chose 'noon' (12:00 backup)" in provider.requests[1].prompt
        bot_api.press(OWNER, row(bot_api, 0), prompt.message_id)  # a second press: the first answer stands
        await phone_sees(bot_api, lambda: len(bot_api.callback_answers) == 5)
        assert "already answered 'noon' by operator via telegram" in bot_api.callback_answers[4]["text"]
        record = records.get(question_id)
        assert (record.state, record.decision, record.surface) == ("answered", "noon", "telegram")
        assert any("✅ 12:00 backup" in e["text"] for e in bot_api.edits)
    finally:
        await runtime.close()
