"""The one CPU share-out: the pool's CPUs among its envs, an env's among its processes."""

from __future__ import annotations


def share_out(cpus: list[int] | tuple[int, ...], count: int) -> list[tuple[int, ...]]:
    """`cpus` shared out in order among `count` takers. With no more CPUs than takers
    each taker gets one, going round them; with more, each gets a run of neighbours
    and every CPU goes to someone (the first takers get one more where it does not
    divide evenly)."""
    cpus = tuple(cpus)
    if not cpus:
        return [()] * count
    if count >= len(cpus):
        return [(cpus[k % len(cpus)],) for k in range(count)]
    each, extra = divmod(len(cpus), count)
    out, start = [], 0
    for k in range(count):
        end = start + each + (k < extra)
        out.append(cpus[start:end])
        start = end
    return out
