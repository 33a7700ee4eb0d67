"""Type stubs of the compiled core, mmcost._core (built from python/bindings)."""

from typing import Sequence

import numpy as np
import numpy.typing as npt

class queueing:
    class MvaResult:
        throughput: npt.NDArray[np.float64]  # (N,) cycles per time unit
        response_time: npt.NDArray[np.float64]  # (N,) time per cycle outside think
        utilization: npt.NDArray[np.float64]  # (N, K)
        queue_length: npt.NDArray[np.float64]  # (N, K) customers
        residence_time: npt.NDArray[np.float64]  # (N, K) time per cycle

    class BirthDeathResult:
        probabilities: npt.NDArray[np.float64]  # (N+1,)
        throughput: float
        mean_number: float
        response_time: float
        utilization: float

    class MachineRepairmanResult:
        throughput: npt.NDArray[np.float64]
        response_time: npt.NDArray[np.float64]
        utilization: npt.NDArray[np.float64]
        queue_length: npt.NDArray[np.float64]

    @staticmethod
    def mva(
        service_times: Sequence[float],
        visits: Sequence[float],
        think_time: float,
        population: int,
        scv: Sequence[float] = ...,
    ) -> queueing.MvaResult: ...
    @staticmethod
    def birth_death(arrival_rates: Sequence[float], service_rates: Sequence[float]) -> queueing.BirthDeathResult: ...
    @staticmethod
    def machine_repairman(
        populations: Sequence[int], think_time: float, service_time: float
    ) -> queueing.MachineRepairmanResult: ...
    @staticmethod
    def usl(n: npt.ArrayLike, sigma: float, kappa: float, lam: float) -> npt.NDArray[np.float64]: ...

class sim:
    @staticmethod
    def sample(
        kind: int, mean: float, cv: float, samples: Sequence[float], n: int, seed: int, stream: int = 0
    ) -> npt.NDArray[np.float64]:
        """n draws (kind 0=deterministic 1=exponential 2=lognormal 3=empirical) from stream (seed, stream)."""
    @staticmethod
    def running_stats(values: Sequence[float], split: int) -> dict[str, float]: ...

class locks:
    @staticmethod
    def simulate(
        cpus: int,
        locks: Sequence[tuple[str, int, float, float, int]],  # (name, 0=queued 1=ticket, handoff, per_waiter, partitions)
        stages: Sequence[tuple[int, str, int, float, float, Sequence[float], bool]],
        # (lock index or -1, site, dist kind, mean, cv, samples, irq_disabled)
        warmup_ops: int,
        ops: int,
        replications: int,
        threads: int,
        seed: int,
        irq_rate: float = 0.0,
        irq_service: float = 0.0,
        progress: object = None,
    ) -> dict[str, npt.NDArray[np.float64]]:
        """Per-replication arrays: time, ops, events, lock_* and stage_* (acquisitions, contended,
        wait_total, wait_max, wait_var), lock_busy. Times in the caller's unit (mmcost.locks: us)."""

class tlb:
    @staticmethod
    def simulate(
        cpus: int,
        arch: int,  # 0 = x86 (IPIs), 1 = arm64 (broadcast TLBI)
        policy: int,  # 0 = immediate, 1 = batched, 2 = deferred (migrc)
        call_rate: float,  # migration calls per second (migrc may defer their flush)
        reclaim_call_rate: float,  # reclaim unmap calls per second (never deferred)
        batch_folios: int,
        entries_per_folio: int,
        flush_ceiling: int,
        writable_fraction: float,
        natural_flush_rate: float,
        other_round_rate: float,
        reuse_kind: int,  # 0 = det, 1 = exp, 2 = lognormal, 3 = empirical
        reuse_mean: float,  # seconds
        reuse_cv: float,
        reuse_samples: Sequence[float],  # seconds
        warmup: float,
        horizon: float,
        replications: int,
        threads: int,
        seed: int,
        progress: object = None,
    ) -> dict[str, npt.NDArray[np.float64]]:
        """Per-replication counts (rows = replications): shootdowns, full_flushes, invlpg (per CPU columns);
        calls, rounds, ipis, tlbi_ops, dsb_syncs, deferred_calls, reuse_rounds, events."""
