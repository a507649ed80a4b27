"""The event bus, the JSONL log and replay (no engine)."""

import logging
import threading

import numpy as np
import pytest

import craftium_ma
from craftium_ma.events import EventBus, EventLog


def test_subscribers_see_every_event_in_publish_order_with_increasing_seq():
    bus = EventBus()
    first, second = [], []
    bus.subscribe(lambda e: first.append((e.seq, e.type, e.data)))
    bus.subscribe(lambda e: second.append((e.seq, e.type, e.data)))
    bus.publish("run_started", task="t")
    bus.publish("step", step=1)
    bus.publish("run_ended", reason="stopped")
    assert first == second == [(0, "run_started", {"task": "t"}), (1, "step", {"step": 1}),
                               (2, "run_ended", {"reason": "stopped"})]


def test_an_event_published_by_a_subscriber_comes_after_the_one_delivered_to_everyone():
    bus = EventBus()
    seen = {"a": [], "b": []}

    def a(event):
        seen["a"].append(event.type)
        if event.type == "paused":
            bus.publish("resumed")

    bus.subscribe(a)
    bus.subscribe(lambda e: seen["b"].append(e.type))
    bus.publish("paused")
    assert seen["a"] == seen["b"] == ["paused", "resumed"]


def test_a_raising_subscriber_is_logged_and_skipped_and_the_others_still_get_the_event(caplog):
    bus = EventBus()
    got = []

    def broken(event):
        raise RuntimeError("subscriber bug")

    bus.subscribe(broken)
    bus.subscribe(got.append)
    with caplog.at_level(logging.ERROR, logger="craftium_ma.events"):
        bus.publish("step", step=1)
        bus.publish("step", step=2)
    assert [e.data["step"] for e in got] == [1, 2]
    assert [r.getMessage().endswith(f"raised on step event {i}; skipped it")
            for i, r in enumerate(caplog.records)] == [True, True]
    assert all("subscriber bug" in str(r.exc_info[1]) for r in caplog.records)


def test_unsubscribe_stops_delivery():
    bus = EventBus()
    got = []
    unsubscribe = bus.subscribe(got.append)
    bus.publish("paused")
    unsubscribe()
    bus.publish("resumed")
    assert [e.type for e in got] == ["paused"]


def test_events_from_several_threads_reach_every_subscriber_in_one_order():
    bus = EventBus()
    first, second = [], []
    bus.subscribe(lambda e: first.append(e.seq))
    bus.subscribe(lambda e: second.append(e.seq))
    threads = [threading.Thread(target=lambda: [bus.publish("step", step=i) for i in range(200)])
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert first == second == list(range(800))


def test_bad_event_type_and_subscriber_are_errors_that_name_them():
    bus = EventBus()
    with pytest.raises(ValueError, match="unknown event type 'tick'"):
        bus.publish("tick")
    with pytest.raises(TypeError, match="subscriber must be callable"):
        bus.subscribe("not a function")


def test_a_log_replays_the_same_events_in_order(tmp_path):
    bus = EventBus()
    path = tmp_path / "run.jsonl"
    log = EventLog(path)
    bus.subscribe(log)
    published = [bus.publish("run_started", task="small_room", tick_rate=None),
                 bus.publish("step", step=1, rewards={"agent_0": np.float32(-1.0)},
                             position=np.array([1.5, 0.5])),
                 bus.publish("chat", **{"from": "alice", "to": None, "text": "hi", "step": 1}),
                 bus.publish("run_ended", reason="max_steps")]
    log.close()
    replayed = list(craftium_ma.replay(path))
    assert ([(e.seq, e.type, e.time) for e in replayed]
            == [(e.seq, e.type, e.time) for e in published])
    assert replayed[1].data == {"step": 1, "rewards": {"agent_0": -1.0}, "position": [1.5, 0.5]}
    assert replayed[2].data == {"from": "alice", "to": None, "text": "hi", "step": 1}


def test_replay_of_a_file_that_is_no_event_log_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"seq": 0, "time": 1.0, "type": "paused", "data": {}}\nnot json\n')
    events = craftium_ma.replay(path)
    assert next(events).type == "paused"
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not an event record"):
        next(events)
