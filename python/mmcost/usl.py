"""The Universal Scalability Law as an mmcost model: the empirical baseline.

Gunther, "Guerrilla Capacity Planning", Springer 2007, ch. 4:
X(N) = lam N / (1 + sigma (N - 1) + kappa N (N - 1)). Users know it; mmcost
fits it next to the mechanism models to show where the two disagree.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
import pandas as pd

from . import metrics as vocabulary
from . import queueing, schema
from .model import Model, Parameter, Prior


@dataclass(frozen=True)
class UslModel(Model):
    """USL for one throughput ``metric`` against the configuration column
    ``n_column`` (``cpus``, ``processes`` or ``threads``). No priors: the USL
    coefficients are empirical and have no literature value to lean on.
    ``unit``: the metric's unit, printed with lam (default: the vocabulary's
    unit of ``metric``, see :mod:`mmcost.metrics`)."""

    metric: str = "throughput"
    n_column: str = "cpus"
    name: str = "usl"
    unit: str = ""

    PARAMETERS: ClassVar = (
        Parameter("sigma", 0.05, "1", 0.0, 1.0, doc="contention: the serialised fraction"),
        Parameter("kappa", 1e-4, "1", 0.0, 1.0, doc="coherency: pairwise crosstalk per unit"),
        # > 0: a band's draw clipped onto 0 would be no scaling curve at all
        # unit "": filled in from the model's metric by __post_init__
        Parameter("lam", 1.0, "", 1e-300, math.inf, doc="throughput of one unit, in the metric's unit"),
    )

    def __post_init__(self):
        super().__post_init__()
        lam = self.params["lam"]
        if not lam.unit:
            unit = self.unit or (vocabulary.METRICS[self.metric][0] if self.metric in vocabulary.METRICS
                                 else f"{self.metric}'s unit")
            object.__setattr__(self, "parameters", tuple(replace(p, unit=unit) if p.name == "lam" else p
                                                         for p in self.parameters))

    def supports(self, metric: str) -> bool:
        return metric.removesuffix("_change_pct") == self.metric

    def predict_metric(self, metric, rows: pd.DataFrame, p) -> np.ndarray:
        if self.n_column not in rows.columns:
            raise ValueError(f"usl: configs need a {self.n_column!r} column")
        n = pd.to_numeric(rows[self.n_column], errors="coerce").to_numpy(float)
        if not np.isfinite(n).all() or (n <= 0).any():
            raise ValueError(f"usl: {self.n_column!r} must be a positive number in every row")
        return queueing.usl(n, p["sigma"], p["kappa"], p["lam"])

    def throughput(self, n):
        """X(N) at this model's coefficients (a float for a scalar ``n``)."""
        v = self.values()
        return queueing.usl(n, v["sigma"], v["kappa"], v["lam"])

    def peak(self) -> tuple[float, float]:
        """(N_max, X_max): the peak at sqrt((1 - sigma) / kappa); with kappa = 0
        no peak (inf) and the asymptote lam / sigma."""
        v = self.values()
        if v["kappa"] > 0:
            n = float(np.sqrt((1 - v["sigma"]) / v["kappa"]))
            return n, self.throughput(n)
        return math.inf, (v["lam"] / v["sigma"] if v["sigma"] > 0 else math.inf)

    def fit(self, df: pd.DataFrame, **kwargs):
        """Fit, in normalised units, from an analytic start (unless ``x0`` is given).

        Scale invariance: the metric's rows are divided by the median of their
        magnitudes (and ``lam`` with them) before the least squares, and the
        result is scaled back, so the same data in ops/s and in kops/s give
        the same sigma and kappa and lam x 1000. (In raw units SciPy's
        finite-difference step, 1.5e-8 x max(1, abs(lam)), is a relative step of
        1.5e-3 for lam = 1e-5, and the same data x 1e-3 misfitted lam by 37%.)

        Start: the linearised USL, N / X = a + b (N - 1) + c N (N - 1) with
        a = 1 / lam, b = sigma / lam, c = kappa / lam, is linear in (a, b, c)
        (Gunther, "Guerrilla Capacity Planning", Springer 2007, sec. 5.5,
        fits this quadratic); weighted by X^2 / (N s_i) its residuals are the
        throughput residuals to first order. Solved with sigma free, 0 or 1
        and kappa free or 0, the best feasible solution starts the fit: exact
        USL data start (and end) on their coefficients.

        A free parameter the fit leaves within 1e-6 of a bound, where moving
        it onto the bound does not raise chi2, is put on the bound and
        reported in ``at_bound`` (SciPy flags one only within 1e-8).
        """
        from . import fit as fitting

        if not isinstance(df, pd.DataFrame):
            return super().fit(df, **kwargs)
        data = fitting._check_data(self, df)  # the usual errors, on the user's frame
        own = (data["metric"] == self.metric).to_numpy()
        mags = np.abs(data["value"].to_numpy(float)[own])
        mags = mags[mags > 0]
        scale = float(np.median(mags)) if mags.size else 1.0
        norm = data.copy()
        for col in ("value", "stddev"):
            if col in norm:
                norm.loc[own, col] = norm.loc[own, col].to_numpy(float) / scale
        model = self._lam_scaled(1 / scale)
        analytic = kwargs.get("x0") is None
        if not analytic:
            x0 = dict(kwargs["x0"])
            if "lam" in x0:
                x0["lam"] = float(x0["lam"]) / scale
            kwargs["x0"] = x0
        else:
            kwargs["x0"] = model._polish(norm[own], kwargs.get("default_rel_error"))
        start = kwargs["x0"] if analytic else {}
        result = fitting.fit(model, norm, **kwargs)
        result = self._settle_on_bounds(result, start)
        # back to the user's units (their rows as checked, not value / scale x scale): chi2 is
        # unchanged, values and sigmas were scaled together
        sigma = np.where(own, result.sigma * scale, result.sigma)
        fitted = result.model.values()
        lam = self.params["lam"]
        values = {k: fitted[k] for k in result.names if k != "lam"}
        if lam.free:
            values["lam"] = float(np.clip(fitted["lam"] * scale, lam.lower, lam.upper))
        cov = result.covariance.copy()
        if "lam" in cov.index:
            cov.loc["lam", :] *= scale
            cov.loc[:, "lam"] *= scale
        return replace(result, model=self.with_parameters(**values), data=data, sigma=sigma, covariance=cov)

    def _lam_scaled(self, factor: float) -> "UslModel":
        """This model with lam's value, bounds and prior multiplied by ``factor``."""
        p = self.params["lam"]
        tiny = np.nextafter(0.0, 1.0)

        def times(x):
            y = x * factor
            return tiny if x > 0 and y == 0 else y

        prior = None if p.prior is None else Prior(p.prior.value * factor, p.prior.width * factor, p.prior.source)
        return self.with_parameters(lam=dict(value=times(p.value), lower=times(p.lower), upper=times(p.upper),
                                             prior=prior))

    def _points(self, rows: pd.DataFrame, default_rel_error):
        """(N, X, s) of ``rows`` of this model's metric that a start can use."""
        if self.n_column not in rows:
            return np.empty(0), np.empty(0), np.empty(0)
        n = pd.to_numeric(rows[self.n_column], errors="coerce").to_numpy(float)
        x = rows["value"].to_numpy(float)
        sd = schema.published_sigma(rows)
        rel = self.default_rel_error if default_rel_error is None else default_rel_error
        sd = np.where(np.isfinite(sd) & (sd > 0), sd, rel * np.abs(x))
        with np.errstate(all="ignore"):  # N(N - 1) beyond a double: not a point a start can use
            ok = np.isfinite(n) & (n > 0) & np.isfinite(n * n * x * x) & (x > 0) & np.isfinite(sd) & (sd > 0)
        return n[ok], x[ok], sd[ok]

    def _polish(self, rows: pd.DataFrame, default_rel_error) -> dict[str, float]:
        """The start of :meth:`fit`: :meth:`_linear_start`, then least squares
        on the metric's rows with the USL's analytic Jacobian and tolerances
        near rounding (the shared fit's finite differences and ftol = 1e-8
        stop where the start's units put them)."""
        from scipy.optimize import least_squares

        start = self._linear_start(rows, default_rel_error)
        n, x, sd = self._points(rows, default_rel_error)
        names = list(start)
        if not names or n.size < len(names):
            return start
        p = self.params
        fixed = {k: p[k].value for k in ("sigma", "kappa", "lam") if k not in start}

        def parts(theta):
            v = {**fixed, **dict(zip(names, theta))}
            d = 1 + v["sigma"] * (n - 1) + v["kappa"] * n * (n - 1)
            return v, d

        def residuals(theta):
            v, d = parts(theta)
            return (v["lam"] * n / d - x) / sd

        def jacobian(theta):
            v, d = parts(theta)
            dx = {"lam": n / d, "sigma": -v["lam"] * n * (n - 1) / d**2, "kappa": -v["lam"] * n * n * (n - 1) / d**2}
            return np.column_stack([dx[k] / sd for k in names])

        lower = np.array([p[k].lower for k in names])
        upper = np.array([p[k].upper for k in names])
        theta0 = np.clip(np.array([start[k] for k in names]), lower, upper)
        with np.errstate(all="ignore"):
            if not np.isfinite(residuals(theta0)).all():
                return start
            res = least_squares(residuals, theta0, jac=jacobian, bounds=(lower, upper), x_scale="jac", method="trf",
                                ftol=1e-14, xtol=1e-14, gtol=1e-14, max_nfev=200 * len(names))
        cost0 = 0.5 * float(np.sum(residuals(theta0) ** 2))
        if not (np.isfinite(res.cost) and res.cost < cost0):
            return start
        return dict(zip(names, map(float, res.x)))

    def _linear_start(self, rows: pd.DataFrame, default_rel_error) -> dict[str, float]:
        """The linearised start of :meth:`fit` (see there) for the free
        parameters, from ``rows`` of this model's metric; {} where it cannot
        be formed."""
        n, x, sd = self._points(rows, default_rel_error)
        if n.size == 0:
            return {}
        with np.errstate(all="ignore"):
            return self._active_set_start(n, x, sd)

    def _active_set_start(self, n, x, sd) -> dict[str, float]:
        p = self.params
        y = n / x
        w = x * x / (n * sd)
        cols = {"a": np.ones_like(n), "b": n - 1, "c": n * (n - 1)}
        sig_modes = [None, 0.0, 1.0] if p["sigma"].free else [p["sigma"].value]
        kap_modes = [None, 0.0] if p["kappa"].free else [p["kappa"].value]
        a_fixed = None if p["lam"].free else 1 / p["lam"].value
        best, best_sse = {}, math.inf
        for sig in sig_modes:
            for kap in kap_modes:
                # y = a (1 + s (N-1) + k N(N-1)) over the fixed ones + b (N-1) + c N(N-1) over the free
                base = cols["a"] + (0 if sig is None else sig * cols["b"]) + (0 if kap is None else kap * cols["c"])
                names, design = [], []
                rhs = y.copy()
                if a_fixed is None:
                    names.append("a"), design.append(base)
                else:
                    rhs = rhs - a_fixed * base
                if sig is None:
                    names.append("b"), design.append(cols["b"])
                if kap is None:
                    names.append("c"), design.append(cols["c"])
                coef = {}
                if names:
                    m = np.column_stack(design) * w[:, None]
                    norms = np.linalg.norm(m, axis=0)
                    norms[norms == 0] = 1.0
                    if not (np.isfinite(m).all() and np.isfinite(rhs * w).all()):
                        continue
                    try:
                        sol = np.linalg.lstsq(m / norms, rhs * w, rcond=None)[0] / norms
                    except np.linalg.LinAlgError:
                        continue
                    coef = dict(zip(names, sol))
                a = coef.get("a", a_fixed)
                if not (np.isfinite(a) and a > 0):
                    continue
                sigma = coef["b"] / a if sig is None else sig
                kappa = coef["c"] / a if kap is None else kap
                if not (np.isfinite(sigma) and np.isfinite(kappa)):
                    continue
                if not (p["sigma"].lower <= sigma <= p["sigma"].upper and p["kappa"].lower <= kappa <= p["kappa"].upper):
                    continue
                lam = 1 / a
                if not (p["lam"].lower <= lam <= p["lam"].upper):
                    continue
                with np.errstate(all="ignore"):
                    pred = lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))
                sse = float(np.sum(((pred - x) / sd) ** 2))
                if np.isfinite(sse) and sse < best_sse:
                    best, best_sse = {"sigma": sigma, "kappa": kappa, "lam": lam}, sse
        return {k: float(v) for k, v in best.items() if p[k].free}

    #: how close to a bound a fitted value must be to be tried on it (the bounds of sigma and kappa are 1 apart)
    BOUND_TOL: ClassVar[float] = 1e-6

    def _settle_on_bounds(self, result, start: dict):
        """Put a free parameter that ended within :attr:`BOUND_TOL` of a bound
        on it, and report it in ``at_bound``, where that does not raise chi2
        (beyond rounding): the optimiser, an interior-point method, stops
        short of a bound the data push against (and moves a start on a bound
        1e-10 inside). The analytic ``start`` is kept where it fits better
        than the optimiser's end: exact data on a bound (sigma = 0) start on
        their coefficients, and SciPy ended 1e-10 inside with residuals of 5e-6."""
        from .fit import NotIdentifiableWarning

        plan = result.model.plan(result.data)
        measured = result.data["value"].to_numpy(float)

        def chi2(values):
            return float(np.sum(((plan(values) - measured) / result.sigma) ** 2))

        # chi2 differences below this are rounding (relative 1e-12 of each value)
        rounding = 1e-24 * float(np.sum((measured / result.sigma) ** 2))

        values = result.model.values()
        params = result.model.params
        at_bound, warns = dict(result.at_bound), list(result.warnings)
        base = chi2(values)
        moved = False
        if start and set(start) == set(result.names):
            c = chi2({**values, **start})
            if c < base:
                values, base, moved = {**values, **start}, c, True
        for name in result.names:
            q = params[name]
            if name in at_bound:  # flagged by SciPy within 1e-8: on the bound if no worse there
                bound = q.lower if at_bound[name] == "lower" else q.upper
                if values[name] != bound:
                    trial = {**values, name: bound}
                    c = chi2(trial)
                    if c <= base * (1 + 1e-9) + rounding:
                        values, base, moved = trial, c, True
                        old = f"{name} = {result.model.values()[name]:.4g} is at its"
                        warns = [w.replace(old, f"{name} = {bound:.4g} is at its") for w in warns]
                continue
            for side, bound in (("lower", q.lower), ("upper", q.upper)):
                if not math.isfinite(bound) or abs(values[name] - bound) > self.BOUND_TOL * max(1.0, abs(bound)):
                    continue
                trial = {**values, name: bound}
                c = chi2(trial)
                if c <= base * (1 + 1e-9) + rounding:
                    values, base, moved = trial, c, True
                    at_bound[name] = side
                    w = (f"{name} = {bound:.4g} is at its {side} bound: its standard error is not a two-sided error; "
                         f"fit.profile_limit({name!r}) gives a one-sided limit")
                    warns.append(w)
                    warnings.warn(w, NotIdentifiableWarning, stacklevel=4)
                    break
        if not moved:
            return result
        return replace(result, model=result.model.with_parameters(**{k: values[k] for k in result.names}), chi2=base,
                       at_bound=at_bound, warnings=tuple(warns))
