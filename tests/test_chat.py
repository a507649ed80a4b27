"""Chat: what a human says in-game (a real client's chat, tests/clientmods/chat_echo) and
what env.post_chat says reach env.chat() in the next step, once, to the agent an
"@agent_k" names or else to every agent; env.say speaks in-game for an agent."""

from pathlib import Path

import pytest

import craftium_ma
from human_client import HumanClient, noop, step_until

TASK = Path(__file__).parent / "mods" / "humans_test"


@pytest.fixture(scope="module")
def env():
    env = craftium_ma.parallel_env(task_dir=TASK, humans=["alice"], timeout=30)
    try:
        env.reset(seed=0)
        assert env.chat() == {"agent_0": [], "agent_1": []}
        yield env
    finally:
        env.close()


@pytest.fixture(scope="module")
def alice(env, tmp_path_factory):
    client = HumanClient(env.human_login("alice"), tmp_path_factory.mktemp("alice"),
                         chat_echo=True)
    try:
        step_until(env, lambda _: env.humans_state()["alice"]["connected"], what="alice joining")
        env.world_events()
        yield client
    finally:
        client.close()


def test_chat_is_checked():
    env = craftium_ma.parallel_env(task_dir=TASK)
    for call, error, message in [
            (lambda: env.post_chat(3), TypeError, "chat text must be a str, got int 3"),
            (lambda: env.post_chat("  "), ValueError, "one line that is not blank"),
            (lambda: env.post_chat("a\nb"), ValueError, "one line that is not blank"),
            (lambda: env.post_chat("hi", sender="agent_0"), ValueError,
             r"is an agent: env.say\('agent_0', text\)"),
            (lambda: env.post_chat("hi", sender="a b"), ValueError, "sender must be a name"),
            (lambda: env.say("agent_7", "hi"), ValueError, "unknown agent 'agent_7'")]:
        with pytest.raises(error, match=message):
            call()
    assert env.world_events() == []


@pytest.mark.engine
def test_posted_chat_reaches_every_agent_once_in_the_next_step(env):
    env.post_chat("hello everyone")
    _, _, _, _, infos = env.step(noop(env))
    step = env._cycles
    heard = [{"from": "viewer", "text": "hello everyone", "step": step}]
    assert env.chat() == {"agent_0": heard, "agent_1": heard}
    assert all("chat" not in info for info in infos.values())  # a side channel, not infos
    env.step(noop(env))
    assert env.chat() == {"agent_0": [], "agent_1": []}
    assert env.world_events() == [{"type": "chat", "from": "viewer", "to": None,
                                   "text": "hello everyone", "step": step}]


@pytest.mark.engine
def test_addressed_chat_reaches_that_agent_alone(env):
    env.post_chat("@agent_1 come here", sender="alice")
    env.post_chat("@bob is not an agent")
    env.step(noop(env))
    step = env._cycles
    to_all = {"from": "viewer", "text": "@bob is not an agent", "step": step}
    assert env.chat() == {
        "agent_0": [to_all],
        "agent_1": [{"from": "alice", "text": "come here", "step": step}, to_all]}
    assert [(e["from"], e["to"], e["text"]) for e in env.world_events()] == [
        ("alice", "agent_1", "come here"), ("viewer", None, "@bob is not an agent")]


@pytest.mark.engine
def test_say_speaks_in_game_for_the_agent(env, alice):
    env.say("agent_0", "hi there")
    env.step(noop(env))
    step = env._cycles
    # the other agents hear it; the server's chat reached the human's client
    assert env.chat() == {"agent_0": [],
                              "agent_1": [{"from": "agent_0", "text": "hi there", "step": step}]}
    assert env.world_events() == [{"type": "chat", "from": "agent_0", "to": None,
                                   "text": "hi there", "step": step}]
    alice.wait_for_log("chat_echo heard: <agent_0> hi there", timeout=30)


@pytest.mark.engine
def test_a_human_s_in_game_chat_reaches_the_agent_it_names_once(env, alice):
    # alice's client answers agent_0's "echo TEXT" with "@agent_1 TEXT" in its chat
    env.say("agent_0", "echo ping-7")
    heard = {"agent_0": [], "agent_1": []}

    def agent_1_heard_alice(_):
        for agent, messages in env.chat().items():
            heard[agent] += [m for m in messages if m["from"] == "alice"]
        return bool(heard["agent_1"])

    step_until(env, agent_1_heard_alice, timeout=30, what="alice's answer")
    step = env._cycles
    for _ in range(20):  # and only once
        agent_1_heard_alice(env.step(noop(env))[4])
    assert heard == {"agent_0": [], "agent_1": [{"from": "alice", "text": "ping-7", "step": step}]}
    assert {"type": "chat", "from": "alice", "to": "agent_1", "text": "ping-7",
            "step": step} in env.world_events()
