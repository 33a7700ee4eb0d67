"""Ryan Roberts' "Swap-out mTHP without splitting" v4: the v5 setup, one series earlier.

Everything as :mod:`.roberts_mthp_swapout_v5` (seed 000's costs, nothing
fitted here, the 8-vCPU Altra VM, ``swap_whole_mthp`` as the series), on the
kernel the rows name (v6.6: before v6.8's batched split flush, so a split
64K folio flushes once per PTE). The rows are checked against the v4
cover letter (<20240311150058.1122862-1-ryan.roberts@arm.com>).

=====================================  ====  =========================================
rows                                    n    how
=====================================  ====  =========================================
4K, baseline (0% by definition)          1   fitted: the reference of every change
64K and 2M baseline, all of the series   5   predicted from seed 000's fit
not expressible                          0
=====================================  ====  =========================================

Known miss: as v5 (the 8-CPU guest's 4K path is predicted too cheap: 2M
and whole 64K gains about twice the measured).
"""

from __future__ import annotations

from .roberts_mthp_swapout_v5 import RobertsMthpSwapoutV5


class RobertsMthpSwapoutV4(RobertsMthpSwapoutV5):
    id = "roberts_mthp_swapout_v4"
    series = "swap-out-mthp-v4"


study = RobertsMthpSwapoutV4()
