"""Type stubs of the compiled core, mmcost._core (built from python/bindings)."""

from typing import Sequence

import numpy as np
import numpy.typing as npt

class queueing:
    class MvaResult:
        throughput: npt.NDArray[np.float64]  # (N,) cycles per time unit
        queue_length: npt.NDArray[np.float64]  # (N, K) customers

    class MvaTop:
        throughput: float  # X(N)
        throughput_before: float  # X(N-1), 0 for N = 1
        queue_length: npt.NDArray[np.float64]  # (K,) Q_k(N)

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
    def mva_top(
        service_times: Sequence[float],
        visits: Sequence[float],
        think_time: float,
        population: int,
        scv: Sequence[float] = ...,
    ) -> queueing.MvaTop: ...
    @staticmethod
    def birth_death(arrival_rates: Sequence[float], service_rates: Sequence[float]) -> queueing.BirthDeathResult: ...
    @staticmethod
    def machine_repairman(
        populations: Sequence[int], think_time: float, service_time: float
    ) -> queueing.MachineRepairmanResult: ...
    @staticmethod
    def usl(n: npt.ArrayLike, sigma: float, kappa: float, lam: float) -> npt.NDArray[np.float64]: ...

class sim:
    class DistKind:
        deterministic: sim.DistKind
        exponential: sim.DistKind
        lognormal: sim.DistKind
        empirical: sim.DistKind
        def __init__(self, value: int) -> None: ...
    class Distribution:
        kind: sim.DistKind
        mean: float
        cv: float
        samples: list[float]
        def __init__(self, *, kind: sim.DistKind, mean: float, cv: float = 0.0, samples: Sequence[float] = ()) -> None: ...
    @staticmethod
    def sample(distribution: sim.Distribution, n: int, seed: int, stream: int = 0) -> npt.NDArray[np.float64]:
        """n draws of a Distribution from stream (seed, stream)."""
    @staticmethod
    def running_stats(values: Sequence[float], split: int) -> dict[str, float]: ...

class locks:
    class LockKind:
        queued: locks.LockKind
        ticket: locks.LockKind
    class LockSpec:
        def __init__(self, *, name: str, kind: locks.LockKind = ..., handoff: float = 0.0,
                     handoff_per_waiter: float = 0.0, partitions: int = 1) -> None: ...
    class Stage:
        def __init__(self, *, lock: int, site: str, time: sim.Distribution, irq_disabled: bool = False) -> None: ...
    class LockSimParams:
        def __init__(self, *, cpus: int, locks: Sequence[locks.LockSpec], stages: Sequence[locks.Stage],
                     irq_rate: float = 0.0, irq_service: float = 0.0, warmup_ops: int = 1000,
                     ops: int = 100000) -> None: ...
        def validate(self) -> None: ...
    @staticmethod
    def simulate(params: locks.LockSimParams, replications: int, threads: int, seed: int,
                 progress: object = None) -> dict[str, npt.NDArray[np.float64]]:
        """Per-replication arrays: time, ops, events, lock_* and stage_* (acquisitions, contended,
        wait_total, wait_max, wait_var), lock_busy. Times in the caller's unit (mmcost.locks: us)."""

class tlb:
    class Arch:
        x86: tlb.Arch
        arm64: tlb.Arch
    class Policy:
        immediate: tlb.Policy
        batched: tlb.Policy
        deferred: tlb.Policy
    class TlbSimParams:
        def __init__(self, *, cpus: int, arch: tlb.Arch, policy: tlb.Policy, call_rate: float,
                     reclaim_call_rate: float = 0.0, batch_folios: int = 32, entries_per_folio: int = 1,
                     flush_ceiling: int = 33, writable_fraction: float = 0.0, natural_flush_rate: float = 0.0,
                     other_round_rate: float = 0.0, reuse: sim.Distribution, warmup: float,
                     horizon: float) -> None: ...
        def validate(self) -> None: ...
    @staticmethod
    def simulate(params: tlb.TlbSimParams, replications: int, threads: int, seed: int,
                 progress: object = None) -> dict[str, npt.NDArray[np.float64]]:
        """Per-replication counts (rows = replications): shootdowns, full_flushes, invlpg (per CPU columns);
        calls, rounds, ipis, tlbi_ops, dsb_syncs, deferred_calls, reuse_rounds, events."""
