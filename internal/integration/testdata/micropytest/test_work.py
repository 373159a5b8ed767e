import work


def test_total(benchmark):
    xs = list(range(2000))
    assert benchmark(work.total, xs) == sum(xs)


def test_join(benchmark):
    parts = [str(i) for i in range(2000)]
    assert benchmark(work.join, parts).count(",") == 1999
