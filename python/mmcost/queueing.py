"""Analytic queueing solvers that the lock, TLB and swap models reuse.

Times may be in any one unit (ns, us, s); throughputs come out per that unit.
The numerical work is in the C++ core (``core/src/queueing``); this module
checks arguments, names results and returns pandas objects.

- :func:`mva`: exact Mean Value Analysis of a closed network (K FCFS stations
  plus a think-time delay), every population 1..N.
- :func:`birth_death`: finite birth-death chain with state-dependent rates,
  solved exactly; :func:`finite_source` builds the N-CPU case a spinlock uses.
- :func:`machine_repairman`: the M/M/1//N closed form, an independent check.
- :func:`usl` and :func:`usl_fit`: the Universal Scalability Law.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import _core
from . import _validate as v

__all__ = [
    "mva",
    "birth_death",
    "finite_source",
    "BirthDeathResult",
    "machine_repairman",
    "usl",
    "usl_fit",
]


def mva(demands, think_time, population, visits=None, stations=None, scv=None) -> pd.DataFrame:
    """Exact MVA for a closed network of FCFS stations plus one delay station.

    Reiser & Lavenberg, "Mean-Value Analysis of Closed Multichain Queuing
    Networks", JACM 27(2):313-322, 1980. Product form assumes exponential
    service at FCFS stations (BCMP); the think time may have any distribution.

    Parameters
    ----------
    demands : array of K floats >= 0
        Service demand per cycle at each station (time units). If ``visits``
        is given, ``demands`` is instead the mean service time per visit and
        the demand is ``visits * demands``.
    think_time : float >= 0
        Mean time at the delay station per cycle (same unit).
    population : int >= 1
        Largest population N; every n = 1..N is solved.
    visits : array of K floats >= 0, optional
        Visits to each station per cycle (default 1).
    stations : list of K str, optional
        Station names used as column suffixes (default ``0 .. K-1``).
    scv : array of K floats >= 0, optional
        Squared coefficient of variation of each station's service time
        (default 1, exponential: exact). Other values use the residual-life
        approximation (Reiser, "A queueing network analysis of computer
        communication networks with window flow control", IEEE Trans.
        Commun. 27(8), 1979): an arrival waits a full service for each
        queued customer and (1 + scv) / 2 of one for the customer in service,
        e.g. scv = 0 for a deterministic hold. Its throughput can overshoot
        the bottleneck bound near saturation; it is clamped to
        X <= 1 / max_k D_k (Denning & Buzen, Computing Surveys 10(3), 1978)
        and the residence times are then scaled by one common factor so that
        Little's law still holds: sum_k Q_k + X Z = n and Q_k = X R_k at
        every population.

    Returns
    -------
    DataFrame indexed by ``population`` 1..N with columns ``throughput``
    (cycles per time unit), ``response_time`` (time per cycle outside the
    delay station) and per station ``utilization_<s>``, ``queue_length_<s>``,
    ``residence_time_<s>``, ``throughput_<s>`` (visits per time unit).

    Notes
    -----
    Limits: ``population`` <= 10^7, K <= 10^4 stations and population x K
    <= 5 x 10^7 (the table); :class:`mmcost.locks.LockSystem` solves larger
    N at O(K) memory.
    """
    s = v.float_array("demands", demands)
    v.at_most("len(demands)", s.size, v.MAX_TABLE_STATIONS, "stations; each is four columns of the table")
    vis = np.ones_like(s) if visits is None else v.float_array("visits", visits)
    v.same_length("demands", s, "visits", vis)
    z = v.scalar("think_time", think_time)
    n = v.count("population", population)
    v.at_most("population", n, v.MAX_POPULATION)
    v.at_most("population x stations", n * s.size, v.MAX_TABLE_CELLS, "the per-population table's cells")
    names = _station_names(stations, s.size)
    c2 = [] if scv is None else v.float_array("scv", scv)
    if scv is not None:
        v.same_length("demands", s, "scv", c2)
    # The core writes the whole table as one float64 block in pandas' own
    # layout (a row per column: X, R, then U_k, Q_k, R_k = Q_k / X, X_k per
    # station), 64 populations at a time; the frame takes it without a copy.
    # A dict of 4 K + 2 columns made pandas stack them column by column, and
    # the N x K table the core kept cost 12,500 page faults at N = 10^5, K = 64.
    block = _core.queueing.mva_frame(s.tolist(), vis.tolist(), z, n, list(c2))
    index = pd.RangeIndex(1, n + 1, name="population")
    columns = ["throughput", "response_time"] + [
        f"{c}_{name}" for name in names for c in ("utilization", "queue_length", "residence_time", "throughput")
    ]
    return pd.DataFrame(block.T, index=index, columns=columns, copy=False)


def _station_names(stations, k: int) -> list[str]:
    if stations is None:
        return [str(i) for i in range(k)]
    if isinstance(stations, str) or len(stations) != k:
        raise ValueError(f"stations must be a list of {k} names, one per demand")
    names = [str(x) for x in stations]
    if len(set(names)) != k:
        raise ValueError(f"stations must be unique, got {names}")
    return names


@dataclass(frozen=True)
class BirthDeathResult:
    """Stationary solution of a finite birth-death chain.

    Attributes
    ----------
    probabilities : ndarray, shape (N+1,)
        ``probabilities[k]`` = P(k customers in the station).
    throughput : float
        Departures per time unit, sum_k pi_k mu_k.
    mean_number : float
        Mean customers in the station, sum_k k pi_k.
    response_time : float
        Mean time in the station (waiting + service), by Little's law.
    utilization : float
        P(station not empty) = 1 - pi_0.
    """

    probabilities: np.ndarray = field(repr=False)
    throughput: float
    mean_number: float
    response_time: float
    utilization: float


def birth_death(arrival_rates, service_rates) -> BirthDeathResult:
    """Exact stationary solution of a birth-death chain on states 0..N.

    ``arrival_rates[k]`` is the rate of k -> k+1 for k = 0..N-1 (>= 0);
    ``service_rates[k]`` is the rate of k+1 -> k, i.e. the service rate when
    k+1 customers are present (> 0): an arbitrary state-dependent rate, such as
    a ticket spinlock whose handoff slows with every waiter (Boyd-Wickizer,
    Kaashoek, Morris, Zeldovich, "Non-scalable locks are dangerous", Linux
    Symposium 2012). Solved by the product form in log space with
    log-sum-exp normalisation (O(N); accurate for rates spanning any range).
    """
    lam = v.float_array("arrival_rates", arrival_rates)
    mu = v.float_array("service_rates", service_rates, positive=True)
    v.same_length("arrival_rates", lam, "service_rates", mu)
    v.at_most("len(arrival_rates)", lam.size, v.MAX_CHAIN_STATES, "states of the chain")
    r = _core.queueing.birth_death(lam, mu)
    return BirthDeathResult(
        probabilities=np.asarray(r.probabilities),
        throughput=float(r.throughput),
        mean_number=float(r.mean_number),
        response_time=float(r.response_time),
        utilization=float(r.utilization),
    )


def finite_source(n, think_time, service_rates) -> BirthDeathResult:
    """N sources (CPUs) each returning after an exponential think time.

    The arrival rate with k customers present is ``(n - k) / think_time``;
    ``service_rates`` has n entries, the rate with 1..n present. With a constant
    service rate this is the machine-repairman model.
    """
    n = v.count("n", n)
    v.at_most("n", n, v.MAX_CHAIN_STATES, "states of the chain")
    z = v.scalar("think_time", think_time, positive=True)
    mu = v.float_array("service_rates", service_rates, positive=True)
    if mu.size != n:
        raise ValueError(f"service_rates must have n = {n} entries, got {mu.size}")
    arrivals = (n - np.arange(n)) / z
    return birth_death(arrivals, mu)


def machine_repairman(n, think_time, service_time) -> pd.DataFrame:
    """Closed form of the M/M/1//N (finite-source, machine-repairman) model.

    p0 = [sum_{k=0}^{N} N!/(N-k)! (S/Z)^k]^-1 (Kleinrock, Queueing Systems
    vol. 1, 1975, sec. 3.8), evaluated as the Erlang-B probability B(N, Z/S).

    Parameters: ``n`` an int or array of ints >= 1, ``think_time`` Z >= 0,
    ``service_time`` S > 0. Returns a DataFrame indexed by ``n`` with
    ``throughput``, ``response_time``, ``utilization``, ``queue_length``.
    Any finite S and Z work (Z/S may overflow: the recursion runs on the
    smaller of Z/S and S/Z); a response time or throughput beyond a double
    (S = 1e308 with n = 2) is a ValueError naming ``service_time``.
    """
    ns = v.count_array("n", n)
    v.at_most("max(n)", int(ns.max()), v.MAX_POPULATION)
    v.at_most("len(n)", ns.size, v.MAX_POPULATION)
    z = v.scalar("think_time", think_time)
    s = v.scalar("service_time", service_time, positive=True)
    r = _core.queueing.machine_repairman(ns.tolist(), z, s)
    return pd.DataFrame(
        {
            "throughput": r.throughput,
            "response_time": r.response_time,
            "utilization": r.utilization,
            "queue_length": r.queue_length,
        },
        index=pd.Index(ns, name="n"),
    )


def usl(n, sigma, kappa, lam):
    """Universal Scalability Law throughput X(N) = lam N / (1 + sigma (N-1) + kappa N (N-1)).

    Gunther, "Guerrilla Capacity Planning", Springer 2007, ch. 4. ``n`` > 0
    (scalar or array), ``sigma`` >= 0 (contention), ``kappa`` >= 0
    (coherency), ``lam`` > 0 (throughput of one unit). Returns a float for a
    scalar ``n``, else an array.
    """
    scalar_in = np.ndim(n) == 0
    ns = v.float_array("n", n, positive=True)
    x = _core.queueing.usl(
        ns,
        v.scalar("sigma", sigma),
        v.scalar("kappa", kappa),
        v.scalar("lam", lam, positive=True),
    )
    return float(x[0]) if scalar_in else np.asarray(x)


def usl_fit(n, throughput, unit: str = ""):
    """Fit (sigma, kappa, lam) to measured throughput by least squares.

    Unweighted least squares on throughput, as the R ``usl`` package and
    Schwartz 2015 do: the shared fitter (:func:`mmcost.fit.fit` with
    :class:`mmcost.usl.UslModel`) with unit weights and the covariance scaled
    by rss / (m - 3). sigma and kappa are bounded to [0, 1], lam > 0. The fit
    runs in normalised units from the linearised USL's solution (see
    :meth:`mmcost.usl.UslModel.fit`): exact USL data give back their
    coefficients, and the result does not depend on the throughput's unit.
    A coefficient on a bound is reported in ``fit.at_bound``. Too few points
    or a near-singular Jacobian give a
    :class:`mmcost.fit.NotIdentifiableWarning`. ``unit``: the throughput's
    unit (e.g. ``"ops/s"``), printed with lam. At most 10^6 points.

    Returns the same :class:`mmcost.fit.FitResult` as every other fit:
    ``fit.params["sigma"]``, ``fit.stderr``, ``fit.correlation``, ``fit.chi2``
    (the residual sum of squares), ``fit.dof``; ``fit.model.throughput(n)``
    and ``fit.model.peak()`` (N_max, X_max) evaluate the fitted law.
    """
    from .usl import UslModel

    ns = v.float_array("n", n, positive=True)
    v.at_most("len(n)", ns.size, v.MAX_FIT_POINTS, "points of the fit")
    x = v.float_array("throughput", throughput, positive=True)
    v.same_length("n", ns, "throughput", x)
    if not isinstance(unit, str):
        raise TypeError(f"unit must be a string such as 'ops/s', got {type(unit).__name__}")
    if np.unique(ns).size < 3:
        raise ValueError("n must contain at least 3 distinct values to fit 3 USL coefficients")
    df = pd.DataFrame({"metric": "throughput", "value": x, "stddev": 1.0, "n": ns})
    return UslModel(n_column="n", unit=unit or "throughput's unit").fit(df, absolute_sigma=False)
