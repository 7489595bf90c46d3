"""`ask_user`: a structured question to the person, stored and answered like an approval.

It is for what only a person can settle: a judgment the evidence leaves to them, a
credential, an external authority's decision, or an irreversible commitment. Routine
ambiguity is not a reason: the model is told to decide from the context and say what it
assumed. The question is a durable record (approval_records): every surface shows it, the
first answer wins, a restart resumes the turn from that answer (the tool is durable: asking
again after a restart finds the record it already made).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from atomic_agent.hook_records import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec

TOOL_NAME = "ask_user"
REASONS = {
    "human_judgment": "a decision the evidence leaves to the person (name the evidence)",
    "credentials": "a secret, login or key only the person holds",
    "external_authority": "approval from someone or something outside this conversation",
    "irreversible_commitment": "an action that cannot be undone (payment, deletion, sending)",
}
MAX_OPTIONS = 8
ARGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "description": "the question, self-contained"},
        "options": {"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "string"}, "label": {"type": "string"}}, "required": ["id", "label"]},
            "description": "choices, each with a short id"},
        "allow_free_text": {"type": "boolean", "description": "the person may type an answer instead"},
        "reason": {"type": "string", "description": "one of: " + ", ".join(REASONS)},
        "evidence": {"type": "string", "description": "what makes this need the person, in one sentence"},
    },
    "required": ["prompt", "reason", "evidence"],
    "additionalProperties": False,
}
EXAMPLE = ('{"tool": "ask_user", "args": {"prompt": "Delete the 3 old backups?", "options": [{"id": "yes", '
           '"label": "Delete them"}, {"id": "no", "label": "Keep them"}], "reason": "irreversible_commitment", '
           '"evidence": "the backups are the only copies"}}')


def question_problems(args: Mapping[str, Any]) -> list[str]:
    """What is wrong with a question, in words the model can act on (empty: a valid one)."""
    problems = []
    reason = args.get("reason")
    if reason not in REASONS:
        problems.append(f"reason {reason!r} is not a reason to ask the person; ask_user is only for "
                        + "; ".join(f"{k} ({v})" for k, v in REASONS.items())
                        + ". For routine ambiguity, decide from the context and state your assumption in the reply")
    if not str(args.get("evidence") or "").strip():
        problems.append("evidence is empty: say what in the conversation makes this need the person")
    if not str(args.get("prompt") or "").strip():
        problems.append("prompt is empty")
    options = list(args.get("options") or [])
    ids = [str(o.get("id", "")).strip() for o in options if isinstance(o, Mapping)]
    if len(ids) != len(options) or any(not i for i in ids) or len(set(ids)) != len(ids):
        problems.append("each option needs a distinct non-empty id")
    if len(options) > MAX_OPTIONS:
        problems.append(f"at most {MAX_OPTIONS} options")
    if not options and not args.get("allow_free_text"):
        problems.append("give options, or set allow_free_text, so the person can answer")
    return problems


async def _ask_user(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    problems = question_problems(args)
    if problems:
        return ToolResult.error("ask_user refused: " + "; ".join(problems), refused=True)
    if ctx.ask_question is None:
        return ToolResult.error("no surface can take a question here; decide from the context and say what you "
                                "assumed")
    question = {"prompt": str(args["prompt"]), "reason": args["reason"], "evidence": str(args["evidence"]),
                "allowFreeText": bool(args.get("allow_free_text")),
                "options": [{"id": str(o["id"]), "label": str(o.get("label", o["id"]))}
                            for o in args.get("options") or []]}
    record = await ctx.ask_question(question)
    if record.state == "answered":
        if record.decision == "text":
            return ToolResult.ok(f"the person answered: {record.answer_text}", approvalId=record.id,
                                 answeredBy=record.answered_by, surface=record.surface)
        label = next((o["label"] for o in question["options"] if o["id"] == record.decision), record.decision)
        return ToolResult.ok(f"the person chose {record.decision!r} ({label})", approvalId=record.id,
                             choice=record.decision, answeredBy=record.answered_by, surface=record.surface)
    if record.state == "expired":
        return ToolResult.error("nobody answered the question before it expired; go on without it or ask later",
                                approvalId=record.id, expired=True)
    return ToolResult.error(f"the question was {record.state} ({record.answer_text or 'no answer'})",
                            approvalId=record.id)


def ask_user_spec() -> ToolSpec:
    return ToolSpec(TOOL_NAME, "Ask the person a structured question only they can settle (judgment, credentials, "
                               "external authority, irreversible commitment).", ARGS_SCHEMA,
                    ResourceClass.PURE_READ, _ask_user, tier=Tier.RARE, example=EXAMPLE,
                    durable=True)  # changes nothing; asking again after a restart finds the same record: one answer
