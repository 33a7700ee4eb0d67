"""Weighted least-squares fitting shared by every model, and its result.

``fit(model, df)`` minimises sum_i ((pred_i - meas_i) / sigma_i)^2 plus a
penalty ((theta_j - prior_j) / width_j)^2 per prior, with
``scipy.optimize.least_squares`` inside the parameters' physical bounds.
sigma_i is the published stddev, or ``stddev_pct`` of the value, or the
model's stated ``default_rel_error`` where nothing is published (the
residuals' ``sigma_source`` column says which).
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from . import schema
from .model import Model, UnknownColumnWarning, warn_unknown_columns


class NotIdentifiableWarning(UserWarning):
    """The data cannot pin down some parameter (combination)."""


class PoorFitWarning(UserWarning):
    """chi2/dof is far above 1: the model misses the data by more than their
    sigma says (a wrong mechanism, a wrong sigma, or a wrong number)."""


class InfeasibleDrawsWarning(UserWarning):
    """A band dropped more than :data:`MAX_DROPPED_SHARE` of its parameter
    draws for some row: configurations those draws make impossible."""


#: absolute correlation above which a parameter pair is reported as not identifiable
CORRELATION_LIMIT = 0.99
#: absolute correlation above which the summary notes a pair (no warning)
CORRELATION_NOTE = 0.9
#: the largest magnitude of a measured value or stddev a fit takes (and the inverse, the smallest
#: nonzero one): squared residuals over sigma stay inside a double
MAX_MAGNITUDE = 1e50
#: the most parameter draws a band or a bootstrap takes, and draws x rows a band evaluates at once
MAX_SAMPLES = 10**6
MAX_BAND_CELLS = 10**8
#: a direction of the parameters the rows alone do not see: its singular value of the rows' Jacobian
#: (columns scaled to unit length) below this share of the largest (a finite-difference Jacobian leaves
#: an exact tie at ~1e-9 and less; the separable pairs of the bundled studies sit above 1e-2)
ROWS_NULL_LIMIT = 1e-6
#: condition number of the weighted Jacobian above which the fit warns
CONDITION_LIMIT = 1e8
#: a fit warns (PoorFitWarning) when chi2/dof > CHI2_DOF_LIMIT and a correct model with correct sigma
#: would give a chi2 this large with probability below CHI2_P_LIMIT. chi2/dof > 4 alone has
#: probability 4.6% at 1 dof, 1.8% at 2, 0.74% at 3 (chi2 > 12), 2e-5 at 10: the p limit decides at
#: 1 and 2 dof (chi2/dof above 6.6 and 4.6), the ratio from 3 on. The ratio keeps a fit of many rows
#: from warning for a small systematic miss (chi2/dof = 1.5 at 200 dof has p = 1e-6): 4 is where
#: sqrt(chi2/dof), the factor scaled errors are widened by, reaches 2.
CHI2_DOF_LIMIT = 4.0
CHI2_P_LIMIT = 0.01
#: share of a row's band draws that may be infeasible and dropped without a warning
MAX_DROPPED_SHARE = 0.05


def _sigmas(df: pd.DataFrame, default_rel: float) -> tuple[np.ndarray, np.ndarray]:
    value = df["value"].to_numpy(float)
    sigma = schema.published_sigma(df)
    sd = df["stddev"].to_numpy(float) if "stddev" in df else np.full(len(df), np.nan)
    from_sd = np.isfinite(sd) & (sd > 0)
    source = np.where(from_sd, "stddev", np.where(np.isfinite(sigma), "stddev_pct", "")).astype(object)
    rest = ~np.isfinite(sigma)
    # a published 0 (e.g. a share that fell to 0.00) still needs a scale: use the
    # default relative error of the other rows' magnitude for the same metric
    scale = np.abs(value)
    if "metric" in df:
        typical = df.assign(_a=np.abs(value)).groupby("metric")["_a"].transform(lambda s: s[s > 0].median() if (s > 0).any() else 1.0)
        scale = np.where(scale > 0, scale, typical.to_numpy(float))
    sigma[rest] = default_rel * scale[rest]
    source[rest] = f"default {default_rel:.0%}"
    return sigma, source


def _check_data(model: Model, df) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"fit data must be a pandas DataFrame, got {type(df).__name__}")
    if df.empty:
        raise ValueError("fit data is empty")
    for col in ("metric", "value"):
        if col not in df.columns:
            raise ValueError(f"fit data has no {col!r} column")
    df = df.reset_index(drop=True)
    bad = [i for i, m in enumerate(df["metric"]) if not isinstance(m, str) or not m]
    if bad:
        raise ValueError(f"fit data: 'metric' must name a metric in every row; row {bad[0]} has "
                         f"{df['metric'].iloc[bad[0]]!r}")
    value = pd.to_numeric(df["value"], errors="coerce").to_numpy(float)
    if not np.isfinite(value).all():
        i = int(np.flatnonzero(~np.isfinite(value))[0])
        raise ValueError(f"fit data: 'value' is missing or not finite in row {i} ({df['metric'].iloc[i]})")
    out_of_range = (np.abs(value) > MAX_MAGNITUDE) | ((value != 0) & (np.abs(value) < 1 / MAX_MAGNITUDE))
    if out_of_range.any():
        i = int(np.flatnonzero(out_of_range)[0])
        raise ValueError(f"fit data: 'value' {value[i]:g} in row {i} is outside [{1 / MAX_MAGNITUDE:g}, "
                         f"{MAX_MAGNITUDE:g}] in magnitude (change the unit)")
    unknown = sorted({m for m in df["metric"] if not model.supports(m)})
    if unknown:
        raise ValueError(f"{model.name} does not predict metric(s) {unknown}; it predicts {list(model.METRICS)}")
    df = df.assign(value=value)
    for col in ("stddev", "stddev_pct"):  # a published uncertainty: a number >= 0, or blank
        if col in df:
            sd = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
            with np.errstate(invalid="ignore"):
                wrong = ((df[col].notna().to_numpy() & ~np.isfinite(sd)) | (sd < 0)
                         | (sd > MAX_MAGNITUDE) | ((sd > 0) & (sd < 1 / MAX_MAGNITUDE)))
            if wrong.any():
                i = int(np.flatnonzero(wrong)[0])
                raise ValueError(f"fit data: {col!r} must be 0, blank, or a number in [{1 / MAX_MAGNITUDE:g}, "
                                 f"{MAX_MAGNITUDE:g}]; row {i} has {df[col].iloc[i]!r}")
            df[col] = sd
    return df


def fit(model: Model, df: pd.DataFrame, *, absolute_sigma: bool | None = None, default_rel_error: float | None = None,
        x0: dict[str, float] | None = None) -> FitResult:
    """Fit ``model``'s free parameters to the rows of ``df``.

    absolute_sigma: True treats sigma as known (covariance = (J^T J)^-1); False
    rescales the covariance by chi2/dof. Default: True when every row has a
    published uncertainty, else False.

    A chi2/dof above :data:`CHI2_DOF_LIMIT` that a correct model would give
    with probability below :data:`CHI2_P_LIMIT` warns (:class:`PoorFitWarning`,
    also in ``warnings``), unless ``absolute_sigma=False`` was passed: then
    sigma are only relative weights and chi2/dof estimates their scale.
    """
    df = _check_data(model, df)
    warn_unknown_columns(model, df, stacklevel=3)
    free = [p for p in model.parameters if p.free]
    if not free:
        raise ValueError(f"{model.name}: no free parameter to fit")
    rel = model.default_rel_error if default_rel_error is None else default_rel_error
    if not (0 < rel < 10):
        raise ValueError(f"default_rel_error must be in (0, 10), got {rel}")
    sigma, source = _sigmas(df, rel)
    measured = df["value"].to_numpy(float)
    names = [p.name for p in free]
    start = {**model.values(), **(x0 or {})}
    lower = np.array([p.lower for p in free])
    upper = np.array([p.upper for p in free])
    theta0 = np.array([start[n] for n in names], dtype=float)
    if not np.isfinite(theta0).all():
        raise ValueError(f"x0: start values must be finite, got {dict(zip(names, theta0))}")
    theta0 = np.clip(theta0, lower, upper)  # a start outside the bounds begins on them
    priors = [(k, p.prior) for k, p in enumerate(free) if p.prior is not None]

    plan = model.plan(df)

    def weighted(pred, theta):
        r = (pred - measured) / sigma
        if priors:
            r = np.concatenate([r, [(theta[k] - pr.value) / pr.width for k, pr in priors]])
        return r

    def residuals(theta):
        return weighted(plan(dict(zip(names, theta))), theta)

    def jacobian_columns(_fun, thetas):
        """least_squares' ``workers`` map: the residuals at the finite-difference
        points of one Jacobian, solved as one batch (Plan.many)."""
        thetas = list(thetas)
        return [weighted(pred, t) for pred, t in zip(plan.many([dict(zip(names, t)) for t in thetas]), thetas)]

    # 10x SciPy's default budget: ill-conditioned fits (a USL seen over a narrow range of N)
    # converge, slowly, well past 100 evaluations per parameter
    res = least_squares(residuals, theta0, bounds=(lower, upper), x_scale="jac", method="trf",
                        max_nfev=1000 * len(names), **_batch_jacobian(jacobian_columns))
    if res.status == 0:  # out of evaluations: crawling along a direction the data leave flat
        w = (f"{model.name}: the fit stopped after {res.nfev} evaluations without converging; some parameter "
             "combination is not identified by these data (its values are one point of a flat valley)")
        warnings.warn(w, NotIdentifiableWarning, stacklevel=3)
    elif not res.success:
        raise RuntimeError(f"{model.name}: the fit did not converge: {res.message}")
    best = dict(zip(names, map(float, res.x)))
    pred = plan(best)
    chi2 = float(np.sum(((pred - measured) / sigma) ** 2))
    dof = len(df) + len(priors) - len(names)
    # absolute_sigma=False said by the caller: sigma are relative weights of unknown scale (usl_fit's unit
    # weights), and chi2/dof is that scale's estimate, not a test of the model
    tested = absolute_sigma is not False
    if absolute_sigma is None:  # known sigma only when every row published one
        absolute_sigma = not any(str(s).startswith("default") for s in source)
    cov, warns = _covariance(res.jac, names, chi2, dof, absolute_sigma)
    warns += _data_collinear(res.jac[:len(df)], names, warns)
    if tested and dof > 0 and chi2 / dof > CHI2_DOF_LIMIT and _chi2_sf(chi2, dof) < CHI2_P_LIMIT:
        warns.append(_poor_fit(model.name, chi2, dof, absolute_sigma, pred, measured, sigma, df))
    if res.status == 0:
        warns.append(w)
    # least_squares' active set: a parameter pinned at a bound has no two-sided error
    at_bound = {n: ("lower" if m < 0 else "upper") for n, m in zip(names, res.active_mask) if m != 0}
    for n, side in at_bound.items():
        w = (f"{n} = {best[n]:.4g} is at its {side} bound: its standard error is not a two-sided error; "
             f"fit.profile_limit({n!r}) gives a one-sided limit")
        warns.append(w)
        warnings.warn(w, NotIdentifiableWarning, stacklevel=3)
    fitted = model.with_parameters(**best)
    return FitResult(model=fitted, data=df, sigma=sigma, sigma_source=source, chi2=chi2, dof=dof,
                     covariance=pd.DataFrame(cov, index=names, columns=names), absolute_sigma=absolute_sigma,
                     warnings=tuple(warns), nfev=int(res.nfev), at_bound=at_bound)


def _chi2_sf(chi2: float, dof: int) -> float:
    """P(X > chi2) for X ~ chi2 with ``dof`` degrees of freedom."""
    from scipy.stats import chi2 as chi2_dist

    return float(chi2_dist.sf(chi2, dof))


def _poor_fit(name, chi2, dof, absolute_sigma, pred, measured, sigma, df) -> str:
    """Warn that chi2/dof is above :data:`CHI2_DOF_LIMIT`, naming the worst
    row and what the fit did to the errors and bands; return the text."""
    pull = (measured - pred) / sigma
    i = int(np.argmax(np.abs(pull)))
    if absolute_sigma:
        bands = ("sigma is taken as published (absolute_sigma), so the errors and bands are NOT widened: they "
                 f"are too narrow by about sqrt(chi2/dof) = {math.sqrt(chi2 / dof):.3g}x; "
                 "fit(..., absolute_sigma=False) scales them")
    else:
        bands = (f"the covariance is scaled by chi2/dof, so the errors and bands are widened by sqrt(chi2/dof) = "
                 f"{math.sqrt(chi2 / dof):.3g}x, which hides a misfit rather than explaining it")
    w = (f"{name}: chi2/dof = {chi2:.4g}/{dof} = {chi2 / dof:.3g} (p = {_chi2_sf(chi2, dof):.2g} for a correct "
         f"model and sigma): the model misses the data; worst row {i} ({df['metric'].iloc[i]}: measured "
         f"{measured[i]:.4g}, predicted {pred[i]:.4g}, pull {pull[i]:+.3g}); {bands}")
    warnings.warn(w, PoorFitWarning, stacklevel=4)
    return w


@functools.cache
def _takes_workers() -> bool:
    return "workers" in inspect.signature(least_squares).parameters


def _batch_jacobian(columns) -> dict:
    """least_squares' ``workers`` (SciPy >= 1.16) set to ``columns``, so a
    Jacobian's finite differences are evaluated together; the same points and
    values as SciPy's own loop, so the fit is the same. Older SciPy loops."""
    return {"workers": columns} if _takes_workers() else {}


def band_level(level, interval, where: str) -> float:
    """The probability a band covers: ``level`` (the one spelling of the public
    API: ``value, lo, hi`` at ``level``), or the deprecated keyword
    ``interval`` with a DeprecationWarning."""
    if interval is not None:
        warnings.warn(f"{where}: interval= is deprecated, use level= (the band's lo and hi at that level)",
                      DeprecationWarning, stacklevel=3)
        if level is not None and level != interval:
            raise TypeError(f"{where}: give level or interval (deprecated), not both")
        level = interval
    level = 0.9 if level is None else level
    if not isinstance(level, (float, int)) or isinstance(level, bool) or not (0 < level < 1):
        raise ValueError(f"level must be a number in (0, 1), got {level!r}")
    return float(level)


def _rng(seed) -> np.random.Generator:
    """NumPy's generator for ``seed`` (None, an int >= 0, a sequence of them,
    a SeedSequence or a Generator), or an error that names the seed."""
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"seed must be None, an integer >= 0 or a sequence of them, got {seed!r} ({exc})") from None


def _psd_factor(cov: np.ndarray) -> np.ndarray:
    """L with L L^T = cov, after symmetrising and dropping the negative
    eigenvalues that rounding leaves in a near-singular covariance."""
    w, v = np.linalg.eigh((cov + cov.T) / 2)
    return v * np.sqrt(np.clip(w, 0.0, None))


def _bounded_gaussian_draws(mean: np.ndarray, cov: np.ndarray, side: list, n: int, rng) -> np.ndarray:
    """``n`` draws of the fit's Gaussian restricted to the feasible side of the
    parameters that sit on a bound (``side[k]`` is "lower", "upper" or None).

    Clipping a joint draw would break the correlations: a parameter pushed
    back onto its bound keeps the compensating value its partners were drawn
    with. Instead the bound parameters are drawn first, from their marginal
    folded onto the feasible side (a half-normal: exact for one, an
    approximation for several correlated ones), and the others from the
    Gaussian conditional on them (the Schur complement)."""
    b = np.array([s is not None for s in side])
    z = rng.standard_normal((n, len(mean)))
    if not b.any():
        return mean + z @ _psd_factor(cov).T
    f = ~b
    draws = np.empty((n, len(mean)))
    dev_b = z[:, b] @ _psd_factor(cov[np.ix_(b, b)]).T
    sign = np.array([1.0 if s == "lower" else -1.0 for s in side if s is not None])
    dev_b = sign * np.abs(dev_b)
    draws[:, b] = mean[b] + dev_b
    if f.any():
        gain = cov[np.ix_(f, b)] @ np.linalg.pinv(cov[np.ix_(b, b)])
        cond = cov[np.ix_(f, f)] - gain @ cov[np.ix_(b, f)]
        draws[:, f] = mean[f] + dev_b @ gain.T + z[:, f] @ _psd_factor(cond).T
    return draws


def _penalised_chi2(result: FitResult, sigma: np.ndarray) -> float:
    """sum of squared residuals over ``sigma`` plus each free prior's penalty."""
    pred = result.model.plan(result.data)()
    chi2 = float(np.sum(((pred - result.data["value"].to_numpy(float)) / sigma) ** 2))
    for q in result.model.parameters:
        if q.free and q.prior is not None:
            chi2 += ((q.value - q.prior.value) / q.prior.width) ** 2
    return chi2


def _covariance(jac, names, chi2, dof, absolute_sigma):
    warns = []
    j = np.asarray(jac, dtype=float)
    # Scale the columns first: parameters in ns and in counts differ by many
    # orders of magnitude, and (J^T J)^-1 of the raw Jacobian would lose them.
    col = np.linalg.norm(j, axis=0)
    col[col == 0] = 1.0
    _, s, vt = np.linalg.svd(j / col, full_matrices=False)
    cond = s[0] / s[-1] if s[-1] > 0 else math.inf
    if not np.isfinite(cond) or cond > CONDITION_LIMIT:
        warns.append(f"near-singular Jacobian (condition number {cond:.3g}): some parameter combination is not identifiable")
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        inv_s2 = np.where(s > s[0] * 1e-12, 1.0 / s**2, np.inf)
        cov = (vt.T * inv_s2) @ vt / np.outer(col, col)
    cov[~np.isfinite(cov)] = np.nan
    if not absolute_sigma:
        cov = cov * (chi2 / dof if dof > 0 else np.nan)
    err = np.sqrt(np.clip(np.diag(cov), 0, None))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.outer(err, err)
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            if np.isfinite(corr[a, b]) and abs(corr[a, b]) > CORRELATION_LIMIT:
                warns.append(f"{names[a]} and {names[b]} are correlated ({corr[a, b]:+.3f}): not separately identifiable")
    if dof <= 0:
        warns.append(f"{dof} degrees of freedom: parameters not identifiable beyond reproducing the inputs")
    for w in warns:
        warnings.warn(w, NotIdentifiableWarning, stacklevel=4)
    return cov, warns


def _data_collinear(jac_rows, names, said) -> list[str]:
    """Free parameters the rows alone cannot tell apart, from the rows'
    weighted Jacobian with the prior rows left out (columns scaled to unit
    length). A direction the rows do not see (a singular value below
    :data:`ROWS_NULL_LIMIT` of the largest) names the parameters it moves
    (a component of 0.1 or more): the rows see only a combination of them,
    and whatever splits it comes from the priors. Where the rows see every
    direction, a pair whose correlation from the rows alone is beyond
    :data:`CORRELATION_LIMIT` is named (without priors this is the posterior
    check of :func:`_covariance`, which speaks for it). The posterior
    correlation misses both when the priors are tight next to the rows: a
    per-folio and a per-page cost fitted on one folio size showed -0.65
    there, and the fit returned the per-page prior. Warns
    (:class:`NotIdentifiableWarning`) once per finding not already reported;
    returns the texts."""
    j = np.asarray(jac_rows, dtype=float)
    if j.ndim != 2 or j.shape[0] < 2 or j.shape[1] < 2 or not np.isfinite(j).all():
        return []  # (one row: the degrees-of-freedom check speaks for it)
    col = np.linalg.norm(j, axis=0)
    col[col == 0] = 1.0
    _, sv, vt = np.linalg.svd(j / col, full_matrices=False)
    if not sv[0] > 0:
        return []
    groups = []
    null = sv < sv[0] * ROWS_NULL_LIMIT
    if len(sv) < len(names) or null.any():  # (fewer rows than parameters: the missing directions are unseen)
        basis = vt[null] if len(sv) == len(names) else _null_basis(vt)
        groups = [[names[i] for i in np.flatnonzero(np.abs(v) >= 0.1)] for v in basis]
    else:
        cov = (vt.T / sv**2) @ vt  # (scaled units: a correlation does not see them)
        err = np.sqrt(np.diag(cov))
        corr = cov / np.outer(err, err)
        groups = [[names[a], names[b]] for a in range(len(names)) for b in range(a + 1, len(names))
                  if abs(corr[a, b]) > CORRELATION_LIMIT]
    warns = []
    for g in groups:
        if len(g) < 2 or any(w.startswith(f"{g[0]} and {g[1]}") for w in said if len(g) == 2):
            continue
        who = f"{', '.join(g[:-1])} and {g[-1]}"
        w = (f"{who} move the rows alike: these rows cannot tell them apart (they see one combination), "
             "only their priors split them; add rows where they differ or fix one")
        if w not in warns:
            warns.append(w)
    for w in warns:
        warnings.warn(w, NotIdentifiableWarning, stacklevel=4)
    return warns


def _null_basis(vt) -> np.ndarray:
    """Rows spanning what ``vt``'s rows (orthonormal) leave out."""
    n = vt.shape[1]
    q, _ = np.linalg.qr(np.vstack([vt, np.eye(n)]).T)
    return q[:, len(vt):n].T


@dataclass(frozen=True)
class FitResult:
    """The outcome of :func:`fit`.

    Attributes: ``model`` (a copy carrying the best-fit values), ``params``,
    ``stderr``, ``covariance`` and ``correlation`` (DataFrames over the free
    parameters), ``chi2``, ``dof``, ``chi2_dof``, ``residuals`` (the data's
    columns plus measured, predicted, residual = measured - predicted, sigma,
    sigma_source, pull = residual / sigma), ``warnings`` (identifiability).
    Methods: :meth:`predict`, :meth:`loo`, :meth:`bootstrap`.
    """

    model: Model
    data: pd.DataFrame = field(repr=False)
    sigma: np.ndarray = field(repr=False)
    sigma_source: np.ndarray = field(repr=False)
    chi2: float
    dof: int
    covariance: pd.DataFrame = field(repr=False)
    absolute_sigma: bool
    warnings: tuple[str, ...] = ()
    nfev: int = 0
    bootstrap_samples: pd.DataFrame | None = field(default=None, repr=False)
    #: free parameters the optimiser left on a bound: name -> "lower" / "upper"
    at_bound: dict = field(default_factory=dict)

    @classmethod
    def of_priors(cls, model: Model) -> FitResult:
        """A result with nothing fitted: ``model`` as it is, so that
        :meth:`predict` (with ``fixed_priors=True``) gives the band of its
        priors alone (what a machine profile's measured costs and the
        literature's constants say, before any run of the machine is fitted)."""
        empty = pd.DataFrame(index=pd.Index([], dtype=object), columns=pd.Index([], dtype=object), dtype=float)
        return cls(model=model, data=pd.DataFrame(), sigma=np.array([]), sigma_source=np.array([]), chi2=float("nan"),
                   dof=0, covariance=empty, absolute_sigma=True, warnings=("nothing fitted: the priors alone",))

    # --- numbers -------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return list(self.covariance.index)

    @property
    def params(self) -> dict[str, float]:
        v = self.model.values()
        return {n: v[n] for n in self.names}

    @property
    def stderr(self) -> dict[str, float]:
        """One standard deviation per free parameter; NaN for one on a bound
        (see :attr:`at_bound` and :meth:`profile_limit`)."""
        return {n: math.nan if n in self.at_bound else float(np.sqrt(max(self.covariance.loc[n, n], 0.0)))
                for n in self.names}

    def profile_chi2(self, name: str, value: float) -> float:
        """chi2 (with the prior penalties) with ``name`` fixed at ``value`` and
        every other free parameter refitted, minus this fit's; divided by
        chi2/dof when sigma is scaled."""
        if name not in self.names:
            raise ValueError(f"profile: {name!r} is not a free parameter of this fit; free: {self.names}")
        model = self.model.with_parameters(**{name: {"free": False, "value": float(value)}})
        if model.free_names:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NotIdentifiableWarning)
                warnings.simplefilter("ignore", UnknownColumnWarning)  # the fit said it once
                warnings.simplefilter("ignore", PoorFitWarning)  # a refit of this fit's data or its noise
                chi2 = _penalised_chi2(fit(model, self.data, absolute_sigma=True,
                                           default_rel_error=self.model.default_rel_error), self.sigma)
        else:
            chi2 = _penalised_chi2(replace(self, model=model), self.sigma)
        delta = chi2 - _penalised_chi2(self, self.sigma)
        return delta if self.absolute_sigma else delta / max(self.chi2_dof, 1e-300)

    def profile_limit(self, name: str, level: float = 0.95) -> float:
        """One-sided profile-likelihood limit of a parameter on a bound: the
        value away from the bound where the profile chi2 rises by
        z_level^2 (2.71 at 95%; Wilks' theorem, one degree of freedom, halved
        by the bound as in Feldman & Cousins, PRD 57, 3873, 1998, sec. II).
        For a parameter off its bounds, the same construction on the side
        away from the nearer bound."""
        from scipy.optimize import brentq
        from scipy.special import ndtri

        if not (0.5 < level < 1):
            raise ValueError(f"level must be in (0.5, 1), got {level}")
        if name not in self.names:
            raise ValueError(f"profile_limit: {name!r} is not a free parameter of this fit; free: {self.names}")
        p = self.model.params[name]
        target = float(ndtri(level)) ** 2
        side = self.at_bound.get(name) or ("lower" if p.value - p.lower <= p.upper - p.value else "upper")
        far = p.upper if side == "lower" else p.lower
        sd = float(np.sqrt(max(self.covariance.loc[name, name], 0.0)))
        step = sd if sd > 0 and math.isfinite(sd) else max(abs(p.value), 1e-12)
        direction = 1.0 if side == "lower" else -1.0
        lo = p.value
        for _ in range(60):  # bracket: double the step until the profile rises past the target
            hi = p.value + direction * step
            if (direction > 0 and hi >= far) or (direction < 0 and hi <= far):
                hi = far
            rise = self.profile_chi2(name, hi)  # one refit per trial value
            if rise >= target or hi == far:
                break
            lo, step = hi, 2 * step
        if rise < target:
            return far  # the data do not limit it inside its physical range
        return float(brentq(lambda t: self.profile_chi2(name, t) - target, min(lo, hi), max(lo, hi),
                            xtol=1e-6 * max(abs(hi), 1e-300), rtol=1e-6))

    @property
    def correlation(self) -> pd.DataFrame:
        err = np.sqrt(np.clip(np.diag(self.covariance.to_numpy()), 0, None))
        with np.errstate(invalid="ignore", divide="ignore"):
            c = self.covariance.to_numpy() / np.outer(err, err)
        return pd.DataFrame(c, index=self.names, columns=self.names)

    @property
    def chi2_dof(self) -> float:
        return self.chi2 / self.dof if self.dof > 0 else math.nan

    @property
    def residuals(self) -> pd.DataFrame:
        pred = self.model.plan(self.data)()
        out = self.data.copy()
        out["measured"] = self.data["value"].to_numpy(float)
        out["predicted"] = pred
        out["residual"] = out["measured"] - pred
        out["sigma"] = self.sigma
        out["sigma_source"] = self.sigma_source
        out["pull"] = out["residual"] / self.sigma
        return out

    # --- prediction ---------------------------------------------------------------------
    def sample_params(self, n: int, seed=0, method: str = "covariance", fixed_priors: bool = False) -> pd.DataFrame:
        """``n`` parameter sets drawn from the covariance (clipped to the bounds)
        or resampled from a :meth:`bootstrap` run. ``fixed_priors``: also draw
        every fixed parameter that has a prior from that prior (clipped to its
        bounds), so a band carries the uncertainty of the published constants
        the fit did not touch."""
        rng = _rng(seed)
        if method == "bootstrap":
            if self.bootstrap_samples is None:
                raise ValueError("method='bootstrap' needs fit.bootstrap() first")
            idx = rng.integers(0, len(self.bootstrap_samples), n)
            out = self.bootstrap_samples.iloc[idx].reset_index(drop=True)
        elif method == "covariance":
            p = self.model.params
            lo = np.array([p[k].lower for k in self.names])
            hi = np.array([p[k].upper for k in self.names])
            draws = _bounded_gaussian_draws(np.array([self.params[k] for k in self.names]),
                                            np.nan_to_num(self.covariance.to_numpy()),
                                            [self.at_bound.get(k) for k in self.names], n, rng)
            out = pd.DataFrame(np.clip(draws, lo, hi), columns=self.names)
        else:
            raise ValueError(f"method must be 'covariance' or 'bootstrap', got {method!r}")
        if fixed_priors:
            for q in self.model.parameters:
                if not q.free and q.prior is not None:
                    out[q.name] = np.clip(rng.normal(q.prior.value, q.prior.width, n), q.lower, q.upper)
        return out

    def predict(self, configs: pd.DataFrame, level: float | None = None, *, n_samples: int = 500, seed=0,
                method: str = "covariance", fixed_priors: bool = False, interval: float | None = None,
                structural: bool | None = None) -> pd.DataFrame:
        """Predictions with an uncertainty band: the configuration columns plus
        ``best`` (at the best fit), ``mean``, ``lo`` and ``hi`` (the central
        ``level`` (default 0.9) of the predictions over parameter draws, see
        :meth:`sample_params`; a simulated model's Monte Carlo error is added
        to every draw). A parameter on a bound (:attr:`at_bound`) is drawn on
        its feasible side only, so its band is one-sided about ``best`` and
        need not contain it (the best fit is then the band's edge case).

        A draw a row cannot use (its configuration refused at those values: a
        zswap pool above the memcg limit at a drawn compression ratio; or a
        prediction that is not finite: a change whose baseline is 0) is
        dropped for that row: ``dropped_draws`` counts them, ``mean``, ``lo``
        and ``hi`` are over the rest (the band is conditional on a feasible
        configuration), ``attrs["infeasible"]`` keeps the first errors, and
        more than :data:`MAX_DROPPED_SHARE` dropped in a row warns
        (:class:`InfeasibleDrawsWarning`). ``best`` itself must be feasible."""
        if not isinstance(configs, pd.DataFrame):
            raise TypeError(f"configs must be a pandas DataFrame of configurations, got {type(configs).__name__}")
        level = band_level(level, interval, "predict")
        if not isinstance(n_samples, int) or isinstance(n_samples, bool) or not 2 <= n_samples <= MAX_SAMPLES:
            raise ValueError(f"n_samples must be an integer in [2, {MAX_SAMPLES:,}], got {n_samples!r}")
        if n_samples * max(len(configs), 1) > MAX_BAND_CELLS:
            raise ValueError(f"n_samples x rows = {n_samples:,} x {len(configs):,} is more than {MAX_BAND_CELLS:,} "
                             "predictions; predict fewer rows at a time (mmcost.sweep does)")
        rows = configs.reset_index(drop=True)
        plan = self.model.plan(rows)
        warn_unknown_columns(self.model, rows)
        best = plan()
        draws = self.sample_params(n_samples, seed, method, fixed_priors)
        rng = _rng([1, *np.atleast_1d(seed)])  # a stream of its own, apart from the draws
        thetas = draws.to_dict("records")
        errors: list = []
        preds = plan.many(thetas, errors=errors)  # every draw's solves in one batch where the solver takes one
        for i, theta in enumerate(thetas):
            mc = self.model.mc_stderr(rows, {**self.model.values(), **theta})
            if mc is not None:
                preds[i] += rng.normal(0.0, mc)
        q = (1 - level) / 2
        out = configs.reset_index(drop=True).copy()
        out["best"] = best
        ok = np.isfinite(preds)
        mean, lo, hi = (np.full(len(rows), np.nan) for _ in range(3))
        full = ok.all(axis=0)
        if full.any():
            mean[full] = preds[:, full].mean(axis=0)
            lo[full], hi[full] = np.quantile(preds[:, full], [q, 1 - q], axis=0)
        for j in np.flatnonzero(~full & ok.any(axis=0)):  # the rows that lost some draws: the rest
            col = preds[ok[:, j], j]
            mean[j], lo[j], hi[j] = col.mean(), *np.quantile(col, [q, 1 - q])
        out["mean"], out["lo"], out["hi"] = mean, lo, hi
        dropped = (~ok).sum(axis=0)
        out["dropped_draws"] = dropped
        from .corpus import discrepancy

        if structural is None:
            from .mechanism import Mechanism

            structural = isinstance(self.model, Mechanism)
        if structural and discrepancy.enabled():
            out = discrepancy.widen_frame(out, level)
        out["uninformative"] = discrepancy.uninformative(out["metric"], out["best"], out["lo"], out["hi"])
        out.attrs["infeasible"] = list(dict.fromkeys(msg for _, _, msg in errors))[:10]
        worst = int(dropped.max()) if len(dropped) else 0
        if worst > MAX_DROPPED_SHARE * n_samples:
            j = int(np.argmax(dropped))
            many = int((dropped > MAX_DROPPED_SHARE * n_samples).sum())
            first = next((msg for _, idx, msg in errors if j in np.atleast_1d(idx)), "")
            warnings.warn(f"{self.model.name}: {worst} of {n_samples} parameter draws ({worst / n_samples:.0%}) "
                          f"are infeasible for row {j} ({rows['metric'].iloc[j]})"
                          + (f" and more than {MAX_DROPPED_SHARE:.0%} for {many - 1} other row(s)" if many > 1 else "")
                          + f"; they are dropped (column dropped_draws) and the band covers the feasible draws "
                          f"only. First error: {first}", InfeasibleDrawsWarning, stacklevel=2)
        return out

    # --- validation -----------------------------------------------------------------
    def loo(self, by: list[str] | None = None) -> pd.DataFrame:
        """Leave-one-out: refit without each row and predict it. ``by`` leaves
        out whole groups instead (e.g. every metric of one configuration, when
        they are not independent). Each refit is warm-started from this fit,
        so where the data leave a direction flat (an identifiability warning)
        the left-out rows still steer it. Same columns as :attr:`residuals`;
        ``attrs['summary']`` holds rms_pull, rmse and median_abs_rel_error."""
        out = self.residuals
        if by is None:
            groups = [[i] for i in range(len(self.data))]
        else:
            missing = [c for c in by if c not in self.data.columns]
            if missing:
                raise ValueError(f"loo(by=...): no column(s) {missing} in the fitted data")
            groups = [list(ix) for ix in self.data.groupby(list(by), dropna=False, sort=False).indices.values()]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotIdentifiableWarning)
            warnings.simplefilter("ignore", UnknownColumnWarning)  # the fit said it once
            warnings.simplefilter("ignore", PoorFitWarning)  # a refit of this fit's data or its noise
            for rows in groups:
                rest = self.data.drop(index=rows)
                refit = fit(self.model, rest, absolute_sigma=self.absolute_sigma, default_rel_error=self.model.default_rel_error)
                out.loc[rows, "predicted"] = refit.model.plan(self.data.iloc[rows])().astype(float)
        out["residual"] = out["measured"] - out["predicted"]
        out["pull"] = out["residual"] / out["sigma"]
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.abs(out["residual"] / out["measured"])
        out.attrs["summary"] = {
            "rms_pull": float(np.sqrt(np.mean(out["pull"] ** 2))),
            "rmse": float(np.sqrt(np.mean(out["residual"] ** 2))),
            "median_abs_rel_error": float(np.nanmedian(rel[np.isfinite(rel)])) if np.isfinite(rel).any() else math.nan,
        }
        return out

    def bootstrap(self, n: int = 200, seed=0) -> FitResult:
        """Parametric bootstrap: refit ``n`` synthetic data sets drawn around
        the best-fit predictions with the data's sigma. Returns a copy of this
        result whose ``bootstrap_samples`` holds the refitted parameters (use
        ``predict(..., method='bootstrap')``)."""
        if not isinstance(n, int) or isinstance(n, bool) or not 2 <= n <= MAX_SAMPLES:
            raise ValueError(f"n must be an integer in [2, {MAX_SAMPLES:,}], got {n!r}")
        rng = _rng(seed)
        pred = self.model.plan(self.data)()
        # the noise the fit believes in: sigma, or sigma scaled to chi2/dof
        noise = self.sigma * (1.0 if self.absolute_sigma else math.sqrt(max(self.chi2_dof, 0.0)))
        samples = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotIdentifiableWarning)
            warnings.simplefilter("ignore", UnknownColumnWarning)  # the fit said it once
            warnings.simplefilter("ignore", PoorFitWarning)  # a refit of this fit's data or its noise
            for _ in range(n):
                fake = self.data.copy()
                fake["value"] = pred + rng.normal(0.0, noise)
                fake["stddev"] = self.sigma  # keep the original weights
                refit = fit(self.model, fake, absolute_sigma=self.absolute_sigma)
                samples.append(refit.params)
        return replace(self, bootstrap_samples=pd.DataFrame(samples, columns=self.names))

    # --- display ----------------------------------------------------------------------
    def table(self) -> pd.DataFrame:
        p = self.model.params
        rows = []
        for n in self.model.params:
            q = p[n]
            rows.append(dict(parameter=n, value=q.value, stderr=self.stderr.get(n, math.nan) if q.free else math.nan,
                             unit=q.unit, free=q.free, bounds=f"[{q.lower:g}, {q.upper:g}]",
                             prior="" if q.prior is None else f"{q.prior.value:g} ± {q.prior.width:g} ({q.prior.source})"))
        return pd.DataFrame(rows)

    def prior_sources(self) -> list[str]:
        """The sources of the free parameters' priors, in parameter order,
        each once: what :meth:`summary` numbers ``[1]``, ``[2]`` ... with
        ``footnotes=True``."""
        return list(dict.fromkeys(q.prior.source for q in self.model.parameters if q.free and q.prior is not None))

    def __str__(self) -> str:
        return self.summary()

    def summary(self, footnotes: bool = False) -> str:  # noqa: C901 - one line per parameter kind
        """80 columns: each free parameter with its error and prior, then the
        fixed ones compactly (``table()`` has all). A prior's source is
        wrapped below it, or with ``footnotes`` referred to as ``[n]``, the
        n-th of :meth:`prior_sources` (for a report that lists them below)."""
        import textwrap

        notes = {src: i + 1 for i, src in enumerate(self.prior_sources())}

        lines = [f"{self.model.name} fit: chi2/dof = {self.chi2:.4g}/{self.dof} = {self.chi2_dof:.3g}, "
                 f"{len(self.data)} points",
                 f"  sigma {'absolute' if self.absolute_sigma else 'scaled by chi2/dof'}"]
        fixed, per_row = [], []
        for q in self.model.parameters:
            if not q.free and q.name in self.data.columns and self.data[q.name].notna().all():
                per_row.append(q.name)  # every row sets it: the default never entered the fit
                continue
            if not q.free:
                fixed.append(f"{q.name} {q.value:.4g} {q.unit}")
                continue
            if q.name in self.at_bound:
                lines.append(f"  {q.name:<26} {q.value:>10.5g} at its {self.at_bound[q.name]} bound {q.unit}")
                lines.append(f"      one-sided limit: fit.profile_limit({q.name!r})")
            else:
                lines.append(f"  {q.name:<26} {q.value:>10.5g} ± {self.stderr.get(q.name, math.nan):<9.3g} {q.unit}")
            if q.prior is not None and footnotes:
                lines.append(f"      prior {q.prior.value:g} ± {q.prior.width:g} [{notes[q.prior.source]}]")
            elif q.prior is not None:
                lines += textwrap.wrap(f"prior {q.prior.value:g} ± {q.prior.width:g}: {q.prior.source}", 80,
                                       initial_indent="      ", subsequent_indent="      ")
        if per_row:
            lines += textwrap.wrap("(set by every row) " + ", ".join(per_row), 80, initial_indent="  ",
                                   subsequent_indent="    ")
        if fixed:
            lines += textwrap.wrap("(fixed) " + ", ".join(fixed), 80, initial_indent="  ", subsequent_indent="    ")
        c = self.correlation
        for i, a in enumerate(self.names):
            for b in self.names[i + 1 :]:
                r = c.loc[a, b]
                if np.isfinite(r) and CORRELATION_NOTE < abs(r) <= CORRELATION_LIMIT:
                    lines += textwrap.wrap(f"note: {a} and {b} are strongly correlated ({r:+.3f})", 80,
                                           initial_indent="  ", subsequent_indent="    ")
        for w in self.warnings:
            lines += textwrap.wrap(f"warning: {w}", 80, initial_indent="  ", subsequent_indent="    ")
        return "\n".join(lines)

    def __repr__(self) -> str:
        params = ", ".join(f"{k!r}: {v:.6g}" for k, v in self.params.items())  # significant digits: 3e-06 stays 3e-06
        return f"<FitResult {self.model.name}: chi2/dof={self.chi2_dof:.3g}, params={{{params}}}>"

    def _repr_html_(self) -> str:
        """The parameter table, the correlation matrix of the free parameters
        (|r| above CORRELATION_NOTE in bold) and the warnings; every name,
        unit, prior source and warning HTML-escaped."""
        from html import escape

        t = self.table()
        rows = "".join(
            f"<tr><td>{escape(r.parameter)}</td><td>{r.value:.6g}</td><td>{'' if not r.free else f'{r.stderr:.3g}'}</td>"
            f"<td>{escape(r.unit)}</td><td>{escape(r.bounds)}</td><td>{escape(r.prior)}</td></tr>" for r in t.itertuples())
        warn = "".join(f"<li>{escape(w)}</li>" for w in self.warnings)
        corr = ""
        if len(self.names) > 1:
            c = self.correlation
            head = "".join(f"<th>{escape(n)}</th>" for n in self.names)
            body = ""
            for a in self.names:
                cells = ""
                for b in self.names:
                    r = c.loc[a, b]
                    text = f"{r:+.3f}" if np.isfinite(r) else "nan"
                    strong = a != b and np.isfinite(r) and abs(r) > CORRELATION_NOTE
                    cells += f"<td>{'<b>' + text + '</b>' if strong else text}</td>"
                body += f"<tr><th>{escape(a)}</th>{cells}</tr>"
            corr = f"<p>correlations</p><table><tr><th></th>{head}</tr>{body}</table>"
        return (f"<p><b>{escape(self.model.name)}</b>: &chi;&sup2;/dof = {self.chi2:.4g}/{self.dof} = "
                f"{self.chi2_dof:.3g}, {len(self.data)} points</p><table><tr><th>parameter</th><th>value</th>"
                f"<th>stderr</th><th>unit</th><th>bounds</th><th>prior</th></tr>{rows}</table>{corr}"
                + (f"<ul>{warn}</ul>" if warn else ""))
