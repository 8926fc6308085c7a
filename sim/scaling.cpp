// The paper's experiments in simulated time: run under SMPI (tools/run-scaling.sh) at any number
// of simulated processes, each measurement once with range communicators and once natively, in
// the same run. Rank 0 prints CSV rows "experiment,p,variant,parameter,seconds": simulated
// seconds per operation, the slowest process's (operations are timed between barriers). Every
// result is checked; a wrong one ends the run with exit status 1 and says where.
//
//   sim_scaling.so EXPERIMENT [--reps R] [--per-rank N] [--variants V,...]
//
//   create  a communicator of each half of the processes, then freeing it: Split_Comm against
//           MPI_Comm_create_group and MPI_Comm_split (paper Fig. 6)
//   fig7    that creation plus one broadcast of 1024 ints in the new communicator (Fig. 7)
//   coll    Bcast and Allreduce of 1, 1024 and 65536 ints on all processes (Fig. 9's sizes)
//   iscan   Iscan of one int, started and waited for (Fig. 4)
//   jquick  Janus Quicksort of N doubles per process (16) on ranges and on native
//           communicators made by create_group and by split (Fig. 8); --variants picks some
//           of range, native_create_group, native_split (the native ones take the simulator
//           ten times longer)
//   all     each of the above
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "rangecomm/jquick.hpp"
#include "rangecomm/rangecomm.hpp"

namespace {

int g_rank = 0, g_size = 1;
int g_reps = 5;
int g_per_rank = 16;
std::string g_variants = "range,native_create_group,native_split";

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "sim_scaling: rank %d: %s\n", g_rank, what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

void check_mpi(int rc, const std::string& what) {
  if (rc != MPI_SUCCESS) fail(what + ": MPI error " + std::to_string(rc));
}

// Seconds per call of op (run reps times between barriers), the slowest process's.
double timed(const std::function<void()>& op) {
  op();  // once untimed: first contacts, lazily made state
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < g_reps; ++i) op();
  double mine = (MPI_Wtime() - start) / g_reps, slowest = 0;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return slowest;
}

void row(const char* experiment, const char* variant, long long parameter, double seconds) {
  if (g_rank == 0)
    std::printf("%s,%d,%s,%lld,%.9g\n", experiment, g_size, variant, parameter, seconds);
  std::fflush(stdout);
}

// This process's half of the world: [first, last] and its rank in it.
struct Half {
  int first, last, rank, size;
};

Half my_half() {
  const int mid = g_size / 2;  // the lower half is 0..mid-1 (empty at p = 1)
  Half h{};
  if (g_rank < mid || mid == 0) {
    h.first = 0;
    h.last = mid == 0 ? 0 : mid - 1;
  } else {
    h.first = mid;
    h.last = g_size - 1;
  }
  h.rank = g_rank - h.first;
  h.size = h.last - h.first + 1;
  return h;
}

// A native communicator of this process's half, by create_group or by split.
MPI_Comm native_half(bool split) {
  const Half h = my_half();
  MPI_Comm out = MPI_COMM_NULL;
  if (split) {
    check_mpi(MPI_Comm_split(MPI_COMM_WORLD, h.first, g_rank, &out), "MPI_Comm_split");
  } else {
    MPI_Group world, half;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int range[1][3] = {{h.first, h.last, 1}};
    MPI_Group_range_incl(world, 1, range, &half);
    check_mpi(MPI_Comm_create_group(MPI_COMM_WORLD, half, 7, &out), "MPI_Comm_create_group");
    MPI_Group_free(&half);
    MPI_Group_free(&world);
  }
  int size = 0, rank = -1;
  MPI_Comm_size(out, &size);
  MPI_Comm_rank(out, &rank);
  check(size == h.size && rank == h.rank, "native half has the wrong size or rank");
  return out;
}

rangecomm::Comm range_half(const rangecomm::Comm& world) {
  const Half h = my_half();
  rangecomm::Comm out;
  check_mpi(rangecomm::Split_Comm(world, h.first, h.last, &out), "Split_Comm");
  check(out.size() == h.size && out.rank() == h.rank, "range half has the wrong size or rank");
  return out;
}

std::vector<int> bcast_data(int n, int seed) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = seed * 7919 + i;
  return v;
}

void check_bcast(const std::vector<int>& got, int seed, const char* what) {
  check(got == bcast_data(static_cast<int>(got.size()), seed), std::string(what) + ": wrong data");
}

void experiment_create(const rangecomm::Comm& world, bool with_bcast) {
  const char* name = with_bcast ? "fig7" : "create";
  const int n = 1024;
  const Half h = my_half();
  auto payload = [&](int root_rank) {
    return h.rank == root_rank ? bcast_data(n, h.first) : std::vector<int>(n, -1);
  };
  row(name, "range", with_bcast ? n : 0, timed([&] {
        rangecomm::Comm c = range_half(world);
        if (with_bcast) {
          auto v = payload(0);
          check_mpi(rangecomm::Bcast(v.data(), n, MPI_INT, 0, c), "range Bcast");
          check_bcast(v, h.first, "range Bcast");
        }
        check_mpi(rangecomm::Comm_free(&c), "Comm_free");
      }));
  for (bool split : {false, true}) {
    row(name, split ? "native_split" : "native_create_group", with_bcast ? n : 0, timed([&] {
          MPI_Comm c = native_half(split);
          if (with_bcast) {
            auto v = payload(0);
            check_mpi(MPI_Bcast(v.data(), n, MPI_INT, 0, c), "native Bcast");
            check_bcast(v, h.first, "native Bcast");
          }
          MPI_Comm_free(&c);
        }));
  }
}

void experiment_coll(const rangecomm::Comm& world) {
  for (int n : {1, 1024, 65536}) {
    std::vector<int> v(static_cast<size_t>(n));
    auto fill = [&] { v = g_rank == 0 ? bcast_data(n, 1) : std::vector<int>(n, -1); };
    row("bcast", "range", n, timed([&] {
          fill();
          check_mpi(rangecomm::Bcast(v.data(), n, MPI_INT, 0, world), "range Bcast");
          check_bcast(v, 1, "range Bcast");
        }));
    row("bcast", "native", n, timed([&] {
          fill();
          check_mpi(MPI_Bcast(v.data(), n, MPI_INT, 0, MPI_COMM_WORLD), "native Bcast");
          check_bcast(v, 1, "native Bcast");
        }));
    std::vector<int> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) in[static_cast<size_t>(i)] = g_rank + i;
    auto check_sum = [&](const char* what) {
      // sum over r of (r + i) = p(p-1)/2 + p*i
      const long long base = static_cast<long long>(g_size) * (g_size - 1) / 2;
      for (int i = 0; i < n; ++i)
        check(out[static_cast<size_t>(i)] == static_cast<int>(base + 1LL * g_size * i),
              std::string(what) + ": wrong sum");
    };
    row("allreduce", "range", n, timed([&] {
          check_mpi(rangecomm::Allreduce(in.data(), out.data(), n, MPI_INT, MPI_SUM, world),
                    "range Allreduce");
          check_sum("range Allreduce");
        }));
    row("allreduce", "native", n, timed([&] {
          check_mpi(MPI_Allreduce(in.data(), out.data(), n, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                    "native Allreduce");
          check_sum("native Allreduce");
        }));
  }
}

void experiment_iscan(const rangecomm::Comm& world) {
  const int mine = g_rank + 1, expected = (g_rank + 1) * (g_rank + 2) / 2;
  row("iscan", "range", 1, timed([&] {
        int got = -1;
        rangecomm::Request r;
        check_mpi(rangecomm::Iscan(&mine, &got, 1, MPI_INT, MPI_SUM, world, &r), "range Iscan");
        check_mpi(rangecomm::Wait(&r, MPI_STATUS_IGNORE), "range Wait");
        check(got == expected, "range Iscan: wrong prefix");
      }));
  row("iscan", "native", 1, timed([&] {
        int got = -1;
        MPI_Request r;
        check_mpi(MPI_Iscan(&mine, &got, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r), "MPI_Iscan");
        check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
        check(got == expected, "native Iscan: wrong prefix");
      }));
}

// Sorted across the processes, balanced, and the same multiset (by sum and count).
void check_sorted(const std::vector<double>& v, long long n_total, double input_sum) {
  check(std::is_sorted(v.begin(), v.end()), "jquick: not sorted locally");
  const long long base = n_total / g_size, extra = n_total % g_size;
  check(static_cast<long long>(v.size()) == base + (g_rank < extra ? 1 : 0), "jquick: unbalanced");
  double edges[2] = {v.empty() ? -1e300 : v.front(), v.empty() ? -1e300 : v.back()};
  std::vector<double> all(static_cast<size_t>(2 * g_size));
  MPI_Allgather(edges, 2, MPI_DOUBLE, all.data(), 2, MPI_DOUBLE, MPI_COMM_WORLD);
  double last = -1e300;
  for (int r = 0; r < g_size; ++r) {
    if (all[static_cast<size_t>(2 * r)] == -1e300) continue;  // empty
    check(all[static_cast<size_t>(2 * r)] >= last, "jquick: not sorted across processes");
    last = all[static_cast<size_t>(2 * r + 1)];
  }
  double sum = 0;
  for (double x : v) sum += x;
  double total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  check(total == input_sum, "jquick: the elements changed");
}

void experiment_jquick() {
  const int n = g_per_rank;
  std::vector<double> input(static_cast<size_t>(n));
  std::mt19937_64 gen(0x5eed + static_cast<unsigned>(g_rank));
  // Integral values: every sum below is exact, whatever the order of addition.
  for (double& x : input) x = static_cast<double>(gen() % 1000000);
  double sum = 0, total = 0;
  for (double x : input) sum += x;
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const struct {
    const char* name;
    rangecomm::SortBackend backend;
  } variants[] = {{"range", rangecomm::SortBackend::range},
                  {"native_create_group", rangecomm::SortBackend::native_create_group},
                  {"native_split", rangecomm::SortBackend::native_split}};
  int ran = 0;
  for (const auto& variant : variants) {
    if (("," + g_variants + ",").find(std::string(",") + variant.name + ",") == std::string::npos)
      continue;
    ++ran;
    rangecomm::JQuickOptions options;
    options.backend = variant.backend;
    std::vector<double> v;
    row("jquick", variant.name, n, timed([&] {
          v = input;
          check_mpi(rangecomm::jquick_sort(v, MPI_COMM_WORLD, options), "jquick_sort");
        }));
    check_sorted(v, static_cast<long long>(n) * g_size, total);
  }
  check(ran > 0,
        "--variants " + g_variants + " names none of range, native_create_group, native_split");
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const std::string experiment = argc > 1 ? argv[1] : "";
  for (int i = 2; i < argc; i += 2) {
    const std::string option = argv[i];
    if (i + 1 == argc) fail("option " + option + " needs a value");
    if (option == "--reps")
      g_reps = std::max(1, std::atoi(argv[i + 1]));
    else if (option == "--per-rank")
      g_per_rank = std::max(0, std::atoi(argv[i + 1]));
    else if (option == "--variants")
      g_variants = argv[i + 1];
    else
      fail("unknown option " + option);
  }
  rangecomm::Comm world;
  check_mpi(rangecomm::Create_Comm(MPI_COMM_WORLD, &world), "Create_Comm");
  const std::pair<const char*, std::function<void()>> experiments[] = {
      {"create", [&] { experiment_create(world, false); }},
      {"fig7", [&] { experiment_create(world, true); }},
      {"coll", [&] { experiment_coll(world); }},
      {"iscan", [&] { experiment_iscan(world); }},
      {"jquick", [] { experiment_jquick(); }},
  };
  bool known = false;
  for (const auto& [name, run] : experiments) {
    if (experiment != "all" && experiment != name) continue;
    known = true;
    run();
  }
  if (!known)
    fail("unknown experiment '" + experiment + "' (create, fig7, coll, iscan, jquick, all)");
  check_mpi(rangecomm::Comm_free(&world), "Comm_free");
  MPI_Finalize();
  return 0;
}
