"""TorchRL's PettingZooWrapper over an unmodified craftium_ma.parallel_env, on real engines."""

import pytest
import torch

import craftium_ma

pytestmark = pytest.mark.engine

FRAMES = 8  # per batch; episodes of 5 steps end inside each batch


def test_a_random_policy_collects_two_batches():
    from torchrl.collectors import Collector, RandomPolicy
    from torchrl.envs import PettingZooWrapper

    torch.manual_seed(0)
    env = PettingZooWrapper(craftium_ma.parallel_env("small_room", num_agents=2, max_cycles=5),
                            return_state=True)
    collector = Collector(env, RandomPolicy(env.full_action_spec), frames_per_batch=FRAMES,
                          total_frames=2 * FRAMES)
    try:
        batches = list(collector)
    finally:
        collector.shutdown()
        env.close()
    assert len(batches) == 2
    # the agents share one group, "agent"; state() is block x, z then x, z, yaw per agent
    for batch in batches:
        assert batch.batch_size == (FRAMES,)
        assert batch["agent", "observation"].shape == (FRAMES, 2, 64, 64, 3)
        assert batch["agent", "observation"].dtype == torch.uint8
        assert batch["agent", "action"].shape == (FRAMES, 2)
        assert ((batch["agent", "action"] >= 0) & (batch["agent", "action"] < 4)).all()
        assert batch["state"].shape == (FRAMES, 2 + 3 * 2)
        assert batch["next", "agent", "reward"].shape == (FRAMES, 2, 1)
    steps = torch.cat([b["next"] for b in batches])
    # -1 to each agent a step until it touches the block (it cannot within 5 steps here)
    assert (steps["agent", "reward"] == -1).all()
    # truncated by max_cycles after 5 steps, then the collector resets: steps 5, 10, 15 end
    ends = torch.zeros(2 * FRAMES, dtype=torch.bool)
    ends[4::5] = True
    assert torch.equal(steps["done"].squeeze(-1), ends)
    assert torch.equal(steps["truncated"].squeeze(-1), ends)
    assert not steps["terminated"].any()
    assert torch.equal(steps["agent", "done"].squeeze(-1), ends[:, None].expand(-1, 2))
    # the step counter restarts with each episode
    assert torch.equal(torch.cat([b["collector", "traj_ids"] for b in batches]),
                       torch.arange(2 * FRAMES) // 5)
