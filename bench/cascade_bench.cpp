// cascade_bench: creating overlapping communicators (paper "Lightweight MPI Communicators with
// Applications to Perfectly Balanced Quicksort", Fig. 6). The p ranks are split into groups of
// g processes that overlap by one: 0..g-1, g-1..2g-2, ... (the last one may be smaller). A
// process at an overlap belongs to two groups and creates two communicators, one after the
// other, in one of two orders:
//
//  cascaded     always the left group first. Each group waits for its left neighbour, so with
//               native MPI the creations run one after another along the chain.
//  alternating  every other such process creates the right group first, so no chain is
//               longer than two creations.
//
// native: MPI_Comm_create_group(MPI_COMM_WORLD, group, tag = group index) (collective over the
//         group only; MPI_Comm_split cannot make overlapping communicators). Groups are made
//         once, untimed; the communicators are freed after each sample, untimed.
// range:  rangecomm::Split_Comm(world, first, last), local; batches of --batch repetitions of
//         creating one's communicators and freeing them, time per repetition.
// One sample = time from a barrier until this process holds all its communicators, max over
// ranks. Native and range, cascaded and alternating, are measured in the same run.
//
// Output on rank 0: a table, or CSV rows (--format csv, --csv FILE)
//   experiment,variant,param,ranks,median_us,min_us,max_us,ratio_vs_native
// with experiment = cascade, variant = {native,range}_{cascaded,alternating}, param = g,
// ratio_vs_native = median / median of the native variant of the same schedule.
// Benchmarks measure: the exit status is nonzero only for bad arguments or wrong results.

#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "bench_cli.hpp"
#include "rangecomm/rangecomm.hpp"

namespace {

struct Options {
  int group_size = 0;  // 0: 4 from 7 ranks up, else 2
  int reps = 20;       // native samples per schedule
  int batches = 20;    // range samples per schedule
  int batch = 1000;    // range repetitions per sample
  benchcli::Output out;
};

void add_options(CLI::App& app, Options* o) {
  using benchcli::at_least;
  app.add_option("--group-size", o->group_size,
                 "processes per group, >= 2 (0: 4 from 7 ranks up, else 2)")
      ->check(CLI::IsMember({0}) | at_least(2, 100000000))
      ->capture_default_str();
  app.add_option("--reps", o->reps, "native samples per schedule")
      ->check(at_least(1, 100000000))
      ->capture_default_str();
  app.add_option("--batches", o->batches, "range samples per schedule")
      ->check(at_least(1, 100000000))
      ->capture_default_str();
  app.add_option("--batch", o->batch, "range repetitions per sample")
      ->check(at_least(1, 100000000))
      ->capture_default_str();
  benchcli::add_output_options(app, &o->out);
  app.footer(
      "Rows: times are per creation of all of a process's communicators, max over ranks;\n"
      "param = G; ratio_vs_native = median / median of native with the same schedule.");
}

int rank_ = 0, size_ = 1;
benchcli::Failures failures("cascade_bench", rangecomm::Error_string);

void check(int rc, const char* what) { failures.check(rc, what); }

struct Group {
  int index, first, last;
};

// The groups this process belongs to, in the order the schedule creates them.
std::vector<Group> my_groups(int g, bool alternating) {
  std::vector<Group> mine;
  for (int k = 0, first = 0; first < size_ - 1 || (k == 0 && size_ == 1); ++k, first += g - 1) {
    int last = std::min(first + g - 1, size_ - 1);
    if (rank_ >= first && rank_ <= last) mine.push_back({k, first, last});
  }
  // A process in two groups is the right end of group k-1 and the left end of group k; the
  // j-th such process (j = k) reverses the order when alternating and j is odd.
  if (alternating && mine.size() == 2 && mine[1].index % 2 == 1) std::swap(mine[0], mine[1]);
  return mine;
}

double max_over_ranks(double mine) {
  double worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

struct Stats {
  double median = 0, min = 0, max = 0;
};

Stats stats_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return {v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]), v.front(), v.back()};
}

Stats bench_native(const std::vector<Group>& mine, int reps) {
  MPI_Group world_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  std::vector<MPI_Group> groups;
  for (const Group& gr : mine) {
    int triple[1][3] = {{gr.first, gr.last, 1}};
    MPI_Group g;
    MPI_Group_range_incl(world_group, 1, triple, &g);
    groups.push_back(g);
  }
  std::vector<double> us;
  std::vector<MPI_Comm> comms(mine.size(), MPI_COMM_NULL);
  for (int r = 0; r < reps + 1; ++r) {  // the first repetition is a warm-up
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (size_t i = 0; i < mine.size(); ++i)
      check(MPI_Comm_create_group(MPI_COMM_WORLD, groups[i], mine[i].index, &comms[i]),
            "MPI_Comm_create_group");
    double t = (MPI_Wtime() - t0) * 1e6;
    for (size_t i = 0; i < mine.size(); ++i) {
      int size = -1;
      MPI_Comm_size(comms[i], &size);
      if (size != mine[i].last - mine[i].first + 1) failures.add();
      MPI_Comm_free(&comms[i]);
    }
    t = max_over_ranks(t);
    if (r > 0) us.push_back(t);
  }
  for (MPI_Group& g : groups) MPI_Group_free(&g);
  MPI_Group_free(&world_group);
  return stats_of(us);
}

Stats bench_range(const rangecomm::Comm& world, const std::vector<Group>& mine, const Options& o) {
  std::vector<rangecomm::Comm> comms(mine.size());
  std::vector<double> us;
  for (int b = 0; b < o.batches + 1; ++b) {  // the first batch is a warm-up
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    double t0 = MPI_Wtime();
    for (int r = 0; r < o.batch; ++r) {
      for (size_t i = 0; i < mine.size(); ++i)
        bad |= rangecomm::Split_Comm(world, mine[i].first, mine[i].last, &comms[i]);
      for (rangecomm::Comm& c : comms) bad |= rangecomm::Comm_free(&c);
    }
    double t = (MPI_Wtime() - t0) * 1e6 / o.batch;
    check(bad, "Split_Comm/Comm_free");
    t = max_over_ranks(t);
    if (b > 0) us.push_back(t);
  }
  // Untimed: the ranges have the expected size and rank.
  for (size_t i = 0; i < mine.size(); ++i) {
    check(rangecomm::Split_Comm(world, mine[i].first, mine[i].last, &comms[i]), "Split_Comm");
    if (comms[i].size() != mine[i].last - mine[i].first + 1 ||
        comms[i].rank() != rank_ - mine[i].first)
      failures.add();
  }
  return stats_of(us);
}

struct Row {
  std::string variant;
  Stats s;
  double ratio;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  Options o;
  CLI::App app{
      "Creating overlapping communicators of g processes (0..g-1, g-1..2g-2, ...) with a "
      "cascaded and an alternating schedule: MPI_Comm_create_group vs "
      "rangecomm::Split_Comm (paper Fig. 6).",
      "cascade_bench"};
  add_options(app, &o);
  int exit_code = 0;
  if (!benchcli::parse(app, argc, argv, &exit_code)) return exit_code;
  const int g = o.group_size ? o.group_size : (size_ >= 7 ? 4 : 2);
  rangecomm::Comm world;
  check(rangecomm::Create_Comm(MPI_COMM_WORLD, &world), "Create_Comm");

  std::vector<Row> rows;
  for (bool alternating : {false, true}) {
    const std::string schedule = alternating ? "alternating" : "cascaded";
    if (rank_ == 0) std::fprintf(stderr, "cascade_bench: %s\n", schedule.c_str());
    const std::vector<Group> mine = my_groups(g, alternating);
    Stats n = bench_native(mine, o.reps);
    Stats r = bench_range(world, mine, o);
    rows.push_back({"native_" + schedule, n, 1.0});
    rows.push_back({"range_" + schedule, r, r.median / n.median});
  }

  const int errors = failures.total();
  if (rank_ == 0) {
    std::vector<benchcli::Row> out;
    for (const Row& r : rows)
      out.push_back(benchcli::make_row("cascade", r.variant, std::to_string(g), size_, r.s.median,
                                       r.s.min, r.s.max, r.ratio));
    nlohmann::json settings{
        {"group_size", g}, {"reps", o.reps}, {"batches", o.batches}, {"batch", o.batch}};
    benchcli::emit("cascade_bench", o.out, out, settings, false, [&] {
      std::printf(
          "cascade_bench: %d ranks, overlapping groups of %d; us per creation of all of a\n"
          "process's communicators, max over ranks\n",
          size_, g);
      std::printf("%-20s %12s %12s %12s %12s\n", "variant", "median_us", "min_us", "max_us",
                  "range/native");
      for (const Row& r : rows)
        std::printf("%-20s %12.4g %12.4g %12.4g %12.4g\n", r.variant.c_str(), r.s.median, r.s.min,
                    r.s.max, r.ratio);
    });
    if (errors)
      std::fprintf(stderr, "cascade_bench: %d error(s) or wrong sizes, see above\n", errors);
    std::fflush(stdout);
  }
  const int status = errors ? 1 : 0;
  world = rangecomm::Comm();
  MPI_Finalize();
  return status;
}
