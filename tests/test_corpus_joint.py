"""The joint fit, leave-one-source-out and the structural error, on synthetic sources with a known truth."""

import math

import numpy as np
import pandas as pd
import pytest

from mmcost.corpus import discrepancy
from mmcost.corpus.joint import Link, Member, fit_joint, leave_one_out
from mmcost.model import Parameter, Prior
from mmcost.usl import UslModel

METRIC = "transactions_per_s"
TRUE = {"sigma": 0.04, "kappa": 3e-4, "lam": 900.0}
N = np.array([1, 2, 4, 8, 16, 24, 32, 48])


def _model():
    return UslModel(metric=METRIC, n_column="cpus")


def _rows(rng, lam, rel_noise, structural=0.0):
    """One source's USL curve at TRUE's sigma and kappa, ``lam``, times a
    per-row structural error exp(N(0, structural)), plus measurement noise."""
    x = lam * N / (1 + TRUE["sigma"] * (N - 1) + TRUE["kappa"] * N * (N - 1))
    x = x * np.exp(rng.normal(0, structural, len(N))) * (1 + rng.normal(0, rel_noise, len(N)))
    return pd.DataFrame({"metric": METRIC, "cpus": N, "value": x, "stddev": rel_noise * np.abs(x)})


def _globals(factor_width=None):
    out = {"sigma": Parameter("sigma", 0.1, "1", 0.0, 1.0), "kappa": Parameter("kappa", 1e-3, "1", 0.0, 1.0),
           "lam": Parameter("lam", 500.0, "1/s", 1e-6, 1e6, prior=Prior(1000.0, 500.0, "test: a vague prior"))}
    return out


def test_joint_fit_recovers_shared_costs_under_per_source_nuisance():
    """Eight sources share sigma and kappa; each runs at its own speed
    (lam x exp(u), u ~ N(0, 0.3), the machine factor): the joint fit finds the
    shared pair within 3 standard errors, and a fit of any one source alone
    (8 rows) is far less certain."""
    rng = np.random.default_rng(7)
    params = _globals()
    members = []
    for k in range(8):
        u = rng.normal(0, 0.3)
        f = f"log_machine@m{k}"
        params[f] = Parameter(f, 0.0, "log", -3, 3, prior=Prior(0.0, 0.3, "test: the machines' spread"))
        members.append(Member(f"s{k}", _model(), _rows(rng, TRUE["lam"] * math.exp(u), 0.01),
                              (Link("sigma", "sigma"), Link("kappa", "kappa"), Link("lam", "lam", f))))
    joint = fit_joint(members, params)
    for name in ("sigma", "kappa"):
        assert abs(joint.params[name] - TRUE[name]) < 3 * joint.stderr[name], (name, joint.params[name])
    alone = _model().fit(members[0].rows)
    assert joint.stderr["sigma"] < 0.7 * alone.stderr["sigma"]


def test_a_global_used_by_the_left_out_source_only_is_taken_at_its_prior():
    rng = np.random.default_rng(1)
    params = _globals()
    params["log_machine@solo"] = Parameter("log_machine@solo", 0.0, "log", -3, 3, prior=Prior(0.0, 0.3, "test"))
    a = Member("a", _model(), _rows(rng, 900.0, 0.01), (Link("sigma", "sigma"), Link("kappa", "kappa"),
                                                         Link("lam", "lam")))
    b = Member("b", _model(), _rows(rng, 900.0 * math.exp(0.5), 0.01),
               (Link("sigma", "sigma"), Link("kappa", "kappa"), Link("lam", "lam", "log_machine@solo")))
    joint = fit_joint([a], params)
    fit = joint.transplant(__import__("mmcost.fit", fromlist=["FitResult"]).FitResult.of_priors(b.model),
                           b.links, params)
    # lam's spread is the factor's prior (0.3 in log) on top of a's fitted lam
    sd_log = math.sqrt(fit.covariance.loc["lam", "lam"]) / fit.params["lam"]
    assert sd_log == pytest.approx(math.hypot(0.3, joint.stderr["lam"] / joint.params["lam"]), rel=1e-6)


def test_tau_estimate_recovers_a_known_structural_error_and_bands_reach_nominal_coverage():
    """Twelve sources of one USL with a structural error of 0.2 in log per row
    that no parameter explains: leave-one-source-out residuals give tau within
    30% of 0.2, the fit's own bands cover far less than 90%, and the bands
    widened by the tau of the other sources (nested) cover 80-97%."""
    rng = np.random.default_rng(3)
    params = _globals()
    members = [Member(f"s{k}", _model(), _rows(rng, TRUE["lam"], 0.01, structural=0.2),
                      (Link("sigma", "sigma"), Link("kappa", "kappa"), Link("lam", "lam"))) for k in range(12)]
    rows = leave_one_out(members, params, n_samples=100)
    fam = discrepancy.family(METRIC)
    assert fam == "throughput"
    r, s = discrepancy.residual_space(fam, rows["published"], rows["predicted"], rows["lo"], rows["hi"], 0.9)
    tau = discrepancy.estimate_tau(r, s)
    assert tau == pytest.approx(0.2, rel=0.3)
    assert discrepancy.coverage(r, s, 0.0, 0.9) < 0.6
    inside = []
    for src in rows["source"].unique():
        mine = (rows["source"] == src).to_numpy()
        t = discrepancy.estimate_tau(r[~mine], s[~mine])
        lo, hi = discrepancy.widen(fam, rows["predicted"][mine], rows["lo"][mine], rows["hi"][mine], 0.9, t)
        inside += list((rows["published"][mine] >= lo) & (rows["published"][mine] <= hi))
    assert 0.8 <= np.mean(inside) <= 0.97


def test_estimate_tau_is_zero_when_the_own_bands_explain_the_spread():
    rng = np.random.default_rng(0)
    s = rng.uniform(0.1, 0.3, 2000)
    r = rng.normal(0, s)
    assert discrepancy.estimate_tau(r, s) < 0.03
    assert math.isnan(discrepancy.estimate_tau([], []))


def test_estimate_tau_matches_the_closed_form_with_equal_own_widths():
    """With one s for every row the ML tau^2 is mean(r^2) - s^2 (the marginal likelihood's stationary point)."""
    rng = np.random.default_rng(2)
    r = rng.normal(0, 0.5, 500)
    s = np.full(500, 0.2)
    assert discrepancy.estimate_tau(r, s) == pytest.approx(math.sqrt(np.mean(r**2) - 0.04), rel=1e-4)


def test_widen_adds_in_quadrature_per_side():
    lo, hi = discrepancy.widen("change", [10.0], [7.0], [16.0], 0.9, 0.0)
    assert (lo[0], hi[0]) == (7.0, 16.0)
    z = 1.6448536269514722
    lo, hi = discrepancy.widen("change", [10.0], [10 - 3 * z], [10 + 4 * z], 0.9, 4.0)
    assert lo[0] == pytest.approx(10 - 5 * z) and hi[0] == pytest.approx(10 + z * math.hypot(4, 4))
    lo, hi = discrepancy.widen("time", [2.0], [2.0], [2.0], 0.9, math.log(2) / z)
    assert lo[0] == pytest.approx(1.0) and hi[0] == pytest.approx(4.0)


def test_families():
    assert discrepancy.family("usemem_throughput_kib_s_change_pct") == "change"
    assert discrepancy.family("swapout_kib_s") == "throughput"
    assert discrepancy.family("sys_time_s") == "time"
    assert discrepancy.family("tlb_shootdowns_per_folio") == "count"
    assert discrepancy.family("dtlb_load_miss_count") == "count"


def test_member_errors_name_the_field():
    with pytest.raises(ValueError, match="nonexistent"):
        Member("x", _model(), _rows(np.random.default_rng(0), 900.0, 0.01), (Link("nonexistent", "sigma"),))
    with pytest.raises(ValueError, match="undefined global"):
        fit_joint([Member("x", _model(), _rows(np.random.default_rng(0), 900.0, 0.01), (Link("sigma", "nope"),))],
                  _globals())
    with pytest.raises(ValueError, match="no members"):
        fit_joint([], _globals())


def test_a_widened_change_never_falls_below_minus_100_percent():
    lo, hi = discrepancy.widen("change", [-91.4], [-93.0], [-89.0], 0.9, 7.0)
    assert lo[0] == -100.0 and hi[0] > -89.0


def test_a_family_seen_in_too_few_sources_borrows_the_pooled_log_space_tau():
    """Residuals of 0.5 in log in two sources of family 'other' cannot give a
    tau of their own: each row's nested tau is the pooled one of every log
    family of the other sources (here 'time', residuals 0.3 with no own spread)."""
    import pandas as pd

    from mmcost.corpus import loso

    rows = pd.DataFrame({
        "source": ["a", "b"] + [f"t{k}" for k in range(6)],
        "family": ["other", "other"] + ["time"] * 6,
        "residual": [0.5, -0.5] + [0.3, -0.3] * 3,
        "own_sd": [0.0] * 8,
    })
    tau = loso.nested_tau(rows)
    assert tau[0] == pytest.approx(math.sqrt((0.25 + 6 * 0.09) / 7), rel=1e-3)  # b's and the times' rows
    assert tau[2] == pytest.approx(0.3, rel=1e-3)  # 'time' keeps its own: 5 other sources


def test_a_share_s_widened_band_stops_at_the_whole():
    """A large-folio share of 90% [80, 99] widened by a log-space error of 0.5 would reach 90 x e^(1.645 x
    0.5) = 204%; it stops at 100. A throughput with the same numbers is not capped, nor is a change."""
    import pandas as pd

    from mmcost import metrics

    assert metrics.ceiling("large_fault_share_pct") == 100.0
    assert metrics.ceiling("lock_utilization") == 1.0
    assert metrics.ceiling("kswapd_reclaim_share_pct") == 100.0
    assert metrics.ceiling("swapout_kib_s") is None and metrics.ceiling("large_fault_share_pct_change_pct") is None
    frame = pd.DataFrame({"metric": ["large_fault_share_pct", "swapout_kib_s"], "best": [90.0, 90.0],
                          "lo": [80.0, 80.0], "hi": [99.0, 99.0]})
    out = discrepancy.widen_frame(frame, 0.9, {"other": 0.5, "throughput": 0.5})
    assert out.loc[0, "hi"] == 100.0
    assert out.loc[1, "hi"] > 200.0
    assert out.loc[0, "lo"] == pytest.approx(out.loc[1, "lo"])  # the lower side is the same widening
