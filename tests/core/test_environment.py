"""The description of a run's environment that logs and chapters record."""

import torch

from rsutils.core.environment import describe_environment, processor_name


def test_the_environment_names_torch_the_device_kind_and_the_threads() -> None:
    environment = describe_environment("cpu")
    assert environment == {
        "torch": torch.__version__,
        "device": f"cpu: {processor_name()}",
        "threads": torch.get_num_threads(),
    }
    assert processor_name()


def test_the_thread_count_is_read_when_described() -> None:
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert describe_environment()["threads"] == 1
    finally:
        torch.set_num_threads(before)


def test_the_description_is_plain_data_a_weights_only_checkpoint_can_hold(tmp_path) -> None:
    environment = describe_environment()
    assert all(type(value) in (str, int) for value in environment.values())
    torch.save({"meta": environment}, tmp_path / "c.pt")
    assert torch.load(tmp_path / "c.pt", weights_only=True)["meta"] == environment
