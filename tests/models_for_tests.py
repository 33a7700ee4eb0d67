"""Small models with known answers, for testing the shared fitting workflow."""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mmcost.model import Model, Parameter


@dataclass(frozen=True)
class LinearModel(Model):
    """y = c0_s + c1_s_per_cpu * cpus: weighted linear least squares has closed forms."""

    name: str = "linear"
    PARAMETERS: ClassVar = (Parameter("c0_s", 1.0, "s", -100, 100), Parameter("c1_s_per_cpu", 0.5, "s/cpu", -100, 100))
    METRICS: ClassVar = ("runtime_s",)

    def predict_metric(self, metric, rows, p):
        return p["c0_s"] + p["c1_s_per_cpu"] * rows["cpus"].to_numpy(float)


@dataclass(frozen=True)
class DecayModel(Model):
    """y = a * exp(-b x): nonlinear, for coverage of the reported errors."""

    name: str = "decay"
    PARAMETERS: ClassVar = (Parameter("a_s", 5.0, "s", 0, 100), Parameter("b_per_cpu", 0.1, "1/cpu", 0, 10))
    METRICS: ClassVar = ("runtime_s",)

    def predict_metric(self, metric, rows, p):
        return p["a_s"] * np.exp(-p["b_per_cpu"] * rows["cpus"].to_numpy(float))


@dataclass(frozen=True)
class ProductModel(Model):
    """y = a b x: only the product a*b is identifiable."""

    name: str = "product"
    PARAMETERS: ClassVar = (Parameter("a_s", 1.0, "s", 0.01, 100), Parameter("b_1", 1.0, "1", 0.01, 100))
    METRICS: ClassVar = ("runtime_s",)

    def predict_metric(self, metric, rows, p):
        return p["a_s"] * p["b_1"] * rows["cpus"].to_numpy(float)


@dataclass(frozen=True)
class SpeedupModel(Model):
    """Throughput of a variant: base_kib_s, times speedup_1 for 'patched' and
    times (folio_kb / 4) ** gain_1 for the folio size; for _change_pct rows."""

    name: str = "speedup"
    PARAMETERS: ClassVar = (
        Parameter("base_kib_s", 100.0, "KiB/s", 0, 1e9),
        Parameter("speedup_1", 1.2, "1", 0.1, 10),
        Parameter("gain_1", 0.1, "1", -2, 2),
    )
    METRICS: ClassVar = ("usemem_throughput_kib_s",)

    def predict_metric(self, metric, rows, p):
        patched = (rows["variant"] == "patched").to_numpy()
        folio = rows["folio_kb"].to_numpy(float) if "folio_kb" in rows else np.full(len(rows), 4.0)
        return p["base_kib_s"] * np.where(patched, p["speedup_1"], 1.0) * (folio / 4) ** p["gain_1"]
