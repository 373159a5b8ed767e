"""pgscale's pytest-benchmark fixture: total, which a second commit
slows (work.py.slow), and join, which it leaves alone."""


def total(xs):
    s = 0
    for x in xs:
        s += x
    return s


def join(parts):
    return ",".join(parts)
