"""Dataset resolution: explicit root / RSUTILS_DATA, Debian's package, torchvision."""

import functools
import gc
import hashlib
import shutil
import threading
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
import torch

import rsutils.data as rsdata
from rsutils.data import DEBIAN_FASHION_MNIST, fashion_mnist_folder, load_dataset


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):  # a client that read headers only
            pass


def md5_of(path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


@contextmanager
def local_http_mirror(folder):
    """Serve ``folder`` over HTTP on localhost; yields the base URL."""
    folder.mkdir(parents=True, exist_ok=True)
    handler = functools.partial(_QuietHandler, directory=str(folder))
    with ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/"
        finally:
            server.shutdown()


def test_explicit_root_is_read_as_images_in_zero_one(fake_fashion_mnist) -> None:
    test = load_dataset("fashion-mnist", "test", fake_fashion_mnist)
    assert test.images.shape == (40, 1, 28, 28) and test.images.dtype == torch.float32
    assert 0.0 <= float(test.images.min()) and float(test.images.max()) <= 1.0
    assert test.labels.dtype == torch.int64 and test.num_classes == 10


def test_environment_variable_is_the_second_way_to_point_at_data(fake_fashion_mnist, monkeypatch):
    monkeypatch.setenv("RSUTILS_DATA", str(fake_fashion_mnist))
    assert fashion_mnist_folder() == fake_fashion_mnist
    assert len(load_dataset("fashion-mnist", "train")) == 64


def test_torchvision_layout_is_recognised(fake_fashion_mnist, tmp_path) -> None:
    raw = tmp_path / "tv" / "FashionMNIST" / "raw"
    shutil.copytree(fake_fashion_mnist, raw)
    assert fashion_mnist_folder(tmp_path / "tv") == raw


def test_debian_package_is_used_when_nothing_is_configured(fake_fashion_mnist, monkeypatch):
    monkeypatch.delenv("RSUTILS_DATA", raising=False)
    monkeypatch.setattr(rsdata, "DEBIAN_FASHION_MNIST", fake_fashion_mnist)
    assert fashion_mnist_folder(download=False) == fake_fashion_mnist


@pytest.mark.skipif(
    not (DEBIAN_FASHION_MNIST / "t10k-images-idx3-ubyte.gz").exists(),
    reason="needs Debian's dataset-fashion-mnist (installed by .ci/run) as a local mirror",
)
@pytest.mark.filterwarnings("ignore::ResourceWarning")  # torchvision leaves a socket to the gc
def test_torchvision_download_route_with_a_local_mirror(tmp_path, monkeypatch) -> None:
    """The online route, exercised offline: torchvision downloads the files over HTTP
    from a mirror on localhost, checks their MD5 and unpacks them. Debian recompressed
    the archives, so the expected MD5s are those of the files the mirror serves."""
    from torchvision.datasets import FashionMNIST

    resources = [(name, md5_of(DEBIAN_FASHION_MNIST / name)) for name, _ in FashionMNIST.resources]
    monkeypatch.setattr(FashionMNIST, "resources", resources)
    monkeypatch.setattr(rsdata, "DEBIAN_FASHION_MNIST", tmp_path / "absent")
    with local_http_mirror(DEBIAN_FASHION_MNIST) as url:
        monkeypatch.setattr(FashionMNIST, "mirrors", [url])
        folder = fashion_mnist_folder(tmp_path / "download")
        gc.collect()
    assert folder == tmp_path / "download" / "FashionMNIST" / "raw"
    test = load_dataset("fashion-mnist", "test", tmp_path / "download")
    assert len(test) == 10_000
    assert np.bincount(test.labels.numpy()).tolist() == [1000] * 10


@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_a_failed_download_is_reported_with_the_three_ways(tmp_path, monkeypatch) -> None:
    from torchvision.datasets import FashionMNIST

    monkeypatch.setattr(rsdata, "DEBIAN_FASHION_MNIST", tmp_path / "absent")
    with local_http_mirror(tmp_path / "empty-mirror") as url:
        monkeypatch.setattr(FashionMNIST, "mirrors", [url])
        with pytest.raises(FileNotFoundError, match=r"the download failed"):
            fashion_mnist_folder(tmp_path / "download")
        gc.collect()


def test_non_idx_files_are_rejected(tmp_path) -> None:
    import gzip

    path = tmp_path / "x.gz"
    with gzip.open(path, "wb") as handle:
        handle.write(b"not an idx file")
    with pytest.raises(ValueError, match=r"x.gz is not a .* \(not an unsigned-byte IDX file\)"):
        rsdata._read_idx(path)


def test_a_truncated_or_foreign_idx_file_is_named_in_one_line(fake_fashion_mnist) -> None:
    path = fake_fashion_mnist / "t10k-images-idx3-ubyte.gz"
    data = path.read_bytes()
    for spoiled, reason in ((data[: len(data) // 2], "Compressed file ended"), (b"x", "gzip")):
        path.write_bytes(spoiled)
        with pytest.raises(ValueError, match=rf"t10k-images-idx3-ubyte.gz is not a .*{reason}"):
            load_dataset("fashion-mnist", "test", fake_fashion_mnist)


def test_missing_dataset_names_all_three_ways(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(rsdata, "DEBIAN_FASHION_MNIST", tmp_path / "absent")
    with pytest.raises(FileNotFoundError) as info:
        fashion_mnist_folder(tmp_path / "empty", download=False)
    message = str(info.value)
    assert "RSUTILS_DATA" in message and "dataset-fashion-mnist" in message and "online" in message


def test_unknown_dataset_and_split() -> None:
    with pytest.raises(ValueError, match=r"choose fashion-mnist, .*, imagenet, or folder:PATH"):
        load_dataset("svhn")
    with pytest.raises(ValueError, match=r"'train' or 'test'"):
        load_dataset("fashion-mnist", "val")
