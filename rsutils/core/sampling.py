"""The Monte Carlo core: seeded noise streams and class counts under noise.

Reproducibility contract: the noise added to draw ``j`` of input ``index`` in the
stream ``stream`` (one of :data:`~rsutils.core.streams.STREAMS`) is a function of
``(seed, index, stream, j)`` only, and of the stream's sub-keys where it has some.
Draws are generated in fixed-size blocks from a generator seeded by
:func:`~rsutils.core.streams.stream_generator`; a batch of any size is cut from that
stream. So counts (and certificates) do not depend on
``batch_size`` nor on how a run over a dataset is split, as long as the base model
itself gives the same label for the same input whatever the batch.

On a CPU the loop can draw the next batch's noise in a second thread while the model
runs on the current batch (``prefetch=True``): the same stream, drawn by the same calls
in the same order from the same generator, so the draws, counts and certificates are
bitwise those of the serial loop; only the wall time changes. It is off by default:
on a 2-core CPU the forward pass already keeps both cores busy, and the worker made
CERTIFY slower when the machine was loaded (``python -m rsutils bench --prefetch``
compares the two on a machine of your own).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing

import numpy as np
import torch
from torch import nn

from rsutils.core.noise import NoiseFamily

__all__ = ["NoiseStream", "PrefixCounter", "count_classes", "predicted_labels"]


#: A block holds at most this many draws, and at most ``_BLOCK_ELEMENTS`` numbers.
_MAX_BLOCK_DRAWS = 1000
_BLOCK_ELEMENTS = 1 << 21


class NoiseStream:
    """``total`` noise draws of shape ``shape``, served in any batch sizes.

    Blocks of ``block`` draws are generated in a fixed order with fixed sizes (which
    depend on ``total`` and the input size only), so ``fill_`` returns the same
    values however the requests are cut.
    """

    def __init__(
        self,
        noise: NoiseFamily,
        shape: torch.Size,
        total: int,
        generator: torch.Generator,
        dtype: torch.dtype,
    ) -> None:
        numel = max(1, int(np.prod(shape)))
        self.block = max(1, min(_MAX_BLOCK_DRAWS, _BLOCK_ELEMENTS // numel))
        self.noise = noise
        self.generator = generator
        self._unissued = total  # draws not yet generated
        self._buffer_shape = (min(self.block, total), *shape)
        self._dtype = dtype
        self._buffer: torch.Tensor | None = None  # allocated when a request splits a block
        self._pos = self._len = 0  # unread draws are _buffer[_pos:_len]

    def _next_block_len(self) -> int:
        length = min(self.block, self._unissued)
        if length == 0:
            raise RuntimeError("the noise stream is exhausted: more draws asked than `total`")
        self._unissued -= length
        return length

    def fill_(self, out: torch.Tensor) -> torch.Tensor:
        """Fill ``out`` (shape ``(k, *shape)``) with the next ``k`` draws."""
        filled, wanted = 0, out.shape[0]
        while filled < wanted:
            if self._pos == self._len:
                next_len = min(self.block, self._unissued)
                if wanted - filled >= next_len > 0:  # a whole block fits: write it in place
                    self._next_block_len()
                    self.noise.sample_(out[filled : filled + next_len], self.generator)
                    filled += next_len
                    continue
                if self._buffer is None:
                    device = self.generator.device
                    self._buffer = torch.empty(self._buffer_shape, dtype=self._dtype, device=device)
                self._len, self._pos = self._next_block_len(), 0
                self.noise.sample_(self._buffer[: self._len], self.generator)
            assert self._buffer is not None
            take = min(wanted - filled, self._len - self._pos)
            out[filled : filled + take].copy_(self._buffer[self._pos : self._pos + take])
            self._pos += take
            filled += take
        return out


def predicted_labels(output: torch.Tensor, batch: int, num_classes: int) -> torch.Tensor:
    """Class labels from a base model's output: logits ``(batch, C)`` or labels ``(batch,)``."""
    if output.dim() == 2 and output.shape == (batch, num_classes):
        return output.argmax(dim=1)
    if output.dim() == 1 and output.shape[0] == batch and not output.is_floating_point():
        if bool(((output < 0) | (output >= num_classes)).any()):
            raise ValueError(
                f"the base model returned labels outside [0, {num_classes}); "
                f"check num_classes={num_classes}"
            )
        return output.long()
    raise ValueError(
        f"the base model returned shape {tuple(output.shape)} for a batch of {batch} inputs; "
        f"expected logits of shape ({batch}, {num_classes}) or integer labels of shape "
        f"({batch},). Check num_classes={num_classes} and that the model takes a batch."
    )


def count_classes(
    model: nn.Module,
    x: torch.Tensor,
    noise: NoiseFamily,
    num: int,
    *,
    num_classes: int,
    batch_size: int,
    generator: torch.Generator,
    prefetch: bool = False,
) -> torch.Tensor:
    """How often the base model predicts each class on ``num`` noisy copies of ``x``.

    Runs under ``torch.inference_mode``; noise is drawn, added in place and counted
    on ``x``'s device, and the counts (a length-``num_classes`` int64 tensor) stay
    there until the caller reads them. Non-finite logits in any batch are an error
    (checked on the device, read once at the end). ``prefetch`` is
    :class:`PrefixCounter`'s (the counts are the same either way).
    """
    counter = PrefixCounter(
        model,
        x,
        noise,
        num,
        num_classes=num_classes,
        batch_size=batch_size,
        generator=generator,
        prefetch=prefetch,
    )
    return counter.advance(num)


class PrefixCounter:
    """Class counts over growing prefixes of one stream of ``total`` noisy copies of ``x``.

    :meth:`advance` draws up to a prefix length and returns the counts so far, so a
    sequential procedure can look at 100, then 200, ... draws of the same stream; the
    counts at ``total`` equal :func:`count_classes` with the same generator and
    ``num = total`` (the stream is cut into the same blocks). With ``keep_labels`` it
    also keeps the class of every draw, in stream order (:meth:`labels`), so that a
    procedure can later be replayed on exactly these draws
    (:mod:`rsutils.sequential.record`).

    With ``prefetch`` (off by default, see the module's text) and ``x`` on a CPU, an
    :meth:`advance` of two batches or more draws each next batch's noise in a worker
    thread while the model
    runs on the current one (torch releases the GIL in both). The worker makes the same
    :meth:`NoiseStream.fill_` calls, in the same order, on the same generator, which no
    other thread touches meanwhile, so the draws, their order and the counts are
    bitwise those of ``prefetch=False``; an error raised while drawing (an exhausted
    stream, a family's bad parameters) is raised in the caller as it is. On a GPU the
    loop stays serial: its kernels already run asynchronously, in stream order.

    Its constructor takes nine parameters: it is the Monte Carlo loop itself
    (the model, the input, the noise, the stream's length, the classes, the batch, the
    generator), and two switches; :meth:`~rsutils.core.smooth.Smooth.prefix_counter` builds it
    from a smoothed classifier with four.
    """

    def __init__(
        self,
        model: nn.Module,
        x: torch.Tensor,
        noise: NoiseFamily,
        total: int,
        *,
        num_classes: int,
        batch_size: int,
        generator: torch.Generator,
        keep_labels: bool = False,
        prefetch: bool = False,
    ) -> None:
        device, dtype = x.device, x.dtype
        self.prefetch = prefetch and device.type == "cpu"
        self._kept: list[torch.Tensor] | None = [] if keep_labels else None
        self.model, self.x, self.total, self.drawn = model, x, total, 0
        self._added = noise.prepare_input(x)  # x itself unless the sampler works on a grid
        self.num_classes, self.batch_size = num_classes, batch_size
        self.stream = NoiseStream(noise, x.shape, total, generator, dtype)
        self.counts = torch.zeros(num_classes, dtype=torch.long, device=device)
        self._ones = torch.ones(min(batch_size, total), dtype=torch.long, device=device)
        self._buffer = torch.empty((min(batch_size, total), *x.shape), dtype=dtype, device=device)
        self._spare: torch.Tensor | None = None  # the second buffer, filled while one is used

    def advance(self, to: int) -> torch.Tensor:
        """The counts of the first ``to`` draws (``drawn <= to <= total``), on the device."""
        if not self.drawn <= to <= self.total:
            raise ValueError(
                f"can only advance from {self.drawn} draws to at most {self.total}, got {to}"
            )
        finite = torch.ones((), dtype=torch.bool, device=self.x.device)  # read once, at the end
        sizes = [
            min(self.batch_size, to - start) for start in range(self.drawn, to, self.batch_size)
        ]
        with torch.inference_mode(), closing(self._noise_batches(sizes)) as batches:
            for noise in batches:
                k = noise.shape[0]
                batch = self.stream.noise.perturb_(noise, self._added)
                output = _forward(self.model, batch)
                labels = predicted_labels(output, k, self.num_classes)
                self.counts.scatter_add_(0, labels, self._ones[:k])
                if self._kept is not None:
                    self._kept.append(labels.to(torch.int32))
                if output.is_floating_point():
                    finite &= torch.isfinite(output).all()
                self.drawn += k
        if not bool(finite):
            raise ValueError(
                "the base model returned NaN or infinite outputs on noisy copies of the input, "
                "so its counts mean nothing; check the model's weights "
                "(all(p.isfinite().all() for p in model.parameters())) and its forward pass"
            )
        return self.counts.clone()

    def _noise_batches(self, sizes: list[int]) -> Iterator[torch.Tensor]:
        """The next noise draws, one buffer per size in ``sizes``; with a worker, each next
        buffer is filled while the caller uses the current one (it is done with a buffer
        when it asks for the next)."""
        if not self.prefetch or len(sizes) < 2:
            for k in sizes:
                yield self.stream.fill_(self._buffer[:k])
            return
        if self._spare is None:
            self._spare = torch.empty_like(self._buffer)
        buffers = (self._buffer, self._spare)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="rsutils-noise") as worker:
            pending: Future[torch.Tensor] | None = worker.submit(self._fill, buffers[0][: sizes[0]])
            try:
                for i in range(len(sizes)):
                    assert pending is not None
                    noise = pending.result()  # re-raises the worker's error as it is
                    pending = None
                    if i + 1 < len(sizes):
                        out = buffers[(i + 1) % 2][: sizes[i + 1]]
                        pending = worker.submit(self._fill, out)
                    yield noise
            finally:  # the caller stopped early: let the worker finish before leaving
                if pending is not None:
                    pending.cancel()

    def _fill(self, out: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():  # the caller's mode (thread-local) in the worker too
            return self.stream.fill_(out)

    def labels(self) -> np.ndarray:
        """The class of each of the ``drawn`` draws so far, in stream order (int32).

        Needs ``keep_labels=True``; the counts are their histogram.
        """
        if self._kept is None:
            raise ValueError("this counter keeps no labels: create it with keep_labels=True")
        if not self._kept:
            return np.zeros(0, dtype=np.int32)
        return torch.cat(self._kept).cpu().numpy()


def _forward(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    try:
        return model(batch)
    except RuntimeError as error:
        raise RuntimeError(
            f"the base model failed on a batch of shape {tuple(batch.shape)}: {error}\n"
            "Pass one input without a batch dimension (e.g. an image of shape (C, H, W)); "
            "the noisy copies are stacked along a new first dimension."
        ) from error
