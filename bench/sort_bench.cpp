// sort_bench: Janus Quicksort on range communicators versus the same code on native MPI
// communicators, and versus two baselines (paper "Lightweight MPI Communicators with
// Applications to Perfectly Balanced Quicksort", Fig. 8). On MPI_COMM_WORLD, for each n/p:
//
//   jquick/range         rangecomm::jquick_sort, subgroups by Split_Comm (local)
//   jquick/create_group  the same code, subgroups by MPI_Comm_create_group
//   jquick/split         the same code, subgroups by two MPI_Comm_split calls per level
//   samplesort/native    sample sort with one MPI_Alltoallv (not balanced)
//   hypercube/range      hypercube quicksort on range communicators (power-of-two p only)
//   kadis/range          KaDiS's JanusSort on RBC ranges (only when built with -Dkadis)
//   kadis/native         KaDiS's JanusSort on MPI_Comm_create_group subgroups (-Dkadis)
//
// Input: n/p uniform random doubles per rank, new for every repetition, the same for every
// algorithm within a repetition. Algorithms run interleaved (the order rotates every
// repetition) so that drifting machine load hits all alike. A sample is the time from a
// barrier to the end of the sort, maximum over ranks. For jquick also the time spent creating
// and freeing communicators (setup included), maximum over ranks.
//
// Output on rank 0: a table, or CSV rows with the columns
//   algorithm, backend, p, n_per_p, reps, median_s, min_s, max_s, ratio_vs_range,
//   create_median_s, create_share
// ratio_vs_range = median / median of jquick/range at the same n/p; create_share = median
// creation time / median time. Benchmarks measure: the exit status is nonzero only for bad
// arguments, an MPI error or wrong output (each output is checked: sorted across ranks and,
// for jquick, exactly balanced).

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench_cli.hpp"
#include "rangecomm/jquick.hpp"
#include "rangecomm/jquick/hypercube.hpp"
#include "rangecomm/jquick/sample_sort.hpp"
#if defined(RANGECOMM_BENCH_KADIS)
#include "baselines/kadis_baseline.hpp"
#endif

namespace {

struct Options {
  std::vector<std::int64_t> sizes = {1, 4, 16, 64, 256, 1024, 4096, 16384, 65536};  // n/p
  int reps = 7;
  int warmup = 1;
  std::vector<std::string> algorithms = {
      "jquick/range", "jquick/create_group", "jquick/split", "samplesort/native", "hypercube/range",
#if defined(RANGECOMM_BENCH_KADIS)
      "kadis/range",  "kadis/native",
#endif
  };
  benchcli::Output out;
  std::uint64_t seed = 1;
};

const char* const kAlgorithms[] = {
    "jquick/range",      "jquick/create_group", "jquick/split",
    "samplesort/native", "hypercube/range",     "hypercube/create_group",
#if defined(RANGECOMM_BENCH_KADIS)
    "kadis/range",       "kadis/native",
#endif
};

void add_options(CLI::App& app, Options* o, std::int64_t* pow2) {
  using benchcli::at_least;
  app.add_option("--sizes", o->sizes, "elements (doubles) per rank")
      ->delimiter(',')
      ->check(at_least(0))
      ->capture_default_str();
  app.add_option("--pow2", *pow2, "sizes = every power of two from 1 to this")
      ->check(at_least(1))
      ->excludes("--sizes");
  app.add_option("--reps", o->reps, "timed repetitions per configuration")
      ->check(at_least(1, 99999))
      ->capture_default_str();
  app.add_option("--warmup", o->warmup, "untimed repetitions per configuration")
      ->check(at_least(0, 99999))
      ->capture_default_str();
  app.add_option("--algorithms", o->algorithms, "which to run (hypercube only for power-of-two p)")
      ->delimiter(',')
      ->check(
          CLI::IsMember(std::vector<std::string>(std::begin(kAlgorithms), std::end(kAlgorithms))))
      ->capture_default_str();
  app.add_option("--seed", o->seed, "input seed")->capture_default_str();
  benchcli::add_output_options(app, &o->out);
  app.footer(
      "CSV columns: algorithm,backend,p,n_per_p,reps,median_s,min_s,max_s,ratio_vs_range,"
      "create_median_s,create_share (JSON: the same fields per row)");
}

benchcli::Failures failures("sort_bench", rangecomm::Error_string);

void check(int err, const char* what) { failures.check(err, what); }

// Sorted across ranks, and (balanced) exactly ceil/floor(n/p) per rank.
bool output_ok(const std::vector<double>& v, std::int64_t n, bool balanced) {
  int rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int ok = std::is_sorted(v.begin(), v.end()) ? 1 : 0;
  if (balanced && static_cast<std::int64_t>(v.size()) != n / p + (rank < n % p ? 1 : 0)) ok = 0;
  double ends[3] = {v.empty() ? 0.0 : 1.0, v.empty() ? 0 : v.front(), v.empty() ? 0 : v.back()};
  std::vector<double> all(3 * static_cast<std::size_t>(p));
  MPI_Allgather(ends, 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, MPI_COMM_WORLD);
  double last = -1e308;
  for (int i = 0; i < p; ++i) {
    if (all[3 * i] == 0) continue;
    if (all[3 * i + 1] < last) ok = 0;
    last = all[3 * i + 2];
  }
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return ok != 0;
}

struct Sample {
  double seconds = 0;
  double create = 0;
};

// One timed sort of `input` (copied) by `algorithm`; times are maxima over ranks.
Sample run_once(const std::string& algorithm, const std::vector<double>& input, std::int64_t n) {
  std::vector<double> v = input;
  rangecomm::JQuickStats stats;
  rangecomm::JQuickOptions opt;
  opt.stats = &stats;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  int err = MPI_SUCCESS;
  bool balanced = false;
  if (algorithm.rfind("jquick/", 0) == 0) {
    opt.backend = algorithm == "jquick/range"          ? rangecomm::SortBackend::range
                  : algorithm == "jquick/create_group" ? rangecomm::SortBackend::native_create_group
                                                       : rangecomm::SortBackend::native_split;
    err = rangecomm::jquick_sort(v, MPI_COMM_WORLD, opt);
    balanced = true;
#if defined(RANGECOMM_BENCH_KADIS)
  } else if (algorithm.rfind("kadis/", 0) == 0) {
    auto be = algorithm == "kadis/range" ? kadis_baseline::Backend::range
                                         : kadis_baseline::Backend::native;
    err = kadis_baseline::janus_sort(v, MPI_COMM_WORLD, be, static_cast<int>(opt.seed));
    balanced = true;
#endif
  } else if (algorithm == "samplesort/native") {
    err = rangecomm::sample_sort(v, MPI_COMM_WORLD);
  } else {
    auto be = algorithm == "hypercube/range" ? rangecomm::SortBackend::range
                                             : rangecomm::SortBackend::native_create_group;
    err = rangecomm::hypercube_quicksort(v, MPI_COMM_WORLD, be);
  }
  double local[2] = {MPI_Wtime() - t0, stats.create_seconds}, global[2] = {0, 0};
  check(err, algorithm.c_str());
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (!output_ok(v, n, balanced)) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::fprintf(stderr, "sort_bench: %s: wrong output\n", algorithm.c_str());
    failures.add();
  }
  return Sample{global[0], global[1]};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

struct Row {
  std::string algorithm;
  std::int64_t n_per_p = 0;
  std::vector<double> times, creates;
};

std::vector<double> make_input(std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> d(0.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(count));
  for (auto& x : v) x = d(g);
  return v;
}

std::vector<Row> measure_size(const Options& o, const std::vector<std::string>& algs,
                              std::int64_t per) {
  int rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  std::vector<Row> rows(algs.size());
  for (std::size_t a = 0; a < algs.size(); ++a) rows[a] = Row{algs[a], per, {}, {}};
  for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
    auto input = make_input(per, o.seed * 1000003u + static_cast<std::uint64_t>(rep) * 7919u +
                                     static_cast<std::uint64_t>(rank) * 104729u + per);
    for (std::size_t i = 0; i < algs.size(); ++i) {
      std::size_t a = (i + static_cast<std::size_t>(rep)) % algs.size();
      Sample s = run_once(algs[a], input, per * p);
      if (rep < o.warmup) continue;
      rows[a].times.push_back(s.seconds);
      rows[a].creates.push_back(s.create);
    }
  }
  return rows;
}

void report(const Options& o, const std::vector<Row>& rows, int p) {
  std::string text =
      "algorithm,backend,p,n_per_p,reps,median_s,min_s,max_s,ratio_vs_range,"
      "create_median_s,create_share\n";
  nlohmann::json all = nlohmann::json::array();
  std::string table;
  char line[512];
  std::snprintf(line, sizeof line, "%-20s %8s %12s %12s %12s %9s %12s\n", "algorithm", "n/p",
                "median_ms", "min_ms", "max_ms", "vs_range", "create_share");
  table += line;
  for (const Row& r : rows) {
    double range_median = 0;
    for (const Row& q : rows)
      if (q.algorithm == "jquick/range" && q.n_per_p == r.n_per_p) range_median = median(q.times);
    double med = median(r.times), cmed = median(r.creates);
    double lo = *std::min_element(r.times.begin(), r.times.end());
    double hi = *std::max_element(r.times.begin(), r.times.end());
    double ratio = range_median > 0 ? med / range_median : 0;
    double share = med > 0 ? cmed / med : 0;
    std::string name = r.algorithm.substr(0, r.algorithm.find('/'));
    std::string backend = r.algorithm.substr(r.algorithm.find('/') + 1);
    std::snprintf(line, sizeof line, "%s,%s,%d,%lld,%zu,%.9f,%.9f,%.9f,%.4f,%.9f,%.5f\n",
                  name.c_str(), backend.c_str(), p, static_cast<long long>(r.n_per_p),
                  r.times.size(), med, lo, hi, ratio, cmed, share);
    text += line;
    all.push_back({{"algorithm", name},
                   {"backend", backend},
                   {"p", p},
                   {"n_per_p", r.n_per_p},
                   {"reps", r.times.size()},
                   {"median_s", med},
                   {"min_s", lo},
                   {"max_s", hi},
                   {"ratio_vs_range", ratio},
                   {"create_median_s", cmed},
                   {"create_share", share}});
    std::snprintf(line, sizeof line, "%-20s %8lld %12.3f %12.3f %12.3f %9.2f %12.4f\n",
                  r.algorithm.c_str(), static_cast<long long>(r.n_per_p), med * 1e3, lo * 1e3,
                  hi * 1e3, ratio, share);
    table += line;
  }
  bool json = o.out.format() == benchcli::Format::json;
  if (json) {
    nlohmann::json doc{{"driver", "sort_bench"},
                       {"settings",
                        {{"sizes", o.sizes},
                         {"reps", o.reps},
                         {"warmup", o.warmup},
                         {"algorithms", o.algorithms},
                         {"seed", o.seed}}},
                       {"rows", all}};
    text = doc.dump(2) + "\n";
  }
  if (!o.out.file.empty()) {
    if (std::FILE* f = std::fopen(o.out.file.c_str(), "w")) {
      std::fputs(text.c_str(), f);
      std::fclose(f);
    } else {
      std::fprintf(stderr, "sort_bench: cannot write %s\n", o.out.file.c_str());
      failures.add();
    }
  }
  std::fputs(o.out.format() == benchcli::Format::table ? table.c_str() : text.c_str(), stdout);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  Options o;
  std::int64_t pow2 = 0;
  CLI::App app{
      "Janus Quicksort on range vs native MPI communicators, and baselines "
      "(paper Fig. 8).",
      "sort_bench"};
  add_options(app, &o, &pow2);
  int exit_code = 0;
  if (!benchcli::parse(app, argc, argv, &exit_code)) return exit_code;
  if (pow2 > 0) {
    o.sizes.clear();
    for (std::int64_t s = 1; s <= pow2; s *= 2) o.sizes.push_back(s);
  }
  std::vector<std::string> algs;
  for (const auto& a : o.algorithms)
    if (a.rfind("hypercube/", 0) != 0 || (p & (p - 1)) == 0) algs.push_back(a);

  std::vector<Row> rows;
  for (std::int64_t per : o.sizes) {
    auto r = measure_size(o, algs, per);
    rows.insert(rows.end(), r.begin(), r.end());
  }
  const int errors = failures.total();
  if (rank == 0) {
    report(o, rows, p);
    if (errors > 0) std::fprintf(stderr, "sort_bench: %d errors\n", errors);
  }
  MPI_Finalize();
  return errors > 0 ? 1 : 0;
}
