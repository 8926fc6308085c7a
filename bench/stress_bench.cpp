// stress_bench: millions of create/free cycles of range communicators, and whether memory
// grows over them (a leak shows as heap growth; limits of live ones are limit_bench's). Every rank:
//
//  native  MPI_Comm_dup(MPI_COMM_SELF) + MPI_Comm_free, --native-cycles times
//  range   rangecomm::Split_Comm of this process's half of the world + Comm_free, --cycles times
//          (a range of two or more members: registered and unregistered in the clash table)
//
// Each variant runs a warm-up of 1% of its cycles first; the heap in use (mallinfo2) is read
// after the warm-up and after the cycles, so growth counts what the cycles leave behind.
//
// Output on rank 0: a table, or CSV rows with --format csv
//   experiment,variant,param,ranks,median_us,min_us,max_us,ratio_vs_native,unit,note
// stress_cycle: microseconds per create+free; stress_growth: heap bytes gained over the cycles
// (0 is the expected figure); median/min/max over ranks; the note gives the cycle count. A
// benchmark: it measures and prints; the exit status is nonzero only for bad arguments.
#include <malloc.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_cli.hpp"
#include "rangecomm/rangecomm.hpp"

namespace {

long heap_bytes() { return static_cast<long>(mallinfo2().uordblks); }

struct Result {
  double us_per_cycle = 0;
  double growth = 0;
};

template <class Cycle>
Result measure(long cycles, Cycle&& cycle) {
  long warmup = std::max(1L, cycles / 100);
  for (long i = 0; i < warmup; ++i) cycle();
  long heap0 = heap_bytes();
  double t0 = MPI_Wtime();
  for (long i = 0; i < cycles; ++i) cycle();
  double t1 = MPI_Wtime();
  return {(t1 - t0) * 1e6 / static_cast<double>(cycles), static_cast<double>(heap_bytes() - heap0)};
}

// Median, min and max of x over ranks, on rank 0.
void over_ranks(double x, int p, double* med, double* lo, double* hi) {
  std::vector<double> all(static_cast<size_t>(p));
  MPI_Gather(&x, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::sort(all.begin(), all.end());
  *med = all[all.size() / 2], *lo = all.front(), *hi = all.back();
}

void fail(const char* what) {
  std::fprintf(stderr, "stress_bench: %s failed\n", what);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  long cycles = 10000000, native_cycles = 2000;
  benchcli::Output out;
  CLI::App app{
      "Create/free cycles of range communicators against MPI_Comm_dup of "
      "MPI_COMM_SELF: microseconds per cycle and heap growth over the cycles.",
      "stress_bench"};
  app.add_option("--cycles", cycles, "range create/free cycles")
      ->check(benchcli::at_least(1))
      ->capture_default_str();
  app.add_option("--native-cycles", native_cycles, "MPI_Comm_dup/free cycles of MPI_COMM_SELF")
      ->check(benchcli::at_least(1))
      ->capture_default_str();
  benchcli::add_output_options(app, &out);
  int exit_code = 0;
  if (!benchcli::parse(app, argc, argv, &exit_code)) return exit_code;
  bool csv = out.format() != benchcli::Format::table;
  int me = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  rangecomm::Comm world;
  if (rangecomm::Create_Comm(MPI_COMM_WORLD, &world) != MPI_SUCCESS) fail("Create_Comm");
  int h = std::max(1, p / 2), first = me < h ? 0 : h, last = me < h ? h - 1 : p - 1;

  if (me == 0 && !csv) std::fprintf(stderr, "stress_bench: %ld native cycles\n", native_cycles);
  Result native = measure(native_cycles, [] {
    MPI_Comm c;
    if (MPI_Comm_dup(MPI_COMM_SELF, &c) != MPI_SUCCESS || MPI_Comm_free(&c) != MPI_SUCCESS)
      fail("MPI_Comm_dup/free");
  });
  if (me == 0 && !csv) std::fprintf(stderr, "stress_bench: %ld range cycles\n", cycles);
  Result range = measure(cycles, [&] {
    rangecomm::Comm c;
    if (rangecomm::Split_Comm(world, first, last, &c) != MPI_SUCCESS ||
        rangecomm::Comm_free(&c) != MPI_SUCCESS)
      fail("Split_Comm/Comm_free");
  });

  double rows[4][3];
  over_ranks(native.us_per_cycle, p, &rows[0][0], &rows[0][1], &rows[0][2]);
  over_ranks(range.us_per_cycle, p, &rows[1][0], &rows[1][1], &rows[1][2]);
  over_ranks(native.growth, p, &rows[2][0], &rows[2][1], &rows[2][2]);
  over_ranks(range.growth, p, &rows[3][0], &rows[3][1], &rows[3][2]);
  if (me == 0) {
    const char* names[4] = {"stress_cycle", "stress_cycle", "stress_growth", "stress_growth"};
    const char* variants[4] = {"native", "range", "native", "range"};
    const char* units[4] = {"us", "us", "bytes", "bytes"};
    long counts[4] = {native_cycles, cycles, native_cycles, cycles};
    // param is the same for both variants of an experiment (the showcase pairs rows by it);
    // the cycle counts go in the note column.
    const char* params[4] = {"per_cycle", "per_cycle", "over_cycles", "over_cycles"};
    std::vector<benchcli::Row> table;
    for (int i = 0; i < 4; ++i) {
      double native_median = rows[i & ~1][0];
      double ratio = native_median != 0 ? rows[i][0] / native_median : 0;
      table.push_back(benchcli::make_row(names[i], variants[i], params[i], p, rows[i][0],
                                         rows[i][1], rows[i][2], ratio, units[i],
                                         std::to_string(counts[i]) + " cycles"));
    }
    nlohmann::json settings{{"cycles", cycles}, {"native_cycles", native_cycles}};
    benchcli::emit("stress_bench", out, table, settings, true, [&] {
      std::printf("%-14s %-8s %-12s %6s %12s %12s %12s %7s %-6s %s\n", "experiment", "variant",
                  "param", "ranks", "median", "min", "max", "ratio", "unit", "note");
      for (const benchcli::Row& r : table)
        std::printf("%-14s %-8s %-12s %6d %12.4f %12.4f %12.4f %7.4f %-6s %s\n",
                    r.experiment.c_str(), r.variant.c_str(), r.param.c_str(), r.ranks, r.median,
                    r.min, r.max, r.ratio, r.unit.c_str(), r.note.c_str());
    });
  }
  rangecomm::Comm_free(&world);
  MPI_Finalize();
  return 0;
}
