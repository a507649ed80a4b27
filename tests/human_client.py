"""A human's client for the tests: our engine as an ordinary (non-agent) client, started
by `python -m craftium_ma join` from a HumanLogin, on random input (it needs no display)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import craftium_ma
from craftium_ma.humans import HumanLogin
from craftium_ma.launcher import CLIENT_DEFAULTS

CHAT_ECHO = Path(__file__).parent / "clientmods" / "chat_echo"
# the join command runs `python -m craftium_ma`: this craftium_ma, not an installed one
CHECKOUT = Path(craftium_ma.__file__).resolve().parent.parent


def noop(env):
    return {a: 0 for a in env.agents}


def step_until(env, done, timeout=60.0, what="the condition"):
    """Step the env (no-ops) until done(infos) holds; AssertionError after timeout s.
    Returns the last step's rewards and infos."""
    deadline = time.monotonic() + timeout
    while True:
        _, rewards, _, _, infos = env.step(noop(env))
        if done(infos):
            return rewards, infos
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout} s"


class HumanClient:
    """A running client logged in with `login`; chat_echo=True loads the chat_echo client
    mod (it logs the chat it receives and answers agent_0's "echo TEXT")."""

    def __init__(self, login: HumanLogin, directory: Path, chat_echo: bool = False):
        directory.mkdir(parents=True, exist_ok=True)
        settings = {**CLIENT_DEFAULTS, "screen_w": "64", "screen_h": "48", "fps_max": "20",
                    "fps_max_unfocus": "20", "viewing_range": "20"}
        if chat_echo:
            settings["enable_client_modding"] = "true"
            shutil.copytree(CHAT_ECHO, directory / "clientmods" / "chat_echo")
            (directory / "clientmods" / "mods.conf").write_text("load_mod_chat_echo = true\n")
        conf = directory / "client.conf"
        conf.write_text("".join(f"{k} = {v}\n" for k, v in settings.items()))
        self.log = directory / "debug.txt"
        self.output = directory / "output.txt"  # the join command's own messages
        with open(self.output, "wb") as output:
            self.process = subprocess.Popen(
                [*login.join_command(), "--", "--random-input", "--config", str(conf),
                 "--logfile", str(self.log)],
                env=dict(os.environ, SDL_VIDEODRIVER="offscreen", LP_NUM_THREADS="0",
                         MINETEST_USER_PATH=str(directory), PYTHONPATH=str(CHECKOUT)),
                cwd=directory, stdin=subprocess.DEVNULL, stdout=output,
                stderr=subprocess.STDOUT, start_new_session=True)

    def log_text(self) -> str:
        return self.log.read_text("utf-8", "replace") if self.log.exists() else ""

    def wait_for_log(self, text: str, timeout: float = 60) -> str:
        """The client's log once it holds text (AssertionError after timeout seconds)."""
        deadline = time.monotonic() + timeout
        while text not in self.log_text():
            assert time.monotonic() < deadline, (
                f"{text!r} not in the client's log:\n{self.log_text()[-3000:]}\n"
                f"output:\n{self.output.read_text('utf-8', 'replace')[-2000:]}")
            time.sleep(0.1)
        return self.log_text()

    def close(self):
        """Stop the client (the join command and the engine it started)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
