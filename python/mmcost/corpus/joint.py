"""One fit of several sources' models, with the costs they share as one parameter each.

A source is a :class:`Member`: a model (any :class:`mmcost.model.Model`), the
rows it is fitted to, and its *links*: which of the model's parameters is which
global parameter. A link may carry a *factor*: a global log-factor (a machine's
speed relative to the others, see :mod:`mmcost.corpus.sharing`) that scales the
shared value for this source only, ``local = shared * exp(factor)``. So a
per-folio kernel cost is one number per kernel era, and each machine pays it
at its own speed, with the factor's prior saying how far machines differ.

The fit minimises every member's weighted residuals plus each global prior's
penalty once (not once per member that uses it), by
``scipy.optimize.least_squares`` with a Jacobian assembled per member from
finite differences of that member's own links only (a member's rows do not
depend on the others' parameters, so the Jacobian is block-sparse).

Sigma: a row's published uncertainty, else the model's default relative error.
A member whose rows carry no published uncertainty and whose weighted chi2 per
row is above 1 after a first fit has its sigma scaled up by sqrt(chi2/row) and
the fit is repeated once: its default percentage was a guess, and an
unrescaled member with a model it does not match would pull every shared cost
to itself (Birge's ratio per data set, as the Particle Data Group scales
inconsistent measurements; PDG, Review of Particle Physics, Introduction,
sec. 5.2.2).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from ..fit import FitResult, NotIdentifiableWarning, _check_data, _covariance, _sigmas
from ..model import Model, Parameter

#: global parameters named so are log-factors (about 0: their step is absolute)
FACTOR_PREFIX = "log_"
#: relative finite-difference step of the Jacobian (forward differences of smooth solvers)
FD_STEP = 1e-6


@dataclass(frozen=True)
class Link:
    """A member parameter ``local`` is global ``shared``, times ``exp(factor)`` when a factor is named."""

    local: str
    shared: str
    factor: str | None = None


@dataclass
class Member:
    """One source in a joint fit: ``source`` (its id), ``model`` and ``rows``
    (what it is fitted to), and ``links`` (which parameters are shared)."""

    source: str
    model: Model
    rows: pd.DataFrame
    links: tuple[Link, ...]
    #: filled by the fit: the rows' sigma, and whether they were published
    sigma: np.ndarray | None = field(default=None, repr=False)
    published_sigma: bool = False

    def __post_init__(self):
        if not isinstance(self.model, Model):
            raise TypeError(f"member {self.source}: model must be an mmcost Model, got {type(self.model).__name__}")
        known = self.model.params
        bad = [lk.local for lk in self.links if lk.local not in known]
        if bad:
            raise ValueError(f"member {self.source}: linked parameter(s) {bad} are not parameters of {self.model.name}")
        self.rows = _check_data(self.model, self.rows)
        self._plan = self.model.plan(self.rows)

    @property
    def globals(self) -> list[str]:
        """The global parameters this member's rows depend on."""
        out = []
        for lk in self.links:
            out += [lk.shared] + ([lk.factor] if lk.factor else [])
        return list(dict.fromkeys(out))

    def local_values(self, theta: dict[str, float]) -> dict[str, float]:
        """Its linked parameters' values at global values ``theta``, clipped to their bounds."""
        return _local_values(self.model, self.links, theta)

    def predict(self, theta: dict[str, float]) -> np.ndarray:
        return self._plan(self.local_values(theta))

    def predict_many(self, thetas: list[dict[str, float]]) -> np.ndarray:
        return self._plan.many([self.local_values(t) for t in thetas])


@dataclass(frozen=True)
class JointFit:
    """The outcome of :func:`fit_joint`: ``params`` and ``covariance`` over the
    global parameters, ``parameters`` (their bounds and priors), each member's
    ``chi2`` and rows, and ``sigma_scale`` (the factor a member's default sigma
    was widened by)."""

    parameters: dict[str, Parameter]
    params: dict[str, float]
    covariance: pd.DataFrame
    members: tuple[Member, ...]
    chi2: dict[str, float]
    sigma_scale: dict[str, float]
    at_bound: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def stderr(self) -> dict[str, float]:
        return {n: math.nan if n in self.at_bound else float(np.sqrt(max(self.covariance.loc[n, n], 0.0)))
                for n in self.covariance.index}

    def table(self) -> pd.DataFrame:
        """One row per global parameter: value, stderr, prior, and the members that share it."""
        users = {n: [m.source for m in self.members if n in m.globals] for n in self.parameters}
        rows = []
        for n, p in self.parameters.items():
            rows.append(dict(parameter=n, value=self.params[n], stderr=self.stderr.get(n, math.nan), unit=p.unit,
                             prior=math.nan if p.prior is None else p.prior.value,
                             prior_width=math.nan if p.prior is None else p.prior.width,
                             pull=math.nan if p.prior is None else (self.params[n] - p.prior.value) / p.prior.width,
                             sources=", ".join(users[n])))
        return pd.DataFrame(rows)

    def transplant(self, fit: FitResult, links: tuple[Link, ...], fallback: dict[str, Parameter] | None = None
                   ) -> FitResult:
        """``fit`` with its ``links`` set to this joint fit's values, their
        covariance propagated through the factors (first order: d(s e^u) =
        e^u ds + s e^u du), every other free parameter of ``fit`` kept with
        its own variance. A global this fit does not have (a machine factor of
        a machine no member ran on) is taken from ``fallback`` at its prior:
        mean and variance. What a study predicts its held-out rows with."""
        fallback = fallback or {}
        links = tuple(lk for lk in links if lk.shared in self.params or lk.shared in fallback)
        mean = dict(self.params)
        names = list(self.covariance.index)
        extra = sorted({g for lk in links for g in (lk.shared, lk.factor) if g and g not in mean})
        for g in extra:
            pr = fallback[g].prior
            if pr is None:
                raise ValueError(f"transplant: global {g!r} is neither fitted nor has a prior")
            mean[g] = pr.value
        allg = names + extra
        cov_g = np.zeros((len(allg),) * 2)
        cov_g[: len(names), : len(names)] = np.nan_to_num(self.covariance.to_numpy())
        for i, g in enumerate(extra):
            cov_g[len(names) + i, len(names) + i] = fallback[g].prior.width ** 2
        pos = {n: i for i, n in enumerate(allg)}
        vals = _local_values(fit.model, links, mean)
        jac = np.zeros((len(links), len(allg)))
        for i, lk in enumerate(links):
            e = math.exp(mean[lk.factor]) if lk.factor else 1.0
            jac[i, pos[lk.shared]] = e
            if lk.factor:
                jac[i, pos[lk.factor]] = mean[lk.shared] * e
        linked = [lk.local for lk in links]
        own = [n for n in fit.names if n not in linked]
        cov = np.zeros((len(linked) + len(own),) * 2)
        cov[: len(linked), : len(linked)] = jac @ cov_g @ jac.T
        if own:
            cov[len(linked):, len(linked):] = fit.covariance.loc[own, own].to_numpy()
        allnames = linked + own
        model = fit.model.with_parameters(**{n: {"value": v, "free": True} for n, v in vals.items()})
        at_bound = {n: s for n, s in fit.at_bound.items() if n in own}
        for lk in links:
            if lk.shared in self.at_bound and not lk.factor:
                at_bound[lk.local] = self.at_bound[lk.shared]
        return replace(fit, model=model, covariance=pd.DataFrame(cov, index=allnames, columns=allnames),
                       at_bound=at_bound)


def _local_values(model: Model, links, theta: dict[str, float]) -> dict[str, float]:
    """``model``'s linked parameters at global values ``theta``: shared x exp(factor), clipped to bounds."""
    p = model.params
    out = {}
    for lk in links:
        v = theta[lk.shared] * (math.exp(theta[lk.factor]) if lk.factor else 1.0)
        out[lk.local] = float(min(max(v, p[lk.local].lower), p[lk.local].upper))
    return out


def _residuals(members, names, theta_vec, priors):
    theta = dict(zip(names, theta_vec))
    parts = [(m.predict(theta) - m.rows["value"].to_numpy(float)) / m.sigma for m in members]
    parts.append(np.array([(theta_vec[k] - pr.value) / pr.width for k, pr in priors]))
    return np.concatenate(parts)


def _jacobian(members, names, theta_vec, priors, lower, upper):
    pos = {n: i for i, n in enumerate(names)}
    n_rows = sum(len(m.rows) for m in members)
    jac = np.zeros((n_rows + len(priors), len(names)))
    theta = dict(zip(names, theta_vec))
    start = 0
    for m in members:
        cols = [pos[g] for g in m.globals]
        steps = []
        thetas = [theta]
        for c in cols:
            h = FD_STEP * max(abs(theta_vec[c]), 1.0 if names[c].startswith(FACTOR_PREFIX) else 1e-6)
            if theta_vec[c] + h > upper[c]:
                h = -h  # a backward step at an upper bound
            t = dict(theta)
            t[names[c]] = theta_vec[c] + h
            thetas.append(t)
            steps.append(h)
        preds = m.predict_many(thetas)
        n = len(m.rows)
        for k, c in enumerate(cols):
            jac[start:start + n, c] = (preds[k + 1] - preds[0]) / steps[k] / m.sigma
        start += n
    for r, (k, pr) in enumerate(priors):
        jac[n_rows + r, k] = 1.0 / pr.width
    return jac


def fit_joint(members: list[Member], parameters: dict[str, Parameter], *, x0: dict[str, float] | None = None,
              rescale: bool = True) -> JointFit:
    """Fit ``parameters`` (global: name -> Parameter with value, bounds and
    prior) to every member's rows. ``x0``: start values (a refit warm-starts
    from an earlier fit). ``rescale``: widen a member's default sigma by its
    Birge ratio and fit again (module docstring)."""
    if not members:
        raise ValueError("fit_joint: no members")
    used = sorted({g for m in members for g in m.globals})
    missing = [g for g in used if g not in parameters]
    if missing:
        raise ValueError(f"fit_joint: members link to undefined global parameter(s) {missing}")
    names = used
    glob = {n: parameters[n] for n in names}
    lower = np.array([glob[n].lower for n in names])
    upper = np.array([glob[n].upper for n in names])
    start = {n: glob[n].value for n in names} | {k: v for k, v in (x0 or {}).items() if k in glob}
    theta0 = np.clip(np.array([start[n] for n in names], float), lower, upper)
    priors = [(k, glob[n].prior) for k, n in enumerate(names) if glob[n].prior is not None]
    scale = {}
    for m in members:
        sigma, source = _sigmas(m.rows, m.model.default_rel_error)
        m.sigma, m.published_sigma = sigma, not any(str(s).startswith("default") for s in source)
        scale[m.source] = 1.0

    def solve(theta_start):
        return least_squares(lambda t: _residuals(members, names, t, priors), theta_start, bounds=(lower, upper),
                             jac=lambda t: _jacobian(members, names, t, priors, lower, upper),
                             x_scale="jac", method="trf", max_nfev=200 * len(names))

    res = solve(theta0)
    if rescale:
        theta = dict(zip(names, res.x))
        again = False
        for m in members:
            if m.published_sigma:
                continue
            chi2_row = float(np.mean(((m.predict(theta) - m.rows["value"].to_numpy(float)) / m.sigma) ** 2))
            if chi2_row > 1.0:
                s = math.sqrt(chi2_row)
                m.sigma = m.sigma * s
                scale[m.source] = s
                again = True
        if again:
            res = solve(res.x)
    best = dict(zip(names, map(float, res.x)))
    chi2 = {m.source: float(np.sum(((m.predict(best) - m.rows["value"].to_numpy(float)) / m.sigma) ** 2))
            for m in members}
    n_rows = sum(len(m.rows) for m in members)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotIdentifiableWarning)  # kept in the result's warnings
        cov, warns = _covariance(_jacobian(members, names, res.x, priors, lower, upper), names,
                                 sum(chi2.values()), n_rows + len(priors) - len(names), True)
    at_bound = {n: ("lower" if a < 0 else "upper") for n, a in zip(names, res.active_mask) if a != 0}
    if res.status == 0:
        warns.append(f"the joint fit stopped after {res.nfev} evaluations without converging")
    return JointFit(parameters=glob, params=best, covariance=pd.DataFrame(cov, index=names, columns=names),
                    members=tuple(members), chi2=chi2, sigma_scale=scale, at_bound=at_bound, warnings=tuple(warns))


def leave_one_out(members: list[Member], parameters: dict[str, Parameter], *, level: float = 0.9,
                  n_samples: int = 200, seed=0) -> pd.DataFrame:
    """Each member's rows predicted by a joint fit of the others: ``source,
    metric, published, predicted, lo, hi`` (the parameters' band at
    ``level``; a global only the left-out member used is taken at its
    prior). What :mod:`mmcost.corpus.loso` does for the bundled studies, for
    any members."""
    from .discrepancy import parameters_only

    full = fit_joint(list(members), parameters)
    parts = []
    with parameters_only(), warnings.catch_warnings():
        warnings.simplefilter("ignore", NotIdentifiableWarning)
        for k, m in enumerate(members):
            others = [o for o in members if o is not m]
            joint = fit_joint(others, parameters, x0=full.params)
            fit = joint.transplant(FitResult.of_priors(m.model), m.links, parameters)
            pred = fit.predict(m.rows, level=level, n_samples=n_samples, seed=[seed, k], fixed_priors=True)
            parts.append(pd.DataFrame({"source": m.source, "metric": m.rows["metric"].to_numpy(),
                                       "published": m.rows["value"].to_numpy(float), "predicted": pred["best"],
                                       "lo": pred["lo"], "hi": pred["hi"]}))
    return pd.concat(parts, ignore_index=True)
