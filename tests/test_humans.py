"""Humans in the world: real clients that are not agents join an env's running server
(tests/human_client.py), strangers and wrong passwords are turned away, a human moves and
scores while the agents step, and agent_0 sees one in front of it."""

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import craftium_ma
from craftium_ma.humans import HumanLogin, human_names
from human_client import HumanClient, noop, step_until

TASK = Path(__file__).parent / "mods" / "humans_test"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    env = craftium_ma.parallel_env(task_dir=TASK, humans=["alice", "bob"], timeout=30)
    try:
        obs, _ = env.reset(seed=0)
        yield SimpleNamespace(env=env, empty_room=obs["agent_0"], tmp=tmp_path_factory)
    finally:
        env.close()


@pytest.fixture(scope="module")
def alice(world):
    client = HumanClient(world.env.human_login("alice"), world.tmp.mktemp("alice"))
    try:
        step_until(world.env, lambda _: world.env.humans_state()["alice"]["connected"],
                   what="alice joining")
        yield client
    finally:
        client.close()


def test_humans_option_names_players_and_rejects_bad_names():
    assert human_names(None) == [] and human_names(0) == []
    assert human_names(2) == ["human_0", "human_1"]
    assert human_names(["alice", "Bob-2"]) == ["alice", "Bob-2"]
    for bad, message in [(-1, "cannot be negative"), (["a b"], "not a Luanti player name"),
                         (["x" * 20], "not a Luanti player name"), (["agent_3"], "an agent's name"),
                         (["al", "al"], "'al' given more than once")]:
        with pytest.raises(ValueError, match=message):
            human_names(bad)
    with pytest.raises(TypeError, match="humans must be a list of player names or a count"):
        human_names("alice")
    env = craftium_ma.parallel_env(task_dir=TASK, humans=1)
    assert env.humans == ["human_0"]
    assert env.humans_state() == {"human_0": {"position": None, "yaw": None, "hp": 0,
                                              "score": 0.0, "connected": False}}
    with pytest.raises(RuntimeError, match=r"human_login\(\) before reset\(\)"):
        env.human_login("human_0")
    with pytest.raises(ValueError,
                       match="'alice' is not a human of this env; its humans are human_0"):
        env.human_login("alice")
    with pytest.raises(ValueError, match="bind_address must be an IP address"):
        craftium_ma.parallel_env(task_dir=TASK, bind_address="localhost")
    assert env.launch_config().bind_address == "127.0.0.1"


def test_join_command_runs_the_join_subcommand():
    login = HumanLogin("127.0.0.1", 30000, "alice", "pw", Path("/tmp/pw"))
    assert login.join_command()[1:] == ["-m", "craftium_ma", "join", "--address", "127.0.0.1",
                                        "--port", "30000", "--name", "alice",
                                        "--password-file", "/tmp/pw"]
    with pytest.raises(ValueError, match="has no password file"):
        HumanLogin("127.0.0.1", 30000, "alice", "pw").join_command()


@pytest.mark.engine
def test_strangers_and_wrong_passwords_are_turned_away(world, tmp_path):
    env = world.env
    login = env.human_login("bob")
    assert login.address == "127.0.0.1" and login.password_file.read_text() == login.password
    wrong = tmp_path / "wrong-password"
    wrong.write_text("not-" + login.password)
    bob = HumanClient(dataclasses.replace(login, password_file=wrong), tmp_path / "bob")
    mallory = HumanClient(dataclasses.replace(login, name="mallory"), tmp_path / "mallory")
    try:
        assert "Access denied. Reason: Invalid password" in bob.wait_for_log("Access denied")
        assert ("only the configured agents and humans may join this server"
                in mallory.wait_for_log("Access denied"))
    finally:
        bob.close()
        mallory.close()
    env.step(noop(env))
    assert not env.humans_state()["bob"]["connected"]
    assert not [e for e in env.world_events() if e["type"] == "human_joined"]


@pytest.mark.engine
def test_a_human_joins_moves_and_scores_while_the_agents_step(world, alice):
    env = world.env
    assert {"type": "human_joined", "name": "alice"} in env.world_events()
    start = env.humans_state()["alice"]
    assert start["hp"] > 0 and start["position"] is not None

    def moved(_):
        now = env.humans_state()["alice"]["position"]
        return np.hypot(now[0] - start["position"][0], now[2] - start["position"][2]) > 1.0

    # its random input walks it about: its inputs are handled in the server's ticks, and
    # the server never waits for it as it waits for the agents
    rewards, infos = step_until(env, moved, timeout=30, what="alice walking a node")
    # agent_1 and alice are a team that gets 1 a step: alice's share goes to her score
    assert rewards == {"agent_0": 0.0, "agent_1": 1.0}
    assert env.humans_state()["alice"]["score"] > start["score"]
    name, privs = infos["agent_0"]["human_privs"].split(":")
    assert name == "alice" and set(privs.split(",")) == {"interact", "shout"}


@pytest.mark.engine
def test_agent_0_sees_a_human_in_front_of_it(world, alice):
    env = world.env
    env.reset(seed=0, options={"pin_humans": True})
    # a position its client sent before it saw the move can come in after it
    frames = [env.step(noop(env))[0]["agent_0"] for _ in range(10)][-3:]
    x, _, z = env.humans_state()["alice"]["position"]
    # where it was put, but for what it still slid at its old speed (4 nodes/s, for as long
    # as its real-time client took to take the move in: more on a loaded machine)
    assert (x, z) == pytest.approx((6.5, 4.5), abs=1.0)
    assert env.humans_state()["alice"]["score"] == 10  # scores start afresh at a reset
    h, w, _ = world.empty_room.shape
    for frame in frames:
        # the human stands in the middle of the view; the room around it is as it was
        # but for the sky's shade, a few levels lighter in the reset's frame
        changed = np.abs(frame.astype(int) - world.empty_room).max(axis=2) > 16
        assert changed.sum() > 20  # of 48 x 48: it is some 16 pixels tall, 3 to 6 wide
        assert changed[:, w // 3: w - w // 3].sum() > 0.8 * changed.sum()


@pytest.mark.engine
def test_a_human_who_quits_leaves_the_world(world, alice):
    env = world.env
    env.world_events()
    alice.close()
    step_until(env, lambda _: not env.humans_state()["alice"]["connected"], timeout=30,
               what="alice leaving")
    assert env.world_events() == [{"type": "human_left", "name": "alice"}]
    assert env.humans_state()["alice"]["position"] is not None  # where it was last
