"""The parked-steer store: a hand-back is returned whole, the cap evicts only earlier
entries, the loss count is acknowledged separately, and sessions are bounded."""

from __future__ import annotations

from atomic_agent.plugins.serve.undelivered_steers import UndeliveredSteerStore


def test_a_hand_back_is_returned_whole_even_past_the_cap():
    store = UndeliveredSteerStore(max_steers=3)
    batch = store.park("s", ["a", "b", "c", "d", "e"], 0)
    assert [p.text for p in batch] == ["a", "b", "c", "d", "e"]
    assert [p.text for p in store.read("s")[0]] == ["a", "b", "c", "d", "e"]


def test_the_cap_evicts_earlier_entries_and_counts_them_as_discarded():
    store = UndeliveredSteerStore(max_steers=3)
    store.park("s", ["a", "b"], 0)
    store.park("s", ["c", "d"], 1)
    entries, discarded = store.read("s")
    assert [e.text for e in entries] == ["b", "c", "d"] and discarded == 1


def test_seqs_increase_across_sessions_and_purges():
    store = UndeliveredSteerStore()
    first = store.park("s", ["a"], 0)[0].seq
    store.drop_session("s")
    assert store.park("s", ["b"], 1)[0].seq > first
    assert store.park("t", ["c"], 0)[0].seq > first + 1


def test_ack_by_cursor_keeps_steers_parked_after_the_read():
    store = UndeliveredSteerStore()
    read = store.park("s", ["a", "b"], 0)
    store.park("s", ["c"], 1)  # parked between the host's read and its ack
    assert store.ack("s", read[-1].seq, None) == (1, 0)
    assert [e.text for e in store.read("s")[0]] == ["c"]


def test_a_box_outlives_its_entries_while_a_loss_is_unacknowledged():
    store = UndeliveredSteerStore(max_steers=1)
    store.park("s", ["a"], 0)
    last = store.park("s", ["b"], 1)[-1]
    assert store.ack("s", last.seq, None) == (0, 1)
    assert store.read("s") == ([], 1) and "s" in store.sessions()
    assert store.ack("s", None, 1) == (0, 0)
    assert "s" not in store.sessions()


def test_the_session_parked_longest_ago_is_evicted_first():
    store = UndeliveredSteerStore(max_sessions=2)
    store.park("a", ["1"], 0)
    store.park("b", ["2"], 0)
    store.park("a", ["3"], 1)  # a is now the most recent
    store.park("c", ["4"], 0)
    assert store.sessions() == ["a", "c"]


def test_empty_hand_backs_park_nothing():
    store = UndeliveredSteerStore()
    assert store.park("s", [], 0) == [] and store.sessions() == []
