"""craftium_ma.models without the engine: the actor-critic, its checkpoints, the frame
preprocessing of training, and the viewer's policy built from the package alone."""

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from craftium_ma.models import (ActorCritic, FrameStack, env_options, load_checkpoint,
                                probe_input, save_checkpoint)

ROOT = Path(__file__).resolve().parent.parent
ARGS = {"task": "small_room", "num_agents": 2, "max_cycles": 30, "frameskip": 4,
        "obs_size": 32, "grayscale": False, "frame_stack": 2}


def frames(n, shape=(32, 32, 3), seed=0):
    return np.random.default_rng(seed).integers(0, 256, (n, *shape), dtype=np.uint8)


def test_the_model_gives_one_logit_per_action_and_one_value_per_frame():
    model = ActorCritic((48, 48, 6), 5)
    obs = torch.from_numpy(frames(3, (48, 48, 6)))
    assert model.logits(obs).shape == (3, 5)
    assert model.get_value(obs).shape == (3,)
    action, logp, entropy, value = model.act(obs)
    assert action.shape == logp.shape == entropy.shape == value.shape == (3,)
    assert model.act(obs, action)[0] is action
    with pytest.raises(ValueError, match=r"obs_shape must be \(height, width, channels\)"):
        ActorCritic((48, 48), 5)


def test_the_state_dict_keeps_the_key_names_of_earlier_checkpoints():
    assert list(ActorCritic((32, 32, 6), 4).state_dict()) == [
        "trunk.0.weight", "trunk.0.bias", "trunk.2.weight", "trunk.2.bias", "trunk.5.weight",
        "trunk.5.bias", "policy.weight", "policy.bias", "value.weight", "value.bias"]


def test_a_saved_checkpoint_loads_back_bit_for_bit(tmp_path):
    torch.manual_seed(3)
    model = ActorCritic((32, 32, 6), 4)
    path = tmp_path / "checkpoint.pt"
    save_checkpoint(path, model, args=ARGS, global_step=512, update=4)
    assert not (tmp_path / "checkpoint.pt.tmp").exists()
    loaded, ckpt = load_checkpoint(path)
    assert sorted(ckpt) == ["args", "global_step", "model", "n_actions", "obs_shape",
                            "probe_logits", "update"]
    assert ckpt["obs_shape"] == [32, 32, 6] and ckpt["n_actions"] == 4 and ckpt["args"] == ARGS
    assert not loaded.training
    for (name, saved), (_, back) in zip(model.state_dict().items(), loaded.state_dict().items()):
        assert torch.equal(saved, back), name
    with torch.no_grad():
        assert loaded.logits(probe_input(loaded.obs_shape)).tolist() == ckpt["probe_logits"]


def test_saving_keeps_the_models_training_mode(tmp_path):
    model = ActorCritic((32, 32, 6), 4)
    save_checkpoint(tmp_path / "a.pt", model)
    assert model.training
    model.eval()
    save_checkpoint(tmp_path / "b.pt", model)
    assert not model.training


def test_loading_a_file_that_is_no_checkpoint_names_what_it_lacks(tmp_path):
    path = tmp_path / "weights.pt"
    torch.save({"model": ActorCritic((32, 32, 6), 4).state_dict()}, path)
    with pytest.raises(ValueError, match="not a checkpoint of examples/train_ppo.py "
                                         r"\(it lacks obs_shape, n_actions, args\)"):
        load_checkpoint(path)


def test_env_options_are_the_checkpoints_training_settings():
    assert env_options({"args": ARGS}) == {"num_agents": 2, "max_cycles": 30, "obs_size": 32,
                                          "frameskip": 4}
    with_options = env_options({"args": ARGS | {"task_options": '{"size": 5}'}})
    assert with_options["task_options"] == {"size": 5}


@pytest.mark.parametrize("grayscale", [False, True])
def test_frame_stack_matches_supersuits_grey_and_frame_stack(grayscale):
    color_reduction = pytest.importorskip("supersuit.utils.basic_transforms.color_reduction")
    from gymnasium import spaces
    from supersuit.utils.frame_stack import stack_init, stack_obs

    space = spaces.Box(0, 255, (32, 32, 3), np.uint8)
    stack = FrameStack((32, 32, 3), grayscale, k=3)
    if grayscale:
        space = color_reduction.change_obs_space(space, "full")
    expected = stack_init(space, 3)
    for frame in frames(4):
        seen = color_reduction.change_observation(frame, space, "full") if grayscale else frame
        expected = stack_obs(expected, seen, space, 3)
        np.testing.assert_array_equal(stack.push(frame[None])[0], expected)
    assert stack.shape == ((32, 32, 3) if grayscale else (32, 32, 9))


def test_a_fresh_row_forgets_its_history_and_the_others_keep_theirs():
    stack = FrameStack((32, 32, 3), k=2, rows=2)
    first, second = frames(2, (2, 32, 32, 3))
    stack.push(first)
    out = stack.push(second, fresh=[True, False])
    np.testing.assert_array_equal(out[0], np.concatenate([np.zeros_like(second[0]), second[0]], -1))
    np.testing.assert_array_equal(out[1], np.concatenate([first[1], second[1]], -1))
    out[:] = 0
    assert stack.stacks.any()  # push returns a copy


def test_frame_stack_rejects_frames_of_another_shape():
    stack = FrameStack((32, 32, 3), k=2, rows=2)
    with pytest.raises(ValueError, match=r"must have shape \(2, 32, 32, 3\), got \(1, 32, 32, 3\)"):
        stack.push(frames(1))
    with pytest.raises(ValueError, match=r"frame_shape must be \(height, width, 3\)"):
        FrameStack((32, 32, 1))
    with pytest.raises(ValueError, match="k and rows must be at least 1, got k=0"):
        FrameStack((32, 32, 3), k=0)


def test_importing_the_models_without_torch_says_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.delitem(sys.modules, "craftium_ma.models")
    with pytest.raises(ImportError, match=r"needs torch: pip install 'craftium-ma\[train\]'"):
        importlib.import_module("craftium_ma.models")


VIEWER_POLICY = """
import json, sys
import numpy as np
import craftium_ma
from craftium_ma.policies import checkpoint_policy
policy, options = checkpoint_policy(sys.argv[1], "small_room", seed=0)
frame = np.zeros((32, 32, 3), np.uint8)
print(json.dumps({"package": craftium_ma.__file__, "options": options,
                  "action": policy("agent_0", frame, {}),
                  "loaded": sorted(m for m in sys.modules if "train_ppo" in m)}))
"""


def test_the_viewer_policy_loads_a_checkpoint_from_the_package_without_examples(tmp_path):
    site = tmp_path / "site"  # the package alone, as an install has it: no examples/ beside it
    shutil.copytree(ROOT / "craftium_ma", site / "craftium_ma",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (site / "mods").symlink_to(ROOT / "mods")
    save_checkpoint(tmp_path / "checkpoint.pt", ActorCritic((32, 32, 6), 4), args=ARGS)
    proc = subprocess.run([sys.executable, "-c", VIEWER_POLICY, str(tmp_path / "checkpoint.pt")],
                          cwd=tmp_path, env={"PYTHONPATH": str(site), "HOME": str(tmp_path)},
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert Path(result["package"]).parent == site / "craftium_ma"
    assert not (site / "examples").exists() and result["loaded"] == []
    assert result["options"] == env_options({"args": ARGS}) and result["action"] in range(4)
