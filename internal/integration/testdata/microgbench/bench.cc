// pgscale's Google Benchmark fixture: BM_Sum, which a second commit
// slows, and BM_Copy, which it leaves alone.
#include <benchmark/benchmark.h>

#include <numeric>

#include "work.h"

static void BM_Sum(benchmark::State& state) {
  std::vector<long> v(state.range(0));
  std::iota(v.begin(), v.end(), 0);
  for (auto _ : state) benchmark::DoNotOptimize(sum(v));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Sum)->Arg(1000)->Arg(10000);

static void BM_Copy(benchmark::State& state) {
  std::vector<char> src(8 << 10, 'x'), dst(8 << 10);
  for (auto _ : state) {
    copy(dst.data(), src.data(), src.size());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * src.size());
}
BENCHMARK(BM_Copy);

BENCHMARK_MAIN();
