"""Random agents in small_room with the AEC API (agents act one after another)."""

import craftium_ma

env = craftium_ma.env("small_room", num_agents=2, max_cycles=100)
env.reset(seed=0)
for agent in env.agent_iter():
    observation, reward, termination, truncation, info = env.last()
    action = None if termination or truncation else env.action_space(agent).sample()
    env.step(action)
env.close()
print("episode over")
