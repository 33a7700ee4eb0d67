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
    #: level of held_out()'s lo/hi band
    level: ClassVar[float] = 0.9

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
        """The mechanism with this source's defaults (``[model]``) and variants."""
        src = self.source()
        return self.mechanism(**src.get("model", {}), variants=dict(src.get("variants", {})))

    # --- the fit --------------------------------------------------------------------------
    def fit_rows(self) -> pd.DataFrame:
        raise NotImplementedError

    def fit(self) -> FitResult:
        """The study's fit of its mechanism to its source (computed once)."""
        if self._fit is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NotIdentifiableWarning)
                warnings.simplefilter("ignore", PoorFitWarning)  # kept in fit.warnings, printed in the report
                model = self.model()
                kwargs = {"free": list(self.free)} if isinstance(model, Mechanism) else {}
                self._fit = model.fit(self.fit_rows(), **kwargs)
        return self._fit

    def held_out(self) -> pd.DataFrame:
        """The numbers this study predicts without fitting them: ``metric,
        configuration, published, predicted, lo, hi, error`` (error =
        predicted - published, in the metric's unit; lo/hi at ``level``)."""
        raise NotImplementedError

    def sections(self) -> list[Section]:
        raise NotImplementedError

    # --- helpers for subclasses -------------------------------------------------------------
    @staticmethod
    def _held_out_frame(rows: pd.DataFrame, configuration, pred: pd.DataFrame) -> pd.DataFrame:
        out = pd.DataFrame({"metric": rows["metric"].to_numpy(), "configuration": list(configuration),
                            "published": rows["value"].to_numpy(float), "predicted": pred["best"].to_numpy(float),
                            "lo": pred["lo"].to_numpy(float), "hi": pred["hi"].to_numpy(float)})
        out["error"] = out["predicted"] - out["published"]
        return out[HELD_OUT_COLUMNS]

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
                refit = fit.model.fit(data.drop(index=rows).reset_index(drop=True), absolute_sigma=fit.absolute_sigma)
                parts.append(refit.predict(data.iloc[rows], level=self.level, n_samples=n_samples, seed=len(parts)))
        pred = pd.concat(parts).reset_index(drop=True)
        order = np.concatenate(groups)
        return data.iloc[order].reset_index(drop=True), pred
