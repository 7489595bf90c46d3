"""`notify`: terminal outcomes reported through the `report_sink` service as durable deliveries."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.hook_records import ServiceSpec
from atomic_agent.hookspecs import hookimpl
from atomic_agent.llm.provider_protocol import ProviderError
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.tasks.task_kit import FakeClock, task_runtime
from tests.turns.turn_kit import answering_provider


class Sink:
    def __init__(self, fail: bool = False) -> None:
        self.sent: list[tuple[str, str]] = []
        self.fail = fail

    async def send_report(self, target: str, text: str) -> None:
        if self.fail:
            raise ConnectionError("the channel is down")
        self.sent.append((target, text))


class SinkPlugin:
    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    @hookimpl
    def register_services(self) -> list[ServiceSpec]:
        return [ServiceSpec("report_sink", lambda runtime: self.sink)]


async def test_a_notified_task_reports_its_final_result_once_and_a_silent_one_never(tmp_path: Path):
    sink = Sink()
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock, extra_plugins=[(SinkPlugin(sink), "sink")])
    svc = rt.service("tasks")
    loud = svc.create("report me", notify="telegram")
    svc.create("keep quiet")
    await svc.tick()
    await svc.tick()
    assert sink.sent == [("telegram", f"Task {loud.id} completed\nTask: report me\nResult: re: report me")]
    assert [d.status for d in svc.reports.deliveries(loud.id)] == ["delivered"]
    await rt.close()


async def test_retries_are_not_reported_and_a_long_result_is_cut_with_a_marker(tmp_path: Path):
    sink = Sink()
    clock = FakeClock()
    provider = ScriptedProvider([ProviderError("down", status=503), calls(("reply", {"text": "x" * 5000}))])
    rt = await task_runtime(tmp_path, provider, clock, extra_plugins=[(SinkPlugin(sink), "sink")])
    svc = rt.service("tasks")
    task = svc.create("flaky", notify="telegram")
    await svc.tick()
    assert sink.sent == []  # a retry is not an outcome
    clock.advance(60_000)
    await svc.tick()
    [(_, text)] = sink.sent
    assert text.endswith("x" * 3000 + " … [truncated]") and len(text) < 3300
    assert [d.status for d in svc.reports.deliveries(task.id)] == ["delivered"]
    await rt.close()


async def test_a_failing_sink_records_the_delivery_failed_and_leaves_the_task_alone(tmp_path: Path, capsys):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock, extra_plugins=[(SinkPlugin(Sink(fail=True)), "s")])
    svc = rt.service("tasks")
    task = svc.create("report me", notify="telegram")
    await svc.tick()
    [delivery] = svc.reports.deliveries(task.id)
    assert (delivery.status, delivery.error) == ("failed", "ConnectionError: the channel is down")
    assert svc.store.get(task.id).status == "completed"
    assert "report failed" in capsys.readouterr().err
    await rt.close()


async def test_without_a_report_sink_the_delivery_waits_and_says_so(tmp_path: Path, capsys):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    task = svc.create("report me", notify="telegram")
    await svc.tick()
    await svc.tick()
    assert [d.status for d in svc.reports.deliveries(task.id)] == ["pending"]
    assert capsys.readouterr().err.count("report is waiting") == 1  # logged once, never silently dropped
    await rt.close()


async def test_a_delivery_cut_off_mid_send_becomes_uncertain_and_is_never_sent_again(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    task = svc.create("report me", notify="telegram")
    await svc.runner.run_due()
    with svc.store.database.write() as conn:  # a process claimed the send and died
        conn.execute("UPDATE task_deliveries SET status = 'attempting', owner = '4242-deadbeef'")
    await rt.close()
    sink = Sink()
    rt = await task_runtime(tmp_path, answering_provider(), clock, extra_plugins=[(SinkPlugin(sink), "sink")])
    svc = rt.service("tasks")
    await svc.tick()
    assert [d.status for d in svc.reports.deliveries(task.id)] == ["uncertain"]
    assert sink.sent == []
    await rt.close()


async def test_an_unknown_notify_target_is_refused(tmp_path: Path):
    rt = await task_runtime(tmp_path, answering_provider(), FakeClock())
    svc = rt.service("tasks")
    try:
        svc.create("x", notify="carrier-pigeon")
    except svc.ValidationError as exc:
        assert exc.field == "notify"
    else:
        raise AssertionError("accepted")
    await rt.close()


