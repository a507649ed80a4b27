"""Random agents in small_room with the ParallelEnv API."""

import craftium_ma

env = craftium_ma.parallel_env("small_room", num_agents=2)
observations, infos = env.reset(seed=42)
returns = {agent: 0.0 for agent in env.agents}
while env.agents:
    actions = {agent: env.action_space(agent).sample() for agent in env.agents}
    observations, rewards, terminations, truncations, infos = env.step(actions)
    for agent, reward in rewards.items():
        returns[agent] += reward
env.close()
print("episode returns:", returns)
