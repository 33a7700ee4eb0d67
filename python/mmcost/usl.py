"""The Universal Scalability Law as an mmcost model: the empirical baseline.

Gunther, "Guerrilla Capacity Planning", Springer 2007, ch. 4:
X(N) = lam N / (1 + sigma (N - 1) + kappa N (N - 1)). Users know it; mmcost
fits it next to the mechanism models to show where the two disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from . import queueing
from .model import Model, Parameter


@dataclass(frozen=True)
class UslModel(Model):
    """USL for one throughput ``metric`` against the configuration column
    ``n_column`` (``cpus``, ``processes`` or ``threads``). No priors: the USL
    coefficients are empirical and have no literature value to lean on."""

    metric: str = "throughput"
    n_column: str = "cpus"
    name: str = "usl"

    PARAMETERS: ClassVar = (
        Parameter("sigma", 0.05, "1", 0.0, 1.0, doc="contention: the serialised fraction"),
        Parameter("kappa", 1e-4, "1", 0.0, 1.0, doc="coherency: pairwise crosstalk per unit"),
        # > 0: a band's draw clipped onto 0 would be no scaling curve at all
        Parameter("lam", 1.0, "metric/unit", 1e-300, math.inf, doc="throughput of one unit, in the metric's unit"),
    )

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
        """Fit; unless ``x0`` is given, lam starts at X/N of the smallest N."""
        if "x0" not in kwargs and isinstance(df, pd.DataFrame) and self.n_column in df and len(df):
            rows = df[df["metric"] == self.metric] if "metric" in df else df.iloc[:0]
            n = pd.to_numeric(rows[self.n_column], errors="coerce")
            x = pd.to_numeric(rows.get("value", pd.Series(dtype=float)), errors="coerce")
            ok = np.isfinite(n) & np.isfinite(x) & (n >= 1) & (x > 0)
            if ok.any():  # a finite start; fit() checks the data itself and clips a start into the bounds
                i = n[ok].idxmin()
                kwargs["x0"] = {"lam": float(x[i] / n[i])}
        return super().fit(df, **kwargs)
