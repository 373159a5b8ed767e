#!/usr/bin/python3
"""Reference values for internal/stats tests, computed independently of the
Go code with SciPy (Debian's python3-scipy 1.10.1) and plain Python.

Run: /usr/bin/python3 internal/stats/testdata/reference.py
The Go tests paste the numbers printed here; the script is kept so anyone can
see where each one came from and recompute it. Nothing in CI runs it.
"""
import itertools
import math
from statistics import mean, stdev, variance

import numpy as np
from scipy import stats

print("scipy", __import__("scipy").__version__)

# --- Student's sleep data (Cushny & Peebles), R: t.test(extra ~ group, data = sleep, paired = TRUE)
g1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
g2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
d = [b - a for a, b in zip(g1, g2)]
r = stats.ttest_rel(g2, g1)
print("sleep paired t", r.statistic, r.pvalue)
ci = stats.t.interval(0.95, len(d) - 1, loc=mean(d), scale=stdev(d) / math.sqrt(len(d)))
print("sleep t CI", ci, "as change", [math.expm1(x) for x in ci], "center", math.expm1(mean(d)))
w = stats.wilcoxon(g1, g2, zero_method="wilcox", correction=True, method="approx")
print("sleep wilcoxon approx", w.statistic, w.pvalue)

# --- Hollander & Wolfe depression data, R: wilcox.test(x, y, paired = TRUE)
x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]
w = stats.wilcoxon(x, y, method="exact")
print("depression wilcoxon exact two-sided", w.statistic, w.pvalue)

# --- exact signed-rank, 14 differences without ties
dd = [0.31, -0.12, 0.55, 0.08, -0.41, 0.27, 0.66, 0.19, -0.05, 0.72, 0.38, -0.23, 0.49, 0.14]
w = stats.wilcoxon(dd, method="exact")
vplus = sum(rk for rk, v in zip(stats.rankdata([abs(v) for v in dd]), dd) if v > 0)
print("signrank14 exact V+", vplus, "p", w.pvalue)
# normal approximation with ties, 60 differences
rng = np.random.default_rng(7)
big = list(np.round(rng.normal(0.1, 1, 60), 1))
w = stats.wilcoxon(big, zero_method="wilcox", correction=True, method="approx")
vplus = sum(rk for rk, v in zip(stats.rankdata([abs(v) for v in big if v != 0]), [v for v in big if v != 0]) if v > 0)
print("signrank60", [float(v) for v in big])
print("signrank60 approx V+", vplus, "p", w.pvalue)


def tci(d, conf=0.95):
    n = len(d)
    m, se = mean(d), stdev(d) / math.sqrt(n)
    q = stats.t.ppf(1 - (1 - conf) / 2, n - 1)
    return math.expm1(m - q * se), math.expm1(m + q * se)


print("\n# paired")
# hull: 6 rounds; the median interval at 95 % is [min, max] (coverage 1 - 2/64)
hull = [-0.02, 0.01, 0.012, 0.015, 0.018, 0.06]
r = stats.ttest_1samp(hull, 0)
print("hull6 t CI", tci(hull), "p", r.pvalue, "change", math.expm1(mean(hull)), "sd", stdev(hull))
five = [0.01, 0.02, 0.03, 0.04, 0.05]
r = stats.ttest_1samp(five, 0)
print("five t CI", tci(five), "p", r.pvalue, "t", r.statistic)
lo = [math.log(r) for r in (101 / 100, 99 / 100, 102 / 100, 98 / 100)]
r = stats.ttest_1samp(lo, 0)
print("leftout change", math.expm1(mean(lo)), "CI", tci(lo), "p", r.pvalue)
dis = [0.05, 0.051, 0.049, 0.052, 0.048, -0.001]
r = stats.ttest_1samp(dis, 0)
print("disagree t p", r.pvalue, "wilcoxon", stats.wilcoxon(dis, method="exact").pvalue)


print("\n# unpaired")


def u_null_cdf(n1, n2):
    """Exact null distribution of U (no ties) by enumerating which ranks the
    first sample takes: U = rank sum - n1(n1+1)/2."""
    counts = {}
    total = 0
    for comb in itertools.combinations(range(1, n1 + n2 + 1), n1):
        u = sum(comb) - n1 * (n1 + 1) // 2
        counts[u] = counts.get(u, 0) + 1
        total += 1
    cdf, acc = {}, 0
    for u in range(n1 * n2 + 1):
        acc += counts.get(u, 0)
        cdf[u] = acc / total
    return cdf


def moses(base, cand, conf=0.95):
    alpha = 1 - conf
    cdf = u_null_cdf(len(base), len(cand))
    us = [u for u in cdf if cdf[u] <= alpha / 2]
    if not us:
        return None
    k = max(us) + 1
    r = sorted(c / b for b in base for c in cand)
    return r[k - 1] - 1, r[len(r) - k] - 1, 1 - 2 * cdf[k - 1], float(np.median(r)) - 1


ub = [102.1, 99.8, 101.5, 100.2, 98.9, 100.7]
uc = [97.2, 98.5, 96.9, 99.1, 97.8, 98.2, 96.5]
r = stats.mannwhitneyu(ub, uc, method="exact", alternative="two-sided")
print("unpaired6x7 U", r.statistic, "p", r.pvalue, "change of medians", float(np.median(uc)) / float(np.median(ub)) - 1)
print("unpaired6x7 moses lo, hi, level, HL", moses(ub, uc))
# with ties: the normal approximation is not used below 25; scipy exact does not
# handle ties, so use its asymptotic p-value with a 30-value sample.
tb = [float(x) for x in [10, 11, 11, 12, 12, 12, 13, 13, 14, 15] * 3]
tc = [float(x) for x in [11, 12, 12, 13, 13, 13, 14, 14, 15, 16] * 3]
r = stats.mannwhitneyu(tb, tc, method="asymptotic", use_continuity=True, alternative="two-sided")
print("ties30 U", r.statistic, "p", r.pvalue, "medians", np.median(tb), np.median(tc))

print("\n# windows")


def window(before, during, skip_b, skip_d, b=0, conf=0.95):
    before, during = before[skip_b:], during[skip_d:]
    if b == 0:
        b = math.ceil(math.sqrt(min(len(before), len(during))))

    def batches(xs):
        k = len(xs) // b
        xs = xs[len(xs) - k * b:]
        return [mean(xs[i * b:(i + 1) * b]) for i in range(k)]

    mb, md = batches(before), batches(during)
    Mb, Md = mean(mb), mean(md)
    ab = variance(mb) / (len(mb) * Mb ** 2)
    ad = variance(md) / (len(md) * Md ** 2)
    se = math.sqrt(ab + ad)
    df = (ab + ad) ** 2 / (ab ** 2 / (len(mb) - 1) + ad ** 2 / (len(md) - 1))
    L = math.log(Md / Mb)
    num = den = 0.0
    for xs in (mb, md):
        m = mean(xs)
        den += sum((x - m) ** 2 for x in xs)
        num += sum((xs[i] - m) * (xs[i - 1] - m) for i in range(1, len(xs)))
    q = stats.t.ppf(1 - (1 - conf) / 2, df)
    p = 2 * stats.t.sf(abs(L / se), df)
    return dict(b=b, kb=len(mb), kd=len(md), base=Mb, cand=Md, change=math.expm1(L),
                lo=math.expm1(L - q * se), hi=math.expm1(L + q * se), se=se, df=df, p=p, lag1=num / den)


print("hand", window([99, 99, 101, 101], [74, 74, 76, 76], 0, 0, b=2))
wb = [50, 60, 70, 80, 1021, 1003, 998, 1010, 987, 1005, 1012, 995, 1001, 990, 1008, 1003, 997, 1015, 992, 1006]
wd = [900, 820, 790, 760, 742, 781, 755, 770, 748, 766, 759, 772, 740, 785, 751, 763, 777, 744, 769, 758,
      761, 773, 749, 780, 756, 764, 771, 746, 762, 768]
print("skip", window(wb, wd, 4, 3))
print("ramp", window([1000.0 + i for i in range(64)], [800.0 + i for i in range(64)], 0, 0))

print("\n# rounds to detect")


def formula_n(k, conf=0.95, power=0.8):
    """Smallest n >= 2 with n >= ((t(1-a/2,n-1) + t(power,n-1)) k)^2, k = sd/delta."""
    a = 1 - conf
    n = 2
    while n < ((stats.t.ppf(1 - a / 2, n - 1) + stats.t.ppf(power, n - 1)) * k) ** 2:
        n += 1
    return n


def exact_n(dz, conf=0.95, power=0.8):
    """Smallest n whose two-sided paired t-test has the power, from the noncentral t."""
    a = 1 - conf
    n = 2
    while True:
        df, nc = n - 1, dz * math.sqrt(n)
        q = stats.t.ppf(1 - a / 2, df)
        pw = stats.nct.sf(q, df, nc) + stats.nct.cdf(-q, df, nc)
        if pw >= power:
            return n
        n += 1


for dz in (0.2, 0.5, 0.8, 1.0, 1.5):
    print("dz", dz, "formula", formula_n(1 / dz), "exact", exact_n(dz))
print("dz 0.5 conf .99 power .9: formula", formula_n(2, 0.99, 0.9), "exact", exact_n(0.5, 0.99, 0.9))

aa = [0.012, -0.008, 0.003, -0.015, 0.006, 0.010, -0.004, -0.011, 0.009, 0.001, -0.002, 0.005]
sd = stdev(aa)
print("aa sd", sd, "mean", mean(aa), "p", stats.ttest_1samp(aa, 0).pvalue,
      "n2", formula_n(sd / math.log(1.02)), "n5", formula_n(sd / math.log(1.05)))
d2 = math.log(1.02)
print("5% at dz(2%)=0.5", formula_n((d2 / 0.5) / math.log(1.05)),
      "-2% at dz(+2%)=0.2", formula_n((d2 / 0.2) / abs(math.log(0.98))),
      "sd 0.01:", formula_n(0.01 / d2), formula_n(0.01 / math.log(1.05)))

print("\n# unpaired, 60+60 (normal approximation of the Moses order)")


def exact_moses_k(n1, n2, alpha=0.05):
    """k of the Moses interval from the exact U null distribution, by the
    recurrence c(m, n, u) = c(m-1, n, u-n) + c(m, n-1, u) on counts."""
    N = n1 * n2
    cur = [[1] + [0] * N for _ in range(n2 + 1)]
    for m in range(1, n1 + 1):
        new = [[1] + [0] * N]
        for n in range(1, n2 + 1):
            row = [0] * (N + 1)
            for u in range(N + 1):
                row[u] = new[n - 1][u] + (cur[n][u - n] if u >= n else 0)
            new.append(row)
        cur = new
    tot, acc = math.comb(n1 + n2, n1), 0
    for u in range(N + 1):
        # the first u with P(U <= u) > alpha/2: k - 1 = u - 1
        if (acc + cur[n2][u]) / tot > alpha / 2:
            return u, 1 - 2 * acc / tot
        acc += cur[n2][u]


b60 = [100 + ((i * 37) % 61) / 10 for i in range(60)]
c60 = [98.5 + ((i * 23) % 59) / 10 + 0.01 for i in range(60)]
k, level = exact_moses_k(60, 60)
r = sorted(c / b for b in b60 for c in c60)
res = stats.mannwhitneyu(b60, c60, method="asymptotic", use_continuity=True, alternative="two-sided")
print("60+60 k", k, "level", level, "lo", r[k - 1] - 1, "hi", r[len(r) - k] - 1, "U", res.statistic, "p", res.pvalue,
      "change", float(np.median(c60)) / float(np.median(b60)) - 1)
