"""Stable-Baselines3 through craftium_ma.integrations.sb3: an agent's episode is its row's,
and the padding steps of an agent done before its env neither bootstrap, nor earn, nor
join an episode that CraftiumVecMonitor reports (real engine processes)."""

import numpy as np
import pytest

pytestmark = pytest.mark.engine

# agent_0 is done after 3 steps, agent_1 runs to max_cycles; +1 a step to each live agent
EARLY_TASK = {
    "task.toml": 'id = "early"\n[[actions]]\nname = "noop"\n',
    "mod.conf": "name = early\ndepends = craftium_ma\n",
    "init.lua": """
craftium_ma.register_on_step(function()
	for _, agent in ipairs(craftium_ma.agents()) do
		craftium_ma.add_reward(agent, 1)
	end
	if craftium_ma.step_count() == 3 then
		craftium_ma.set_termination("agent_0")
	end
end)
""",
}
MAX_CYCLES = 8


@pytest.fixture
def early_task(tmp_path):
    for name, text in EARLY_TASK.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_padding_rows_are_done_zero_and_the_monitor_reports_each_agents_own_episodes(early_task):
    from craftium_ma.integrations.sb3 import CraftiumVecMonitor, vec_env

    venv = CraftiumVecMonitor(vec_env(None, 1, task_dir=early_task, num_agents=2, obs_size=16,
                                      max_cycles=MAX_CYCLES, timeout=30))
    try:
        venv.reset()
        episodes, padding = [], []
        for _ in range(2 * MAX_CYCLES):
            obs, rewards, dones, infos = venv.step(np.zeros(2, np.int64))
            episodes += [(row, info["episode"]["l"], info["episode"]["r"])
                         for row, info in enumerate(infos) if "episode" in info]
            if infos[0].get("padding"):
                padding.append((bool(dones[0]), float(rewards[0]), bool(obs[0].any())))
    finally:
        venv.close()
    # two env episodes: agent_0's of 3 steps, agent_1's of 8, nothing from the padding
    assert episodes == [(0, 3, 3.0), (1, 8, 8.0), (0, 3, 3.0), (1, 8, 8.0)]
    # agent_0 pads steps 4 .. 8 of each episode: done, reward 0, a zero frame; at step 8
    # its env's episode ends, and the row shows the next episode's first frame
    assert padding == ([(True, 0.0, False)] * 4 + [(True, 0.0, True)]) * 2


def test_ppo_learns_through_the_monitor_from_agents_episodes_only(early_task):
    from stable_baselines3 import PPO

    from craftium_ma.integrations.sb3 import CraftiumVecMonitor, vec_env

    venv = CraftiumVecMonitor(vec_env(None, 1, task_dir=early_task, num_agents=2, obs_size=36,
                                      max_cycles=MAX_CYCLES, timeout=30))
    try:
        model = PPO("CnnPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0,
                    device="cpu")
        model.learn(total_timesteps=64)
        lengths = sorted({int(e["l"]) for e in model.ep_info_buffer})
    finally:
        venv.close()
    assert model.num_timesteps == 64 and lengths == [3, MAX_CYCLES]
