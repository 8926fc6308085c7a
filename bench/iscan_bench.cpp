// iscan_bench: the nonblocking prefix sum MPI_Iscan on a native communicator against
// rangecomm::Iscan on a range of the same processes, for n doubles per process (paper
// "Lightweight MPI Communicators with Applications to Perfectly Balanced Quicksort", Fig. 4).
//
// native: MPI_Iscan + MPI_Wait on a duplicate of MPI_COMM_WORLD.
// range:  rangecomm::Iscan + rangecomm::Wait on the range of all processes, one level below the
//         range attached to MPI_COMM_WORLD (as a program would split it).
// One sample = mean time of --iters start+wait pairs after a barrier, max over ranks; --rounds
// samples per variant and size, native and range alternating, after one untimed call of each
// whose results are compared element by element (sum of doubles that are small integers, so
// both must agree exactly).
//
// Output on rank 0: a table, or CSV rows (--format csv, --csv FILE)
//   experiment,variant,param,ranks,median_us,min_us,max_us,ratio_vs_native
// with experiment = iscan, param = doubles per process. Benchmarks measure: the exit status is
// nonzero only for bad arguments or a wrong prefix sum.

#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "bench_cli.hpp"
#include "rangecomm/rangecomm.hpp"

namespace {

struct Options {
  std::vector<long> sizes = {1, 8, 64, 512, 4096, 32768, 262144};  // doubles per process
  int rounds = 7;
  int iters = 0;  // 0: chosen per size
  benchcli::Output out;
};

void add_options(CLI::App& app, Options* o) {
  using benchcli::at_least;
  app.add_option("--sizes", o->sizes, "doubles per process")
      ->delimiter(',')
      ->check(at_least(1, 1LL << 26))
      ->capture_default_str();
  app.add_option("--rounds", o->rounds, "samples per variant and size, alternating")
      ->check(at_least(1, 100000000))
      ->capture_default_str();
  app.add_option("--iters", o->iters, "Iscan+Wait pairs per sample (0: 100 for small, down to 3)")
      ->check(at_least(0, 100000000))
      ->capture_default_str();
  benchcli::add_output_options(app, &o->out);
  app.footer(
      "Rows: param = doubles per process; times per Iscan+Wait, max over ranks;\n"
      "ratio_vs_native = median / median of native.");
}

int rank_ = 0, size_ = 1;
benchcli::Failures failures("iscan_bench", rangecomm::Error_string);

void check(int rc, const char* what) { failures.check(rc, what); }

struct Stats {
  double median = 0, min = 0, max = 0;
};

Stats stats_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return {v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]), v.front(), v.back()};
}

// Mean time of `iters` calls of f after a barrier, max over ranks.
template <class F>
double sample(F f, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) f();
  double mine = (MPI_Wtime() - t0) * 1e6 / iters, worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

struct Row {
  long n;
  Stats native, range;
};

Row bench_size(long n, const Options& o, const rangecomm::Comm& range, MPI_Comm native) {
  std::vector<double> in(n), out_native(n), out_range(n);
  for (long i = 0; i < n; ++i) in[i] = static_cast<double>((rank_ + 1) * (i % 7 + 1));
  const int count = static_cast<int>(n);
  auto run_native = [&] {
    MPI_Request req;
    check(MPI_Iscan(in.data(), out_native.data(), count, MPI_DOUBLE, MPI_SUM, native, &req),
          "MPI_Iscan");
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  };
  int bad = 0;
  auto run_range = [&] {
    rangecomm::Request req;
    bad |= rangecomm::Iscan(in.data(), out_range.data(), count, MPI_DOUBLE, MPI_SUM, range, &req);
    bad |= rangecomm::Wait(&req, MPI_STATUS_IGNORE);
  };
  // Untimed: both agree exactly (sums of small integers are exact in double).
  run_native();
  run_range();
  if (!std::equal(out_native.begin(), out_native.end(), out_range.begin())) {
    std::fprintf(stderr, "iscan_bench: rank %d: range and native prefix sums differ (n %ld)\n",
                 rank_, n);
    failures.add();
  }
  int iters = o.iters ? o.iters : static_cast<int>(std::clamp(400000L / (n * 8 + 4000), 3L, 100L));
  std::vector<double> tn, tr;
  for (int r = 0; r < o.rounds; ++r) {
    if (r % 2 == 0) {
      tn.push_back(sample(run_native, iters));
      tr.push_back(sample(run_range, iters));
    } else {
      tr.push_back(sample(run_range, iters));
      tn.push_back(sample(run_native, iters));
    }
  }
  check(bad, "rangecomm::Iscan/Wait");
  return {n, stats_of(tn), stats_of(tr)};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  Options o;
  CLI::App app{
      "MPI_Iscan on a native communicator vs rangecomm::Iscan on a range of the same "
      "processes, n doubles per process, MPI_SUM (paper Fig. 4).",
      "iscan_bench"};
  add_options(app, &o);
  int exit_code = 0;
  if (!benchcli::parse(app, argc, argv, &exit_code)) return exit_code;
  rangecomm::Comm world, range;
  check(rangecomm::Create_Comm(MPI_COMM_WORLD, &world), "Create_Comm");
  check(rangecomm::Split_Comm(world, 0, size_ - 1, &range), "Split_Comm");
  MPI_Comm native;
  MPI_Comm_dup(MPI_COMM_WORLD, &native);

  std::vector<Row> rows;
  for (long n : o.sizes) {
    if (rank_ == 0) std::fprintf(stderr, "iscan_bench: %ld doubles per process\n", n);
    rows.push_back(bench_size(n, o, range, native));
  }

  const int errors = failures.total();
  if (rank_ == 0) {
    std::vector<benchcli::Row> out;
    for (const Row& r : rows) {
      std::string n = std::to_string(r.n);
      out.push_back(benchcli::make_row("iscan", "native", n, size_, r.native.median, r.native.min,
                                       r.native.max, 1.0));
      out.push_back(benchcli::make_row("iscan", "range", n, size_, r.range.median, r.range.min,
                                       r.range.max, r.range.median / r.native.median));
    }
    nlohmann::json settings{{"sizes", o.sizes}, {"rounds", o.rounds}, {"iters", o.iters}};
    benchcli::emit("iscan_bench", o.out, out, settings, false, [&] {
      std::printf("iscan_bench: %d ranks; us per Iscan+Wait (MPI_SUM of doubles), max over ranks\n",
                  size_);
      std::printf("%10s %12s %12s %12s %12s %12s %12s %12s\n", "doubles", "native_med",
                  "native_min", "native_max", "range_med", "range_min", "range_max",
                  "range/native");
      for (const Row& r : rows)
        std::printf("%10ld %12.4g %12.4g %12.4g %12.4g %12.4g %12.4g %12.3f\n", r.n,
                    r.native.median, r.native.min, r.native.max, r.range.median, r.range.min,
                    r.range.max, r.range.median / r.native.median);
    });
    if (errors) std::fprintf(stderr, "iscan_bench: %d error(s), see above\n", errors);
    std::fflush(stdout);
  }
  const int status = errors ? 1 : 0;
  MPI_Comm_free(&native);
  range = rangecomm::Comm();
  world = rangecomm::Comm();
  MPI_Finalize();
  return status;
}
