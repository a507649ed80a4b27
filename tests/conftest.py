"""Shared fixtures: sessions of real Luanti processes running tests/mods/lockstep_test."""

from pathlib import Path

import pytest

from craftium_ma.launcher import LaunchConfig
from craftium_ma.lockstep import LockstepSession

TEST_MOD = Path(__file__).parent / "mods" / "lockstep_test"
AGENTS = ["agent_0", "agent_1"]


def make_session(agents=AGENTS, pipelined=False, obs_size=(64, 64), **kwargs) -> LockstepSession:
    config = LaunchConfig(agents=list(agents), obs_size=obs_size, mods=[TEST_MOD], timeout=30,
                          **kwargs)
    return LockstepSession(config, pipelined=pipelined)


@pytest.fixture(scope="module")
def session():
    s = make_session()
    yield s
    s.close()
