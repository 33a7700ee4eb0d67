"""What every study is: a source, a mechanism, its free parameters, held-out numbers, sections."""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import datasets
from ..fit import FitResult, NotIdentifiableWarning, PoorFitWarning
from ..mechanism import Mechanism

#: the columns of held_out()
HELD_OUT_COLUMNS = ["metric", "configuration", "published", "predicted", "lo", "hi", "error"]


@dataclass
class Section:
    """One part of a report: a title, the plain-text table as pasted into an
    email (at most 80 columns), optionally a figure, and the notes the table
    refers to as ``[1]``, ``[2]`` ... (the sources of a fit's priors)."""

    title: str
    text: str
    figure: Figure | None = None
    figure_name: str | None = None
    notes: tuple[str, ...] = ()

    @classmethod
    def of_fit(cls, title: str, fit: FitResult, after: str = "", **kwargs) -> Section:
        """A fit's summary with its priors' sources as notes (and ``after``
        below the summary)."""
        text = fit.summary(footnotes=True) + (f"\n\n{after}" if after else "")
        return cls(title, text, notes=tuple(fit.prior_sources()), **kwargs)


class Study:
    """A source's study. Subclasses set ``id`` (the data folder), ``mechanism``
    (the model class), ``free`` (fitted fields) and implement
    :meth:`fit_rows`, :meth:`held_out` and :meth:`sections`. The mechanism's
    defaults come from the ``[model]`` table of ``source.toml`` and its kernel
    variants from ``[variants.<name>]``."""

    id: ClassVar[str] = ""
    mechanism: ClassVar[type] = type(None)
    free: ClassVar[tuple[str, ...]] = ()
    #: start values of the fit for free parameters whose prior value is a point where least squares stalls
    #: (``x0`` of :func:`mmcost.fit.fit`; the priors stay what they are); empty: start from the model's values
    start: ClassVar[dict[str, float]] = {}
    #: level of held_out()'s lo/hi band
    level: ClassVar[float] = 0.9
    #: where this source's leave-one-source-out misses point (a mechanism missing or a prior wrong on its
    #: machine), for the report's table; "" where nothing is known to miss
    miss: ClassVar[str] = ""
    #: the machine profile (``mmcost measure machine``) measured on the machine this source's runs ran on:
    #: (its data folder, its file name), or None. :meth:`model` then sets ``cpu_model`` to it, so every cost
    #: the profile measured replaces the preset's with a prior centred on the measurement, its width the
    #: rounds' spread plus ``cpu_models.MEASURED_ALLOWANCE`` (the one table of which profile cost is which
    #: field: :func:`mmcost.measure.profile.as_cpu_model`), and the joint fit keys those costs by the
    #: profile's machine (:func:`mmcost.corpus.sharing.machine`), so every study on that machine shares them.
    #: Refused (ValueError) unless the runs record that machine (:meth:`machine`): a profile of another VM
    #: of the same kind is not a measurement of this one (a flush IPI cost 1.3-28.6 us on three 6.18 guests).
    PROFILE: ClassVar[tuple[str, str] | None] = None
    #: whether leave-one-source-out (:mod:`mmcost.corpus.loso`) predicts this study's held-out rows: False
    #: where they cannot be a source left out (each predicted from its own run's baseline, the priors they
    #: test read off the same runs), which would shrink the structural error's estimate for nothing
    in_leave_one_source_out: ClassVar[bool] = True

    def __init__(self):
        self._fit: FitResult | None = None
        self._held_out: pd.DataFrame | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("held_out")
        if own is not None:  # computed once per study, as the fit is: sections() and reproduce both read it
            @functools.wraps(own)
            def held_out(self):
                if self.__dict__.get("_held_out") is None:
                    self._held_out = own(self)
                return self._held_out.copy()

            cls.held_out = held_out

    def __repr__(self) -> str:
        return f"<study {self.id}: {self.mechanism.__name__}, free {list(self.free)}>"

    # --- the source ---------------------------------------------------------------------
    def data(self) -> pd.DataFrame:
        return datasets.load(self.id)

    def source(self) -> dict:
        return datasets.source(self.id)

    def model(self):
        """The mechanism with this source's defaults (``[model]``) and variants;
        ``cpu_model`` the machine profile of :attr:`PROFILE` where it is set."""
        src = self.source()
        return self.mechanism(**self._model_fields(), variants=dict(src.get("variants", {})))

    def _model_fields(self) -> dict:
        """``[model]`` of source.toml, with ``cpu_model`` :meth:`profile_path` when :attr:`PROFILE` is set
        (after :meth:`machine` said the runs ran where the profile was measured)."""
        fields = dict(self.source().get("model", {}))
        if self.PROFILE is not None:
            self.machine()
            fields["cpu_model"] = self.profile_path()
        return fields

    def profile_path(self) -> str | None:
        """The path of :attr:`PROFILE`'s file, or None without one."""
        if self.PROFILE is None:
            return None
        folder, name = self.PROFILE
        return str(datasets.path(folder) / name)

    def machine(self) -> dict:
        """Whether :attr:`PROFILE` was measured on the machine of this source's
        runs (:func:`mmcost.measure.verify.machine_match` on :meth:`data`: the
        runs' ``machine_profile``, else ``boot_id``, else ``kernel`` build,
        against the profile's): its ``status``, ``by`` and ``text``. Raises
        ValueError naming the study, the profile and the record compared
        unless the status is ``same``; ``{}`` without a profile."""
        if self.PROFILE is None:
            return {}
        if self.__dict__.get("_machine") is None:
            from ..measure.verify import machine_match

            got = machine_match(self.data(), self.profile_path())
            if got["status"] != "same":
                raise ValueError(f"study {self.id}: PROFILE {'/'.join(self.PROFILE)} is not the machine of its "
                                 f"runs ({got['status']}{', by ' + got['by'] if got['by'] else ''}): "
                                 f"{got['text']} A profile of another machine is at most a prior, not this one's "
                                 "measured costs.")
            self._machine = got
        return dict(self._machine)

    # --- the fit --------------------------------------------------------------------------
    def fit_rows(self) -> pd.DataFrame:
        raise NotImplementedError

    def fit(self) -> FitResult:
        """The study's fit of its mechanism to its source (computed once). A
        study on a measured machine (:attr:`PROFILE`) that frees nothing is
        fitted to nothing: its fit is the profile's costs and the priors
        alone (:meth:`FitResult.of_priors`), which leave-one-source-out
        replaces with the joint fit's shared costs, as any source's."""
        if self._fit is None and not self.free and self.PROFILE is not None:
            self._fit = FitResult.of_priors(self.model())
        if self._fit is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NotIdentifiableWarning)
                warnings.simplefilter("ignore", PoorFitWarning)  # kept in fit.warnings, printed in the report
                model = self.model()
                kwargs = {"free": list(self.free)} if isinstance(model, Mechanism) else {}
                if self.start:
                    kwargs["x0"] = dict(self.start)
                self._fit = model.fit(self.fit_rows(), **kwargs)
        return self._fit

    def held_out(self) -> pd.DataFrame:
        """The numbers this study predicts without fitting them: ``metric,
        configuration, published, predicted, lo, hi, error`` (error =
        predicted - published, in the metric's unit; lo/hi at ``level``)."""
        raise NotImplementedError

    def sections(self) -> list[Section]:
        raise NotImplementedError

    # --- accounting ------------------------------------------------------------------------------
    #: rows no mechanism here expresses: (selector of data() columns, the missing mechanism or output);
    #: see :func:`select` for the selector's forms
    NOT_EXPRESSIBLE: ClassVar[tuple[tuple[dict, str], ...]] = ()

    def not_expressible(self) -> tuple[tuple[dict, str], ...]:
        return tuple(self.NOT_EXPRESSIBLE)

    def fitted_rows(self) -> list[tuple[pd.DataFrame, str]]:
        """The source's rows the study fits (or reads as a reference), each group with why."""
        try:
            return [(self.fit_rows(), "fitted")]
        except NotImplementedError:
            return []

    def has_held_out(self) -> bool:
        return type(self).held_out is not Study.held_out

    def held_out_sigma(self) -> np.ndarray:
        """Per held-out row, the published standard deviation of the number
        predicted (``stddev``, or ``stddev_pct`` of its value), NaN where none is.

        A measured source publishes its repetitions instead: where the held-out
        table has a ``stddev`` column (the spread of the configuration's runs,
        :func:`repetition_sd`) that is the row's standard deviation, as an LKP
        table's ``%stddev`` is over its runs."""
        held = self.held_out()
        if "stddev" in held.columns:
            return held["stddev"].to_numpy(float)
        df = self.data().reset_index(drop=True)
        out = []
        for r in held.itertuples():
            i = _match(df, None, r.metric, r.published)
            sd = np.nan
            if i is not None:
                row = df.iloc[i]
                if "stddev" in df.columns and pd.notna(row["stddev"]):
                    sd = float(row["stddev"])
                elif "stddev_pct" in df.columns and pd.notna(row["stddev_pct"]) and not r.metric.endswith("_change_pct"):
                    # (a change row's stddev_pct is its throughput's, not the change's)
                    sd = float(row["stddev_pct"]) / 100 * abs(float(row["value"]))
            out.append(sd)
        return np.array(out, dtype=float)

    def accounting(self) -> pd.DataFrame:
        """Every row of the source with ``status`` (fitted, predicted, not
        expressible; unaccounted where the study has not placed it) and
        ``reason`` (for a row not expressible: the missing mechanism or output)."""
        if self.__dict__.get("_accounting") is None:
            self._accounting = _accounting(self)
        return self._accounting.copy()

    def counts(self) -> dict[str, int]:
        """Rows per status, and the held-out hits (``hits`` of ``held_out``)."""
        status = self.accounting()["status"]
        out = {s: int((status == s).sum()) for s in STATUSES}
        hits, n = _hit_rate(self) if self.has_held_out() else (0, 0)
        return {**out, "hits": hits, "held_out": n}

    # --- helpers for subclasses -------------------------------------------------------------
    @staticmethod
    def _held_out_frame(rows: pd.DataFrame, configuration, pred: pd.DataFrame, stddev=None) -> pd.DataFrame:
        """The held-out table; ``stddev``, where given, is each row's repetition
        spread (:func:`repetition_sd`), read by :meth:`held_out_sigma`."""
        out = pd.DataFrame({"metric": rows["metric"].to_numpy(), "configuration": list(configuration),
                            "published": rows["value"].to_numpy(float), "predicted": pred["best"].to_numpy(float),
                            "lo": pred["lo"].to_numpy(float), "hi": pred["hi"].to_numpy(float)})
        out["error"] = out["predicted"] - out["published"]
        if stddev is None:
            return out[HELD_OUT_COLUMNS]
        return out[HELD_OUT_COLUMNS].assign(stddev=np.asarray(stddev, dtype=float))

    def _leave_one_out(self, by: list[str] | None = None, n_samples: int = 60) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Each row (or group) predicted, with its band, by a refit without it."""
        fit = self.fit()
        data = fit.data
        groups = ([[i] for i in range(len(data))] if by is None
                  else [list(ix) for ix in data.groupby(by, dropna=False, sort=False).indices.values()])
        parts = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotIdentifiableWarning)
            warnings.simplefilter("ignore", PoorFitWarning)  # kept in fit.warnings, printed in the report
            for rows in groups:
                # (from the study's start where it has one: a fit handed in from elsewhere, leave-one-source-out's,
                # may sit where least squares stalls)
                refit = fit.model.fit(data.drop(index=rows).reset_index(drop=True), absolute_sigma=fit.absolute_sigma,
                                      **({"x0": dict(self.start)} if self.start else {}))
                parts.append(refit.predict(data.iloc[rows], level=self.level, n_samples=n_samples, seed=len(parts)))
        pred = pd.concat(parts).reset_index(drop=True)
        order = np.concatenate(groups)
        return data.iloc[order].reset_index(drop=True), pred


# --- accounting: every row of a source is fitted, predicted or not expressible -------------------------
#: the statuses of :meth:`Study.accounting`; "unaccounted" marks a row a study has not placed yet
STATUSES = ("fitted", "predicted", "not expressible", "unaccounted")
#: columns that tell one published row from another (with the value)
_KEY = ("experiment", "variant", "metric", "folio_kb", "call_site", "run", "cpu", "threads", "processes", "cpus")


def _keys(df: pd.DataFrame) -> list[tuple]:
    cols = [c for c in _KEY if c in df.columns]
    out = []
    for r in df[cols + ["value"]].itertuples(index=False):
        key = tuple("" if (v is None or (isinstance(v, float) and np.isnan(v))) else str(v) for v in r[:-1])
        out.append((key, float(r[-1])))
    return out


def select(df: pd.DataFrame, **where) -> pd.Series:
    """Rows of ``df`` whose columns equal ``where``'s values (a tuple or list: any of them;
    a string starting with ``~``: a regular expression the column matches)."""
    mask = pd.Series(True, index=df.index)
    for col, want in where.items():
        s = df[col] if col in df.columns else pd.Series(np.nan, index=df.index)
        if isinstance(want, str) and want.startswith("~"):
            mask &= s.astype(str).str.contains(want[1:], regex=True)
        elif isinstance(want, (tuple, list)):
            mask &= s.isin(list(want))
        else:
            mask &= s == want
    return mask


def repetition_sd(runs: pd.DataFrame, by: list[str], rows: pd.DataFrame | None = None) -> np.ndarray:
    """Per row of ``rows`` (default: ``runs`` itself), the sample standard
    deviation of ``value`` over the ``runs`` that share its ``by`` columns (one
    value per run: a configuration's repetitions); NaN where fewer than two."""
    by = [c for c in by if c in runs.columns]
    sd = runs.groupby(by, dropna=False)["value"].std()
    target = runs if rows is None else rows
    keys = pd.MultiIndex.from_frame(target[by]) if len(by) > 1 else pd.Index(target[by[0]])
    return sd.reindex(keys).to_numpy(float)


def hit(metric: str, published: float, predicted: float, sigma: float | None = None) -> bool:
    """A held-out number is a hit when the prediction is within 2 sigma of the
    published value where a standard deviation is published, else within 10
    points of a relative change (``*_change_pct``), else within 10% of an
    absolute value."""
    err = abs(predicted - published)
    if sigma is not None and np.isfinite(sigma) and sigma > 0:
        return bool(err <= 2 * sigma)
    if metric.endswith("_change_pct"):
        return bool(err <= 10.0)
    return bool(err <= 0.10 * abs(published))


def _match(df: pd.DataFrame, status, metric: str, published: float) -> int | None:
    """The first row of ``df`` not yet placed whose metric and value are the held-out row's."""
    vals = df["value"].to_numpy(float)
    for i in np.flatnonzero((df["metric"] == metric).to_numpy()):
        if status is not None and status[i] != "unaccounted":
            continue
        if np.isclose(vals[i], published, rtol=1e-9, atol=1e-12):
            return int(i)
    return None


def _accounting(study: "Study") -> pd.DataFrame:
    """See :meth:`Study.accounting`."""
    df = study.data().reset_index(drop=True)
    status = np.array(["unaccounted"] * len(df), dtype=object)
    reason = np.array([""] * len(df), dtype=object)
    keys = _keys(df)

    def claim(rows: pd.DataFrame, what: str, why: str) -> None:
        want = {}
        for k in _keys(rows):
            want[k] = want.get(k, 0) + 1
        for i, k in enumerate(keys):
            if status[i] == "unaccounted" and want.get(k, 0) > 0:
                status[i], reason[i] = what, why
                want[k] -= 1

    for sel, why in study.not_expressible():
        m = select(df, **sel).to_numpy()
        idx = m & (status == "unaccounted")
        status[idx], reason[idx] = "not expressible", why
    if study.has_held_out():  # first: a leave-one-out study's fitted rows are each predicted too
        for r in study.held_out().itertuples():
            i = _match(df, status, r.metric, r.published)
            if i is not None:
                status[i], reason[i] = "predicted", r.configuration
    for rows, why in study.fitted_rows():
        claim(rows, "fitted", why)
    return df.assign(status=status, reason=reason)


def _hit_rate(study: "Study") -> tuple[int, int]:
    held = study.held_out()
    sig = study.held_out_sigma()
    hits = [hit(r.metric, r.published, r.predicted, s) for r, s in zip(held.itertuples(), sig)]
    return int(sum(hits)), len(hits)
