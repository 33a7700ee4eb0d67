"""What splitting a large folio costs reclaim, measured on this project's KVM guest (6.18).

Mechanism: :func:`mmcost.swap.paths.madvise_pageout_us` (a folio swapped
out whole by MADV_PAGEOUT) and :func:`~mmcost.swap.paths.madvise_split_pageout_us`
(a partially mapped folio split first: :func:`~mmcost.swap.paths.split_work`,
then its pages' 4K path), on :class:`mmcost.swap.SwapModel` with the
machine profile of the same boot (``kvm_6_18_swapin``'s
``second_vm_profile_b.toml``). Each run pages out the measured region and a
4K region in the same process, so a run's prediction is its own 4K
region's time per page plus the model's difference between the two paths:
what is compared is the folio path against the 4K path, not the VM's drift
between runs.

=======================================  ====  ========================================
rows                                      n    how
=======================================  ====  ========================================
4K reference regions                      89   inputs: each run's baseline
64K and 2M split first                    29   read: the split's per-page and per-folio
                                               costs (``split_us_per_page``,
                                               ``split_us_per_folio``,
                                               :func:`mmcost.swap.model._split_costs`)
16K split first                           15   predicted: the split line at 16K
16K, 64K, 2M whole                        45   predicted: the whole-folio path, which no
                                               row here sets
=======================================  ====  ========================================

Measured: a split costs 0.31 us a page and 1.7 us a folio on this VM (0.57
and 3.1 generic us at its kernel speed, 0.54; the folio's local flush taken
out), far less than the model
charged before (0.5 us a page under the lruvec lock, a guess, plus a
reference check's rmap walk per new folio for a PMD THP only, 0.9 generic
us a page in all): ``remap_page``'s walks run with the anon_vma already
locked. Swapping a folio out whole saves 0.83, 1.21 and 1.50 us a page at
16K, 64K and 2M against the 4K path (the model: 0.91, 1.13, 1.14; at 2M
the model's per-folio part stops falling where the kernel's keeps on).

The band: the model at 200 draws of the priors of the fields the two
paths read (the kernel paths', the machine profile's measured costs),
each relative to its value; the run's own 4K time is not drawn. Its rows
stay out of leave-one-source-out (``in_leave_one_source_out``): a run
predicted from its own 4K region, with priors read off the same runs, is
no source left out, and 60 such rows would shrink the time family's
structural error (0.81 -> 0.55) for nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..swap import SwapModel
from ..swap.constants import PAGE_KB
from ..swap.model import SPLIT_PROFILE
from ..swap.paths import madvise_pageout_us, madvise_split_pageout_us
from ._study import Section, Study, repetition_sd

#: the sizes whose split runs give the split's costs (mmcost.swap.model._split_costs)
READ_KB = (64, 2048)
N_DRAWS = 200


class Kvm618ThpSplit(Study):
    id = "kvm_6_18_thp_split"
    miss = ("the whole 2M folio saves 1.50 us a page against the 4K path where the model saves 1.14: its per-folio "
            "part is the same at 64K and 2M")
    mechanism = SwapModel
    free = ()
    #: each run is predicted from its own 4K region and the split's priors are read off these runs
    in_leave_one_source_out = False

    def runs(self) -> pd.DataFrame:
        """One row per run: variant, folio_kb, split (bool), measured (us a page), reference (the same run's
        4K region, us a page)."""
        d = self.data()
        wide = d.pivot_table(index=["variant", "run"], columns="metric", values="value").reset_index()
        kb = d[d["metric"] == "reclaim_us_per_page"].set_index("run")["folio_kb"]
        wide["folio_kb"] = wide["run"].map(kb).astype(int)
        wide["split"] = wide["variant"].str.endswith("split first")
        return wide.rename(columns={"reclaim_us_per_page": "measured",
                                    "reference_reclaim_us_per_page": "reference"})

    def _model(self, kb: int) -> SwapModel:
        """The source's model on the machine profile of the same boot (source.toml's machine_boot_id)."""
        from .. import datasets

        profile = datasets.path(SPLIT_PROFILE[0]) / SPLIT_PROFILE[1]
        return SwapModel(**{**self._model_fields(), "cpu_model": str(profile), "folio_kb": kb, "swapped_share": 1.0})

    @staticmethod
    def difference(m: SwapModel, kb: int, split: bool) -> float:
        """The model's time a page swapped of ``kb`` folios (whole, or split first) minus its 4K path's."""
        four = madvise_pageout_us(m, PAGE_KB)
        if split:
            return madvise_split_pageout_us(m, kb) / (kb // PAGE_KB - 1) - four
        return madvise_pageout_us(m, kb) / (kb // PAGE_KB) - four

    def _draws(self, kb: int, split: bool, rng) -> np.ndarray:
        """:meth:`difference` at draws of every prior of the model's parameters (the kernel paths', the
        profile's measured costs, the table's), each relative to the parameter's value, within its bounds
        (drawn independently: split_us_per_page and split_us_per_folio, read off one line, are
        anti-correlated, so the split's band is wider than theirs would make it)."""
        m = self._model(kb)
        params = [p for p in m.parameters if p.prior is not None and p.prior.value > 0 and p.value > 0]
        out = []
        for _ in range(N_DRAWS):
            z = rng.standard_normal(len(params))
            over = {p.name: min(max(p.value * (1 + p.prior.width / p.prior.value * x), p.lower), p.upper)
                    for p, x in zip(params, z)}
            out.append(self.difference(m.set(**over), kb, split))
        return np.array(out)

    def held_out(self) -> pd.DataFrame:
        r = self.runs()
        rows = r[~(r["split"] & r["folio_kb"].isin(READ_KB))].sort_values(["split", "folio_kb", "run"])
        rows = rows.reset_index(drop=True)
        rng = np.random.default_rng(8)
        shift = {}
        for kb, split in rows[["folio_kb", "split"]].drop_duplicates().itertuples(index=False):
            q = np.percentile(self._draws(kb, split, rng), [50 * (1 - self.level), 50 * (1 + self.level)])
            shift[kb, split] = (self.difference(self._model(kb), kb, split), *q)
        d = np.array([shift[kb, split] for kb, split in zip(rows["folio_kb"], rows["split"])])
        pred = pd.DataFrame({"best": rows["reference"] + d[:, 0], "lo": rows["reference"] + d[:, 1],
                             "hi": rows["reference"] + d[:, 2]})
        data_rows = rows.assign(metric="reclaim_us_per_page", value=rows["measured"])
        config = [f"{v}, {run}" for v, run in zip(rows["variant"], rows["run"])]
        # a row's sigma: the spread of what is predicted, the run's difference from its own 4K region
        paired = rows.assign(value=rows["measured"] - rows["reference"])
        return self._held_out_frame(data_rows, config, pred, stddev=repetition_sd(paired, ["variant"]))

    def fitted_rows(self):
        d = self.data()
        ref = d[d["metric"] == "reference_reclaim_us_per_page"]
        read = d[(d["metric"] == "reclaim_us_per_page") & d["variant"].isin([f"{kb}K split first" for kb in READ_KB])]
        return [(ref, "inputs: each run's 4K baseline"),
                (read, "read: the split's costs a page and a folio (mmcost.swap.model._split_costs)")]

    def table(self) -> pd.DataFrame:
        """Per variant: the medians of the measured and the model's difference from the 4K path, us a page."""
        r = self.runs()
        rows = []
        for (variant, kb, split), part in r.groupby(["variant", "folio_kb", "split"], sort=False):
            rows.append({"variant": variant, "folio_kb": kb, "split": split,
                         "measured": float((part["measured"] - part["reference"]).median()),
                         "model": self.difference(self._model(kb), kb, split),
                         "read": bool(split and kb in READ_KB)})
        return pd.DataFrame(rows).sort_values(["split", "folio_kb"]).reset_index(drop=True)

    def sections(self) -> list[Section]:
        from ..metrics import folio_label

        lines = [f"{'MADV_PAGEOUT, us a page vs 4K':<32} {'measured':>9} {'model':>7}"]
        for x in self.table().itertuples():
            what = f"{folio_label(x.folio_kb)} {'split first' if x.split else 'whole'}"
            lines.append(f"{what:<32} {x.measured:>+9.2f} {x.model:>+7.2f}" + ("  (read)" if x.read else ""))
        lines.append("medians of 14-15 runs, each against its own 4K region; 'read': the split's costs")
        return [Section("large folios paged out whole or split first, against 4K (this VM, 6.18)",
                        "\n".join(lines))]


study = Kvm618ThpSplit()
