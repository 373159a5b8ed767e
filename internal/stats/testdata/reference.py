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
