// sort_bench: Janus Quicksort on range communicators versus the same code on native MPI
// communicators, and versus two baselines (paper "Lightweight MPI Communicators with
// Applications to Perfectly Balanced Quicksort", Fig. 8). On MPI_COMM_WORLD, for each n/p:
//
//   jquick/range         rangecomm::jquick_sort, subgroups by Split_Comm (local)
//   jquick/create_group  the same code, subgroups by MPI_Comm_create_group
//   jquick/split         the same code, subgroups by two MPI_Comm_split calls per level
//   samplesort/native    sample sort with one MPI_Alltoallv (not balanced)
//   hypercube/range      hypercube quicksort on range communicators (power-of-two p only)
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

#include "rangecomm/jquick.hpp"
#include "rangecomm/jquick/hypercube.hpp"
#include "rangecomm/jquick/sample_sort.hpp"

namespace {

struct Options {
  std::vector<std::int64_t> sizes;  // n/p values
  int reps = 7;
  int warmup = 1;
  std::vector<std::string> algorithms = {"jquick/range", "jquick/create_group", "jquick/split",
                                         "samplesort/native", "hypercube/range"};
  bool csv_stdout = false;
  std::string csv_file;
  std::uint64_t seed = 1;
};

const char* const kUsage =
    "usage: sort_bench [options]\n"
    "Janus Quicksort on range vs native MPI communicators, and baselines (paper Fig. 8).\n"
    "\n"
    "  --sizes a,b,c     elements (doubles) per rank (default: powers of 4 from 1 to 65536)\n"
    "  --pow2 MAX        sizes = every power of two from 1 to MAX\n"
    "  --reps N          timed repetitions per configuration (default 7)\n"
    "  --warmup N        untimed repetitions per configuration (default 1)\n"
    "  --algorithms L    comma list out of jquick/range, jquick/create_group, jquick/split,\n"
    "                    samplesort/native, hypercube/range, hypercube/create_group\n"
    "                    (default: the first five; hypercube runs only for power-of-two p)\n"
    "  --seed N          input seed (default 1)\n"
    "  --format F        table (default) or csv: what rank 0 prints on stdout\n"
    "  --csv FILE        also write the CSV rows to FILE\n"
    "  --help            this text\n"
    "\n"
    "CSV columns: algorithm,backend,p,n_per_p,reps,median_s,min_s,max_s,ratio_vs_range,\n"
    "             create_median_s,create_share\n";

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    if (comma > pos) out.push_back(s.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

bool parse_i64(const std::string& s, std::int64_t min, std::int64_t* out) {
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < min) return false;
  *out = v;
  return true;
}

bool known_algorithm(const std::string& a) {
  for (const char* k : {"jquick/range", "jquick/create_group", "jquick/split", "samplesort/native",
                        "hypercube/range", "hypercube/create_group"})
    if (a == k) return true;
  return false;
}

// 0: run; 1: --help; -1: bad arguments (message in *error).
int parse_args(int argc, char** argv, Options* o, std::string* error) {
  for (std::int64_t s = 1; s <= 65536; s *= 4) o->sizes.push_back(s);
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") return 1;
    if (i + 1 >= argc) {
      *error = "missing value for " + flag;
      return -1;
    }
    std::string v = argv[++i];
    std::int64_t x = 0;
    bool ok = true;
    if (flag == "--sizes") {
      o->sizes.clear();
      for (const auto& t : split_list(v)) {
        ok = ok && parse_i64(t, 0, &x);
        o->sizes.push_back(x);
      }
      ok = ok && !o->sizes.empty();
    } else if (flag == "--pow2") {
      ok = parse_i64(v, 1, &x);
      o->sizes.clear();
      for (std::int64_t s = 1; ok && s <= x; s *= 2) o->sizes.push_back(s);
    } else if (flag == "--reps") {
      ok = parse_i64(v, 1, &x) && x < 100000;
      o->reps = static_cast<int>(x);
    } else if (flag == "--warmup") {
      ok = parse_i64(v, 0, &x) && x < 100000;
      o->warmup = static_cast<int>(x);
    } else if (flag == "--algorithms") {
      o->algorithms = split_list(v);
      for (const auto& a : o->algorithms) ok = ok && known_algorithm(a);
      ok = ok && !o->algorithms.empty();
    } else if (flag == "--seed") {
      ok = parse_i64(v, 0, &x);
      o->seed = static_cast<std::uint64_t>(x);
    } else if (flag == "--format") {
      ok = v == "table" || v == "csv";
      o->csv_stdout = v == "csv";
    } else if (flag == "--csv") {
      o->csv_file = v;
    } else {
      *error = "unknown option " + flag;
      return -1;
    }
    if (!ok) {
      *error = "bad value for " + flag + ": " + v;
      return -1;
    }
  }
  return 0;
}

int g_errors = 0;

void check(int err, const char* what) {
  if (err == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  rangecomm::Error_string(err, text, &len);
  std::fprintf(stderr, "sort_bench: %s failed: %.*s\n", what, len, text);
  ++g_errors;
}

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
    ++g_errors;
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
  std::FILE* csv = o.csv_file.empty() ? nullptr : std::fopen(o.csv_file.c_str(), "w");
  if (!o.csv_file.empty() && csv == nullptr) {
    std::fprintf(stderr, "sort_bench: cannot write %s\n", o.csv_file.c_str());
    ++g_errors;
  }
  const char* header =
      "algorithm,backend,p,n_per_p,reps,median_s,min_s,max_s,ratio_vs_range,create_median_s,"
      "create_share\n";
  if (o.csv_stdout) std::fputs(header, stdout);
  if (csv) std::fputs(header, csv);
  if (!o.csv_stdout)
    std::printf("%-20s %8s %12s %12s %12s %9s %12s\n", "algorithm", "n/p", "median_ms", "min_ms",
                "max_ms", "vs_range", "create_share");
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
    char line[512];
    std::snprintf(line, sizeof line, "%s,%s,%d,%lld,%zu,%.9f,%.9f,%.9f,%.4f,%.9f,%.5f\n",
                  name.c_str(), backend.c_str(), p, static_cast<long long>(r.n_per_p),
                  r.times.size(), med, lo, hi, ratio, cmed, share);
    if (o.csv_stdout) std::fputs(line, stdout);
    if (csv) std::fputs(line, csv);
    if (!o.csv_stdout)
      std::printf("%-20s %8lld %12.3f %12.3f %12.3f %9.2f %12.4f\n", r.algorithm.c_str(),
                  static_cast<long long>(r.n_per_p), med * 1e3, lo * 1e3, hi * 1e3, ratio, share);
  }
  if (csv) std::fclose(csv);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  Options o;
  std::string error;
  int parsed = parse_args(argc, argv, &o, &error);
  if (parsed != 0) {
    if (rank == 0) {
      if (parsed < 0) std::fprintf(stderr, "sort_bench: %s\n\n", error.c_str());
      std::fputs(kUsage, parsed < 0 ? stderr : stdout);
    }
    MPI_Finalize();
    return parsed < 0 ? 2 : 0;
  }
  std::vector<std::string> algs;
  for (const auto& a : o.algorithms)
    if (a.rfind("hypercube/", 0) != 0 || (p & (p - 1)) == 0) algs.push_back(a);

  std::vector<Row> rows;
  for (std::int64_t per : o.sizes) {
    auto r = measure_size(o, algs, per);
    rows.insert(rows.end(), r.begin(), r.end());
  }
  int errors = 0;
  MPI_Reduce(&g_errors, &errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    report(o, rows, p);
    if (errors > 0) std::fprintf(stderr, "sort_bench: %d errors\n", errors);
  }
  MPI_Bcast(&errors, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return errors > 0 ? 1 : 0;
}
