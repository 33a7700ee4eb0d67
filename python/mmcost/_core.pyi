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
        service_times: Sequence[float], visits: Sequence[float], think_time: float, population: int
    ) -> queueing.MvaResult: ...
    @staticmethod
    def birth_death(arrival_rates: Sequence[float], service_rates: Sequence[float]) -> queueing.BirthDeathResult: ...
    @staticmethod
    def machine_repairman(
        populations: Sequence[int], think_time: float, service_time: float
    ) -> queueing.MachineRepairmanResult: ...
    @staticmethod
    def usl(n: npt.ArrayLike, sigma: float, kappa: float, lam: float) -> npt.NDArray[np.float64]: ...
