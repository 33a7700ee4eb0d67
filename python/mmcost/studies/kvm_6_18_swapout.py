"""This project's swap-out matrix, measured with ``mmcost measure swapout`` on a 2-vCPU KVM guest, 6.18.

Mechanism: :class:`mmcost.swap.SwapModel` with the source's defaults
(``[model]``: generic x86 costs, KVM guest, 2 vCPUs, v6.18); the rows carry
each run's configuration (folio size, processes, memcg limit, compressor)
and its measured large-folio share.

Free: the per-folio reclaim cost and one core's write bandwidth, fitted to
one corner of the matrix only: one process, the 256 MiB memcg, lzo-rle.
The per-page reclaim cost stays at its prior: per page like the zeroing at
the write bandwidth, these rows cannot tell the two apart.
Held out: every other configuration (two processes, the 512 MiB memcg,
lz4), the throughput and the TLB shootdowns per swapped page, via
:func:`mmcost.measure.verify`.
"""

from __future__ import annotations

import warnings

import pandas as pd

from ..fit import PoorFitWarning
from ..measure.verify import model_rows, verify
from ..swap import SwapModel
from ._study import Section, Study

FIT_QUERY = "processes == 1 and memcg_mb == 256 and compressor == 'lzo-rle'"


class Kvm618Swapout(Study):
    id = "kvm_6_18_swapout"
    mechanism = SwapModel
    free = ("reclaim_us_per_folio", "core_write_gb_s", "compress_us_per_page")

    def rows(self) -> pd.DataFrame:
        return model_rows(self.data())

    def fit_rows(self) -> pd.DataFrame:
        r = self.rows().query(FIT_QUERY)
        return r[r["metric"] == "usemem_throughput_kib_s"].reset_index(drop=True)

    def _verify(self) -> dict:
        if getattr(self, "_verified", None) is None:
            with warnings.catch_warnings():  # a misfit is kept in fit.warnings and printed in the report
                warnings.simplefilter("ignore", PoorFitWarning)
                self._verified = verify(self.data(), FIT_QUERY, free=self.free, model=self.model(), n_samples=60,
                                        seed=3)
        return self._verified

    def fit(self):
        return self._verify()["fit"]

    def held_out(self) -> pd.DataFrame:
        t = self._verify()["table"]
        config = [f"{int(r.folio_kb)}K, {int(r.processes)} proc, {int(r.memcg_mb)}M, {r.compressor}"
                  for r in t.itertuples()]
        out = pd.DataFrame({"metric": t["metric"], "configuration": config, "published": t["measured"],
                            "predicted": t["best"], "lo": t["lo"], "hi": t["hi"]})
        out["error"] = out["predicted"] - out["published"]
        out["stddev"] = t["sd"].to_numpy(float)  # the configuration's repetitions
        return out

    def sections(self) -> list[Section]:
        v = self._verify()
        return [Section.of_fit("swap model fitted to one corner of the matrix (1 process, 256M, lzo-rle)", v["fit"]),
                Section("every other configuration predicted (mmcost measure verify)", v["text"], v["figure"],
                        "kvm_6_18_swapout_verify.png")]


study = Kvm618Swapout()
