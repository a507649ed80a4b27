"""The live viewer in a real browser (Debian's headless Chromium driven by Selenium) over a
real run, its HTTP API and token, and the `serve` command."""

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import uvicorn
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

import craftium_ma
from craftium_ma.viewer import create_app
from human_client import HumanClient

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "test-token"


def wait_for(condition, timeout=20.0, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class Live:
    """A runner over small_room with random actions, its viewer on a free port."""

    def __init__(self):
        self.env = craftium_ma.parallel_env("small_room", num_agents=2, obs_size=48,
                                            max_cycles=30, humans=["alice"])
        rng = np.random.default_rng(0)
        self.infos = []  # (step count when acting, agent, info)

        def policy(agent, observation, info):
            self.infos.append((self.runner.step_count, agent, info))
            return int(rng.integers(4))

        self.runner = craftium_ma.Runner(self.env, policy, tick_rate=20, seed=0)
        config = uvicorn.Config(create_app(self.runner, TOKEN), host="127.0.0.1", port=0,
                                log_level="warning", ws="websockets-sansio")
        self.server = uvicorn.Server(config)
        self.threads = [threading.Thread(target=self.runner.run),
                        threading.Thread(target=self.server.run)]
        for t in self.threads:
            t.start()
        wait_for(lambda: self.server.started, what="the server")
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"

    def close(self):
        self.runner.stop()
        self.server.should_exit = True
        for t in self.threads:
            t.join(timeout=30)
        self.env.close()


@pytest.fixture(scope="module")
def live():
    run = Live()
    yield run
    run.close()


@pytest.fixture(scope="module")
def browser(live, tmp_path_factory):
    # Chromium leaves its singleton socket's folder in TMPDIR after quitting: give it its own
    tmp = tmp_path_factory.mktemp("chromium")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,1100"):
        options.add_argument(flag)
    service = Service("/usr/bin/chromedriver", env={**os.environ, "TMPDIR": str(tmp)})
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(30)
    driver.get(f"{live.base}/?token={TOKEN}")
    yield driver
    driver.quit()
    shutil.rmtree(tmp)


def request(url, body=None, token=TOKEN):
    """(status, parsed JSON or text) of a GET, or of a POST when body is given."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["X-Token"] = token
    data = None if body is None else json.dumps(body).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data, headers), timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def page_step(browser) -> int:
    return int(browser.find_element(By.ID, "step").text)


def mosaic_pixels(browser) -> str:
    return browser.execute_script("return document.getElementById('mosaic').toDataURL()")


@pytest.mark.engine
def test_the_page_loads_and_its_mosaic_changes_over_time(live, browser):
    assert browser.title == "craftium-ma live viewer"
    wait_for(lambda: browser.find_element(By.ID, "status").text == "running", what="running")
    assert browser.find_element(By.ID, "task").text == "small_room"
    shown = wait_for(lambda: browser.execute_script("return window.viewer.framesShown") > 0,
                     what="a first frame")
    first = mosaic_pixels(browser)
    wait_for(lambda: mosaic_pixels(browser) != first, what="a new mosaic")
    frames = browser.execute_script("return window.viewer.framesShown")
    assert frames > shown
    width, height = browser.execute_script(
        "const c = document.getElementById('mosaic'); return [c.width, c.height]")
    assert (width, height) == (2 * 48, 48)  # two agents side by side
    names = browser.execute_script("return [...document.querySelectorAll('#agents tbody tr')]"
                                   ".map((r) => r.cells[0].textContent)")
    assert names == ["agent_0", "agent_1", "alice (human, away)"]


@pytest.mark.engine
def test_pause_stops_the_step_counter_and_step_advances_it_by_one(live, browser):
    browser.find_element(By.ID, "btn-pause").click()
    wait_for(lambda: browser.find_element(By.ID, "status").text == "paused", what="paused")
    paused_at = live.runner.step_count
    wait_for(lambda: page_step(browser) == paused_at, what="the page's step")
    time.sleep(1.0)
    assert page_step(browser) == paused_at == live.runner.step_count
    frames = browser.execute_script("return window.viewer.framesShown")

    browser.find_element(By.ID, "btn-step").click()
    wait_for(lambda: page_step(browser) == paused_at + 1, what="one step")
    time.sleep(0.5)
    assert page_step(browser) == paused_at + 1 == live.runner.step_count
    assert browser.execute_script("return window.viewer.framesShown") == frames + 1
    feed = browser.find_element(By.ID, "events").text
    assert "paused step" in feed and "control step 1 (viewer)" in feed

    browser.find_element(By.ID, "btn-resume").click()
    wait_for(lambda: page_step(browser) > paused_at + 3, what="running again")


def pause_early_in_an_episode(live, steps_needed=6):
    """Pause where the episode has steps_needed steps left (the policy sees the infos
    of every step but an episode's last)."""
    assert request(f"{live.base}/api/control/pause", {})[0] == 200
    state = live.runner.snapshot()
    left = live.env.max_cycles - state.episode_step
    if left <= steps_needed:  # to the next episode's start
        request(f"{live.base}/api/control/step", {"n": left})
    assert live.runner.snapshot().episode_step < live.env.max_cycles - steps_needed


def chats_heard(live, since: int) -> dict:
    """(sender, text) of each chat in the infos the policy saw from step `since` on."""
    heard = {a: [] for a in live.env.possible_agents}
    for step, agent, info in list(live.infos):
        if step >= since:
            heard[agent] += [(c["from"], c["text"]) for c in info["chat"]]
    return heard


@pytest.mark.engine
def test_a_chat_typed_into_the_page_reaches_the_agents_infos_once(live, browser):
    pause_early_in_an_episode(live)
    since = live.runner.step_count
    Select(browser.find_element(By.ID, "chat-to")).select_by_visible_text("agent_1")
    browser.find_element(By.ID, "chat-text").send_keys("come here")
    browser.find_element(By.ID, "chat-send").click()
    wait_for(lambda: browser.find_element(By.ID, "chat-status").text == "sent: come here")
    Select(browser.find_element(By.ID, "chat-to")).select_by_visible_text("everyone")
    browser.find_element(By.ID, "chat-text").send_keys("hello all\n")  # Enter sends too
    wait_for(lambda: browser.find_element(By.ID, "chat-status").text == "sent: hello all")
    request(f"{live.base}/api/control/step", {"n": 4})
    assert chats_heard(live, since) == {"agent_0": [("viewer", "hello all")],
                                        "agent_1": [("viewer", "come here"),
                                                    ("viewer", "hello all")]}
    wait_for(lambda: "chat viewer → agent_1: come here" in
             browser.find_element(By.ID, "events").text, what="the chat in the feed")
    assert "chat viewer → everyone: hello all" in browser.find_element(By.ID, "events").text
    request(f"{live.base}/api/control/resume", {})


@pytest.mark.engine
def test_faster_and_slower_buttons_change_the_tick_rate(live, browser):
    browser.find_element(By.ID, "btn-faster").click()
    wait_for(lambda: live.runner.tick_rate == 40, what="faster")
    wait_for(lambda: browser.find_element(By.ID, "tick-rate").text == "40 steps/s")
    browser.find_element(By.ID, "btn-slower").click()
    wait_for(lambda: live.runner.tick_rate == 20, what="slower")


@pytest.mark.engine
def test_the_api_needs_the_token(live):
    wait_for(lambda: live.runner.snapshot().status == "running", what="the first reset")
    assert request(f"{live.base}/api/state", token=None)[0] == 403
    assert request(f"{live.base}/api/state", token="wrong")[0] == 403
    assert request(f"{live.base}/?token=wrong", token=None)[0] == 403
    ws_url = live.base.replace("http://", "ws://") + "/ws"
    with pytest.raises(InvalidStatus, match="HTTP 403"):
        connect(ws_url, open_timeout=10)
    with connect(f"{ws_url}?token={TOKEN}", open_timeout=10) as ws:
        assert isinstance(ws.recv(timeout=10), (bytes, str))
    step = live.runner.step_count
    assert request(f"{live.base}/api/control/pause", {}, token=None)[0] == 403
    assert request(f"{live.base}/api/chat", {"text": "hi"}, token=None)[0] == 403
    assert not live.runner.paused and live.runner.step_count >= step
    status, state = request(f"{live.base}/api/state")
    assert status == 200 and state["status"] == "running"
    assert set(state["agents"]) == {"agent_0", "agent_1"}
    assert {"position", "yaw", "hp", "return"} <= set(state["agents"]["agent_0"])
    assert len(state["task_state"]) == 2 + 3 * 2


@pytest.mark.engine
def test_the_control_api_steps_exactly_n_and_rejects_bad_requests(live):
    status, state = request(f"{live.base}/api/control/pause", {})
    assert status == 200 and state["status"] == "paused"
    status, state = request(f"{live.base}/api/control/step", {"n": 5})
    assert status == 200 and state["step"] == live.runner.step_count
    assert request(f"{live.base}/api/state")[1]["step"] == state["step"]
    before = state["step"]
    status, state = request(f"{live.base}/api/control/step", {"n": 3})
    assert state["step"] == before + 3
    assert request(f"{live.base}/api/control/step", {"n": 0}) == \
        (400, "n (the number of steps) must be a positive int, got 0")
    assert request(f"{live.base}/api/control/jump", {})[0] == 404
    assert request(f"{live.base}/api/chat", {"text": "hi", "to": "agent_9"})[0] == 400
    assert request(f"{live.base}/api/chat", {"to": "agent_0"})[0] == 400

    pause_early_in_an_episode(live)
    since = live.runner.step_count
    assert request(f"{live.base}/api/chat", {"text": "over here", "to": "agent_0"})[0] == 200
    request(f"{live.base}/api/control/step", {"n": 4})
    assert chats_heard(live, since) == {"agent_0": [("viewer", "over here")], "agent_1": []}
    assert request(f"{live.base}/api/control/resume", {})[1]["status"] == "running"


@pytest.mark.engine
def test_a_human_who_joins_shows_in_the_page_and_its_feed(live, browser, tmp_path):
    """(docs/img/viewer.png is this test's screenshot, with the human in the world)"""
    wait_for(lambda: browser.find_element(By.ID, "status").text == "running", what="running")
    human = HumanClient(live.runner.human_logins["alice"], tmp_path / "alice")
    try:
        wait_for(lambda: live.runner.snapshot().humans["alice"]["connected"], timeout=60,
                 what="alice joining")
        start = live.runner.snapshot().humans["alice"]["position"]

        def moved():
            now = live.runner.snapshot().humans["alice"]["position"]
            return np.hypot(now[0] - start[0], now[2] - start[2]) > 0.5

        wait_for(moved, timeout=30, what="alice walking")  # the runner ticks the server
        wait_for(lambda: "human_joined alice" in browser.find_element(By.ID, "events").text,
                 what="the feed")
        wait_for(lambda: "alice (human)" in browser.find_element(By.ID, "agents").text)
        wait_for(lambda: len(live.runner.snapshot().episode_returns) >= 3, timeout=30,
                 what="three episodes")
        time.sleep(0.5)
        screenshot = tmp_path / "viewer.png"
        assert browser.save_screenshot(str(screenshot))
        assert screenshot.stat().st_size > 10_000
        assert browser.find_elements(By.CSS_SELECTOR, "#returns-plot polyline")
    finally:
        human.close()


@pytest.mark.engine
def test_serve_prints_its_url_serves_with_the_token_and_logs_the_run(tmp_path):
    log = tmp_path / "run.jsonl"
    serve = subprocess.Popen(
        [sys.executable, "-m", "craftium_ma", "serve", "small_room", "--port", "0",
         "--num-agents", "1", "--obs-size", "16", "--tick-rate", "50", "--seed", "3",
         "--log", str(log)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        cwd=ROOT)
    try:
        line = wait_for(serve.stdout.readline, timeout=120, what="serve's first line")
        url = re.search(r"at (http://127\.0\.0\.1:\d+)/\?token=(\S+)", line)
        assert url, line
        base, token = url.groups()
        wait_for(lambda: request(f"{base}/api/state", token=token)[0] == 200, what="the server")
        assert request(f"{base}/api/state", token=None)[0] == 403
        wait_for(lambda: request(f"{base}/api/state", token=token)[1]["step"] > 5)
        assert request(f"{base}/api/control/stop", {}, token=token)[0] == 200
        assert serve.wait(timeout=60) == 0
        assert "the run ended: stopped" in serve.stdout.read()
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
    events = list(craftium_ma.replay(log))
    assert events[0].type == "run_started" and events[0].data["tick_rate"] == 50
    assert events[-1].type == "run_ended" and events[-1].data["reason"] == "stopped"
    assert [e.seq for e in events] == list(range(len(events)))
    steps = [e.data["step"] for e in events if e.type == "step"]
    assert steps == list(range(1, len(steps) + 1)) and len(steps) > 5


def test_a_checkpoint_policy_stacks_each_agents_frames_as_training_did(tmp_path):
    import torch

    from craftium_ma.models import ActorCritic
    from craftium_ma.policies import checkpoint_policy
    args = {"task": "small_room", "num_agents": 2, "max_cycles": 100, "frameskip": 4,
            "obs_size": 48, "grayscale": False, "frame_stack": 2}
    path = tmp_path / "checkpoint.pt"
    # a checkpoint as train_ppo.py wrote them before craftium_ma.models (no probe logits)
    torch.save({"model": ActorCritic((48, 48, 6), 4).state_dict(), "args": args,
                "obs_shape": [48, 48, 6], "n_actions": 4}, path)
    with pytest.raises(ValueError, match="trained on task 'small_room', not 'duel'"):
        checkpoint_policy(str(path), "duel")
    with pytest.raises(ValueError, match="neither 'random' nor a checkpoint file"):
        checkpoint_policy(str(tmp_path / "missing.pt"), "small_room")

    policy, env_kwargs = checkpoint_policy(str(path), "small_room", seed=0)
    assert env_kwargs == {"num_agents": 2, "max_cycles": 100, "obs_size": 48, "frameskip": 4}
    frames = np.random.default_rng(0).integers(0, 256, (3, 48, 48, 3), dtype=np.uint8)
    actions = [policy("agent_0", f, {}) for f in frames]
    assert all(a in range(4) for a in actions)
    # SuperSuit's frame_stack_v1: the newest frame last on the channel axis
    np.testing.assert_array_equal(policy._inputs["agent_0"].frames.stacks[0],
                                  np.concatenate(frames[1:], -1))
    policy.on_event(craftium_ma.Event("episode_ended"))
    policy("agent_0", frames[0], {})
    np.testing.assert_array_equal(policy._inputs["agent_0"].frames.stacks[0],
                                  np.concatenate([np.zeros_like(frames[0]), frames[0]], -1))
    again, _ = checkpoint_policy(str(path), "small_room", seed=0)
    assert [again("agent_0", f, {}) for f in frames] == actions  # seeded: reproducible
