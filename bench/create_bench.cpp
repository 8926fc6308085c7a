// create_bench: communicator creation time and point-to-point latency of range communicators
// versus native MPI communicators (paper "Lightweight MPI Communicators with Applications to
// Perfectly Balanced Quicksort", Fig. 5). One run on MPI_COMM_WORLD measures:
//
//  1. Creating a communicator for each half of the processes (world ranks 0..p/2-1 and
//     p/2..p-1; for p = 1 the single rank) with
//       range        rangecomm::Split_Comm on a range attached once to MPI_COMM_WORLD, followed
//                    by rangecomm::Comm_free; both are inside the timed loop. Timed in batches
//                    of many creations, per-creation time = batch time / batch size.
//       create_group MPI_Group_range_incl + MPI_Comm_create_group (both timed; the world group
//                    is made once, the new group and communicator are freed untimed).
//       split        MPI_Comm_split with color = half (timed; the free is untimed).
//       range_kept   the same Split_Comm, each into the one handle kept over the batch (which
//                    releases the communicator it held), one Comm_free at the end.
//       rbc, rbc_kept  with -Drbc or -Dkadis (bench/baselines): the original RBC library's
//                    RBC::Comm_create_group of the same half, each into a new RBC::Comm
//                    destroyed after it, or into one kept RBC::Comm; batches like range's.
//     The batches of range, range_kept, rbc and rbc_kept alternate (one of each in turn, the
//     order rotating), and each is also reported in thread CPU time (variant name + _cpu), which
//     leaves out the time a rank spends descheduled when there are more ranks than cores.
//     Each sample (batch or repetition) starts after an MPI_Barrier; a sample's time is the
//     maximum over ranks (MPI_Reduce MAX). Statistics are over samples.
//  2. Ping-pong between world ranks 0 and p-1: on a 2-process range (Split_Comm with stride p-1)
//     with rangecomm::Send/Recv and on a native communicator of the same two processes
//     (MPI_Comm_create_group of {0, p-1}) with MPI_Send/MPI_Recv. Both are measured in the same
//     run in alternating order (native, range / range, native, ...), after a warm-up. One
//     sample = mean one-way latency (round trip / 2) over --iters round trips, measured on world
//     rank 0. The other ranks wait in an MPI_Ibarrier polled every 1 ms with a sleep in
//     between, so that on an oversubscribed node they do not take cores from the pair.
//
// Output on rank 0: a human-readable table, or CSV rows
//   experiment,variant,param,ranks,median_us,min_us,max_us,ratio_vs_native
// Benchmarks measure: the exit status is never nonzero because of a timing (only for bad
// arguments, an MPI error or wrong data).

#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "bench_cli.hpp"
#include "rangecomm/rangecomm.hpp"
#if defined(RANGECOMM_BENCH_RBC)
#include "baselines/rbc_baseline.hpp"
#endif

namespace {

struct Options {
  int reps = 50;          // repetitions of each native creation
  int batches = 20;       // batches of range creations
  int batch_size = 5000;  // range creations per batch
  int warmup_create = 3;  // untimed repetitions before each creation experiment
  std::vector<int> sizes = {1, 1024, 65536};
  int rounds = 50;   // ping-pong samples per variant and size
  int iters = 1000;  // round trips per sample
  int warmup = 200;  // untimed round trips per variant and size
  benchcli::Output out;
};

void add_options(CLI::App& app, Options* o) {
  using benchcli::at_least;
  app.add_option("--reps", o->reps, "repetitions of MPI_Comm_create_group / MPI_Comm_split")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--batches", o->batches, "batches of range creations")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--batch-size", o->batch_size,
                 "range creations (Split_Comm + Comm_free) per batch")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--sizes", o->sizes, "ping-pong message sizes in bytes")
      ->delimiter(',')
      ->check(at_least(0))
      ->capture_default_str();
  app.add_option("--rounds", o->rounds, "ping-pong samples per variant and size, alternating")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--iters", o->iters, "round trips per ping-pong sample")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--warmup", o->warmup, "untimed round trips per variant and size")
      ->check(at_least(0))
      ->capture_default_str();
  benchcli::add_output_options(app, &o->out);
  app.footer(
      "Rows: experiment create: param = size of the half that rank 0 belongs to; times per\n"
      "creation, max over ranks; ratio_vs_native = median / median of create_group. Variants\n"
      "ending in _cpu are the same batches in thread CPU time (leaves out time descheduled on an\n"
      "oversubscribed node). Experiment pingpong: param = message bytes; one-way latency on world "
      "rank 0;\n"
      "ratio_vs_native = median / median of native.");
}

// MPI or rangecomm calls that returned an error, data mismatches.
benchcli::Failures failures("create_bench", rangecomm::Error_string);

void check(int rc, const char* what) { failures.check(rc, what); }

struct Stats {
  double median = 0, min = 0, max = 0;
  int n = 0;
};

Stats stats_of(std::vector<double> v) {
  Stats s;
  s.n = static_cast<int>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  s.median = v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  s.min = v.front();
  s.max = v.back();
  return s;
}

// Elementwise max over ranks of per-sample times; the result is valid on rank 0.
std::vector<double> max_over_ranks(const std::vector<double>& local) {
  std::vector<double> global(local.size());
  MPI_Reduce(local.data(), global.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX, 0,
             MPI_COMM_WORLD);
  return global;
}

struct Row {
  std::string experiment, variant;
  long param;
  int ranks;
  Stats s;
  double ratio;  // median / native median
};

// ---------------------------------------------------------------------------------------------
// 1. Communicator creation

struct Half {
  int first, last, color, size;
};

Half my_half(int rank, int p) {
  if (p == 1) return {0, 0, 0, 1};
  int h = p / 2;
  if (rank < h) return {0, h - 1, 0, h};
  return {h, p - 1, 1, p - h};
}

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// The ways of making a half that are timed against each other, batch by batch.
enum Maker { kRange, kRangeKept, kRbc, kRbcKept, kMakers };

// Per-creation statistics of one maker: wall-clock time, and thread CPU time as a cross-check
// that leaves out the time a rank spends descheduled on an oversubscribed node.
struct MakerStats {
  Stats wall, cpu;
};

// `count` creations of the half by `maker` (timed by the caller; RBC's loop is its adapter's
// own, so that only RBC's calls are in it). Returns the number of calls that failed.
int make_halves(Maker maker, const rangecomm::Comm& world_range,
#if defined(RANGECOMM_BENCH_RBC)
                const rbc_baseline::Comm* rbc_world,
#endif
                const Half& half, int count) {
  int bad = 0;
  switch (maker) {
    case kRange:
      for (int i = 0; i < count; ++i) {
        rangecomm::Comm c;
        bad |= rangecomm::Split_Comm(world_range, half.first, half.last, &c);
        bad |= rangecomm::Comm_free(&c);
      }
      break;
    case kRangeKept: {
      rangecomm::Comm c;
      for (int i = 0; i < count; ++i)
        bad |= rangecomm::Split_Comm(world_range, half.first, half.last, &c);
      bad |= rangecomm::Comm_free(&c);
      break;
    }
#if defined(RANGECOMM_BENCH_RBC)
    case kRbc:
    case kRbcKept:
      rbc_baseline::create_batch(*rbc_world, half.first, half.last, count, maker == kRbcKept);
      break;
#endif
    default:
      break;
  }
  return bad;
}

// Every maker's batches, interleaved: batch b runs each maker once, in an order that rotates
// with b, so that a change of the machine's load meets all of them alike. Each batch starts
// after a barrier; a batch's time is the slowest rank's.
void bench_creations(const rangecomm::Comm& world_range,
#if defined(RANGECOMM_BENCH_RBC)
                     const rbc_baseline::Comm* rbc_world,
#endif
                     const Half& half, const Options& o, int makers, MakerStats out[kMakers]) {
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  // Untimed check that the half is what we think it is.
  {
    rangecomm::Comm c;
    check(rangecomm::Split_Comm(world_range, half.first, half.last, &c), "Split_Comm (half)");
    if (c.is_null() || c.size() != half.size || c.rank() != world_rank - half.first) {
      std::fprintf(stderr,
                   "create_bench: rank %d: range half has size %d rank %d, expected %d %d\n",
                   world_rank, c.is_null() ? -1 : c.size(), c.is_null() ? -1 : c.rank(), half.size,
                   world_rank - half.first);
      failures.add();
    }
    check(rangecomm::Comm_free(&c), "Comm_free");
  }
  auto make = [&](int m, int count) {
    return make_halves(static_cast<Maker>(m), world_range,
#if defined(RANGECOMM_BENCH_RBC)
                       rbc_world,
#endif
                       half, count);
  };
  int bad = 0;
  for (int m = 0; m < makers; ++m) bad |= make(m, o.warmup_create * o.batch_size / 10 + 1);
  std::vector<double> wall_us[kMakers], cpu_us[kMakers];
  for (int b = 0; b < o.batches; ++b) {
    for (int k = 0; k < makers; ++k) {
      const int m = (b + k) % makers;
      MPI_Barrier(MPI_COMM_WORLD);
      double c0 = thread_cpu_seconds();
      double t0 = MPI_Wtime();
      bad |= make(m, o.batch_size);
      double t1 = MPI_Wtime();
      double c1 = thread_cpu_seconds();
      wall_us[m].push_back((t1 - t0) * 1e6 / o.batch_size);
      cpu_us[m].push_back((c1 - c0) * 1e6 / o.batch_size);
    }
  }
  if (bad != 0) check(bad, "a creation or Comm_free in the timed loops");
  for (int m = 0; m < makers; ++m) {
    out[m].wall = stats_of(max_over_ranks(wall_us[m]));
    out[m].cpu = stats_of(max_over_ranks(cpu_us[m]));
  }
}

Stats bench_create_group(const Half& half, const Options& o) {
  MPI_Group world_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int ranges[1][3] = {{half.first, half.last, 1}};
  std::vector<double> us;
  for (int r = 0; r < o.warmup_create + o.reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Group g;
    MPI_Comm c;
    int rc1 = MPI_Group_range_incl(world_group, 1, ranges, &g);
    int rc2 = MPI_Comm_create_group(MPI_COMM_WORLD, g, 4711, &c);
    double t1 = MPI_Wtime();
    check(rc1, "MPI_Group_range_incl");
    check(rc2, "MPI_Comm_create_group");
    if (r == 0) {
      int size = -1;
      MPI_Comm_size(c, &size);
      if (size != half.size) {
        std::fprintf(stderr, "create_bench: MPI_Comm_create_group made size %d, expected %d\n",
                     size, half.size);
        failures.add();
      }
    }
    MPI_Comm_free(&c);
    MPI_Group_free(&g);
    if (r >= o.warmup_create) us.push_back((t1 - t0) * 1e6);
  }
  MPI_Group_free(&world_group);
  return stats_of(max_over_ranks(us));
}

Stats bench_split(const Half& half, const Options& o) {
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  std::vector<double> us;
  for (int r = 0; r < o.warmup_create + o.reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Comm c;
    int rc = MPI_Comm_split(MPI_COMM_WORLD, half.color, world_rank, &c);
    double t1 = MPI_Wtime();
    check(rc, "MPI_Comm_split");
    if (r == 0) {
      int size = -1;
      MPI_Comm_size(c, &size);
      if (size != half.size) {
        std::fprintf(stderr, "create_bench: MPI_Comm_split made size %d, expected %d\n", size,
                     half.size);
        failures.add();
      }
    }
    MPI_Comm_free(&c);
    if (r >= o.warmup_create) us.push_back((t1 - t0) * 1e6);
  }
  return stats_of(max_over_ranks(us));
}

// ---------------------------------------------------------------------------------------------
// 2. Ping-pong

// Mean one-way latency in microseconds over `iters` round trips. The lambdas are inlined, so
// both variants run the same loop around their send and receive calls.
template <class Send, class Recv>
double pingpong(bool initiator, int iters, int bytes, char* sbuf, char* rbuf, Send send,
                Recv recv) {
  double t0 = MPI_Wtime();
  if (initiator) {
    for (int i = 0; i < iters; ++i) {
      send(sbuf, bytes);
      recv(rbuf, bytes);
    }
  } else {
    for (int i = 0; i < iters; ++i) {
      recv(rbuf, bytes);
      send(rbuf, bytes);
    }
  }
  double t1 = MPI_Wtime();
  return (t1 - t0) * 1e6 / (2.0 * iters);
}

struct PingPongResult {
  int bytes;
  Stats native, range;
};

std::vector<PingPongResult> bench_pingpong(const rangecomm::Comm& world_range, const Options& o) {
  int world_rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  std::vector<PingPongResult> results;
  const bool member = world_rank == 0 || world_rank == p - 1;

  if (!member) {
    // Stay out of the way: a blocking MPI_Barrier would spin and take a core from the pair.
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    int done = 0;
    while (!done) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return results;
  }

  // Native communicator of {0, p-1}: created by the two members only.
  MPI_Group world_group, pair_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int pair_ranks[2] = {0, p - 1};
  MPI_Group_incl(world_group, 2, pair_ranks, &pair_group);
  MPI_Comm native;
  check(MPI_Comm_create_group(MPI_COMM_WORLD, pair_group, 4712, &native),
        "MPI_Comm_create_group (pair)");
  MPI_Group_free(&pair_group);
  MPI_Group_free(&world_group);

  // Range of {0, p-1}: first 0, last p-1, stride p-1.
  rangecomm::Comm pair;
  check(rangecomm::Split_Comm(world_range, 0, p - 1, p - 1, &pair), "Split_Comm (pair)");
  const int my_pair_rank = world_rank == 0 ? 0 : 1;
  if (pair.is_null() || pair.size() != 2 || pair.rank() != my_pair_rank ||
      pair.rank_in_root(1) != p - 1) {
    std::fprintf(stderr, "create_bench: rank %d: pair range is wrong (null %d)\n", world_rank,
                 int(pair.is_null()));
    failures.add();
  }
  const int peer = 1 - my_pair_rank;
  const bool initiator = world_rank == 0;
  const int tag = 7;

  auto native_send = [&](char* b, int n) { MPI_Send(b, n, MPI_BYTE, peer, tag, native); };
  auto native_recv = [&](char* b, int n) {
    MPI_Recv(b, n, MPI_BYTE, peer, tag, native, MPI_STATUS_IGNORE);
  };
  int range_bad = 0;
  auto range_send = [&](char* b, int n) {
    range_bad |= rangecomm::Send(b, n, MPI_BYTE, peer, tag, pair);
  };
  auto range_recv = [&](char* b, int n) {
    range_bad |= rangecomm::Recv(b, n, MPI_BYTE, peer, tag, pair, MPI_STATUS_IGNORE);
  };

  for (int bytes : o.sizes) {
    std::vector<char> sbuf(std::max(bytes, 1)), rbuf(std::max(bytes, 1));
    for (int i = 0; i < bytes; ++i) sbuf[i] = static_cast<char>((i * 7 + bytes) & 0x7f);

    // Untimed correctness check of one range round trip, with statuses.
    if (bytes > 0) {
      MPI_Status st;
      std::fill(rbuf.begin(), rbuf.end(), 0);
      if (initiator) {
        check(rangecomm::Send(sbuf.data(), bytes, MPI_BYTE, peer, tag, pair), "rangecomm::Send");
        check(rangecomm::Recv(rbuf.data(), bytes, MPI_BYTE, peer, tag, pair, &st),
              "rangecomm::Recv");
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (st.MPI_SOURCE != peer || st.MPI_TAG != tag || count != bytes ||
            std::memcmp(sbuf.data(), rbuf.data(), bytes) != 0) {
          std::fprintf(stderr,
                       "create_bench: range ping-pong of %d bytes: wrong echo (source %d tag %d "
                       "count %d)\n",
                       bytes, st.MPI_SOURCE, st.MPI_TAG, count);
          failures.add();
        }
      } else {
        check(rangecomm::Recv(rbuf.data(), bytes, MPI_BYTE, peer, tag, pair, &st),
              "rangecomm::Recv");
        check(rangecomm::Send(rbuf.data(), bytes, MPI_BYTE, peer, tag, pair), "rangecomm::Send");
      }
    }

    if (o.warmup > 0) {
      pingpong(initiator, o.warmup, bytes, sbuf.data(), rbuf.data(), native_send, native_recv);
      pingpong(initiator, o.warmup, bytes, sbuf.data(), rbuf.data(), range_send, range_recv);
    }
    std::vector<double> t_native, t_range;
    for (int r = 0; r < o.rounds; ++r) {
      auto run_native = [&] {
        t_native.push_back(pingpong(initiator, o.iters, bytes, sbuf.data(), rbuf.data(),
                                    native_send, native_recv));
      };
      auto run_range = [&] {
        std::fill(rbuf.begin(), rbuf.end(), 0);
        t_range.push_back(
            pingpong(initiator, o.iters, bytes, sbuf.data(), rbuf.data(), range_send, range_recv));
        if (initiator && bytes > 0 && std::memcmp(sbuf.data(), rbuf.data(), bytes) != 0) {
          std::fprintf(stderr, "create_bench: range ping-pong of %d bytes: data mismatch\n", bytes);
          failures.add();
        }
      };
      if (r % 2 == 0) {
        run_native();
        run_range();
      } else {
        run_range();
        run_native();
      }
    }
    results.push_back({bytes, stats_of(t_native), stats_of(t_range)});
  }
  if (range_bad != 0) check(range_bad, "rangecomm::Send/Recv in the timed loop");

  check(rangecomm::Comm_free(&pair), "Comm_free (pair)");
  MPI_Comm_free(&native);

  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  return results;
}

// ---------------------------------------------------------------------------------------------
// Output

std::string fmt_us(double us) {
  char b[32];
  if (us < 0.01)
    std::snprintf(b, sizeof b, "%.5f", us);
  else if (us < 10)
    std::snprintf(b, sizeof b, "%.4f", us);
  else if (us < 1000)
    std::snprintf(b, sizeof b, "%.2f", us);
  else
    std::snprintf(b, sizeof b, "%.0f", us);
  return b;
}

std::vector<benchcli::Row> to_rows(const std::vector<Row>& rows) {
  std::vector<benchcli::Row> out;
  for (const Row& r : rows)
    out.push_back(benchcli::make_row(r.experiment, r.variant, std::to_string(r.param), r.ranks,
                                     r.s.median, r.s.min, r.s.max, r.ratio));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);

  Options o;
  CLI::App app{
      "Communicator creation time and ping-pong latency: range communicators "
      "(rangecomm) versus native MPI communicators, on MPI_COMM_WORLD (paper Fig. 5).",
      "create_bench"};
  add_options(app, &o);
  int exit_code = 0;
  if (!benchcli::parse(app, argc, argv, &exit_code)) return exit_code;

  const double t_start = MPI_Wtime();
  rangecomm::Comm world_range;
  check(rangecomm::Create_Comm(MPI_COMM_WORLD, &world_range), "rangecomm::Create_Comm");
  if (world_range.is_null() || world_range.size() != p || world_range.rank() != rank) {
    std::fprintf(stderr, "create_bench: rank %d: world range is wrong\n", rank);
    failures.add();
  }

  const Half half = my_half(rank, p);
  MakerStats made[kMakers];
#if defined(RANGECOMM_BENCH_RBC)
  const int makers = kMakers;
#else
  const int makers = kRbc;  // rangecomm's alone
#endif
#if defined(RANGECOMM_BENCH_RBC)
  MPI_Comm rbc_mpi;  // RBC's own duplicate of the world
  MPI_Comm_dup(MPI_COMM_WORLD, &rbc_mpi);
  {
    rbc_baseline::Comm rbc_world;
    check(rbc_baseline::from_mpi(rbc_mpi, &rbc_world), "RBC::Create_Comm_from_MPI");
    bench_creations(world_range, &rbc_world, half, o, makers, made);
  }
  MPI_Comm_free(&rbc_mpi);
#else
  bench_creations(world_range, half, o, makers, made);
#endif
  Stats s_group = bench_create_group(half, o);
  Stats s_split = bench_split(half, o);

  std::vector<PingPongResult> pp;
  if (p >= 2) pp = bench_pingpong(world_range, o);

  check(rangecomm::Comm_free(&world_range), "Comm_free (world)");
  const double t_total = MPI_Wtime() - t_start;

  const int errors = failures.total();

  if (rank == 0) {
    const long half_size = half.size;
    std::vector<Row> rows;
    // Variants: range, range_kept, rbc, rbc_kept (wall), each also as <variant>_cpu.
    const char* const variants[kMakers] = {"range", "range_kept", "rbc", "rbc_kept"};
    for (int m = 0; m < makers; ++m) {
      const MakerStats& st = made[m];
      rows.push_back(
          {"create", variants[m], half_size, p, st.wall, st.wall.median / s_group.median});
      rows.push_back({"create", std::string(variants[m]) + "_cpu", half_size, p, st.cpu,
                      st.cpu.median / s_group.median});
    }
    rows.push_back({"create", "create_group", half_size, p, s_group, 1.0});
    rows.push_back({"create", "split", half_size, p, s_split, s_split.median / s_group.median});
    for (const auto& r : pp) {
      rows.push_back({"pingpong", "native", r.bytes, p, r.native, 1.0});
      rows.push_back({"pingpong", "range", r.bytes, p, r.range, r.range.median / r.native.median});
    }

    nlohmann::json settings{
        {"reps", o.reps},    {"batches", o.batches}, {"batch_size", o.batch_size},
        {"sizes", o.sizes},  {"rounds", o.rounds},   {"iters", o.iters},
        {"warmup", o.warmup}};
    benchcli::emit("create_bench", o.out, to_rows(rows), settings, false, [&] {
      char lib[MPI_MAX_LIBRARY_VERSION_STRING];
      int len = 0;
      MPI_Get_library_version(lib, &len);
      std::string libs(lib, len);
      libs = libs.substr(0, libs.find_first_of("\n,"));
      std::replace(libs.begin(), libs.end(), '\t', ' ');
      std::printf("create_bench: %d ranks, %s\n\n", p, libs.c_str());

      if (p == 1)
        std::printf("Communicator creation of the single rank 0 (p = 1: no halves)\n");
      else
        std::printf("Communicator creation, one communicator per half (ranks 0..%d and %d..%d)\n",
                    p / 2 - 1, p / 2, p - 1);
      std::printf("time per creation in us, max over ranks per sample; statistics over samples\n");
      std::printf("%-44s %12s %12s %12s %12s %12s %14s\n", "variant (what is timed)", "samples",
                  "median_us", "min_us", "max_us", "cpu_med_us", "native/range");
      char samples[32];
      std::snprintf(samples, sizeof samples, "%dx%d", o.batches, o.batch_size);
      const char* const what[kMakers] = {"range: Split_Comm + Comm_free",
                                         "range: Split_Comm into one kept handle",
                                         "RBC: Comm_create_group into a new RBC::Comm",
                                         "RBC: Comm_create_group into one kept handle"};
      for (int m = 0; m < makers; ++m) {
        const MakerStats& st = made[m];
        std::printf("%-44s %12s %12s %12s %12s %12s %14s\n", what[m], samples,
                    fmt_us(st.wall.median).c_str(), fmt_us(st.wall.min).c_str(),
                    fmt_us(st.wall.max).c_str(), fmt_us(st.cpu.median).c_str(), "-");
      }
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.0fx", s_group.median / made[kRange].wall.median);
      std::printf("%-44s %12d %12s %12s %12s %12s %14s\n",
                  "MPI_Group_range_incl + MPI_Comm_create_group", o.reps,
                  fmt_us(s_group.median).c_str(), fmt_us(s_group.min).c_str(),
                  fmt_us(s_group.max).c_str(), "", ratio);
      std::snprintf(ratio, sizeof ratio, "%.0fx", s_split.median / made[kRange].wall.median);
      std::printf("%-44s %12d %12s %12s %12s %12s %14s\n", "MPI_Comm_split", o.reps,
                  fmt_us(s_split.median).c_str(), fmt_us(s_split.min).c_str(),
                  fmt_us(s_split.max).c_str(), "", ratio);
      std::printf("(native/range = native median / range median)\n\n");

      if (p < 2) {
        std::printf("Ping-pong skipped: needs at least 2 processes (p = 1).\n\n");
      } else {
        std::printf(
            "Ping-pong between world ranks 0 and %d: one-way latency (round trip / 2) in us\n",
            p - 1);
        std::printf("range = Split_Comm(world, 0, %d, stride %d) with rangecomm::Send/Recv;\n",
                    p - 1, p - 1);
        std::printf("native = MPI_Comm_create_group of {0, %d} with MPI_Send/MPI_Recv;\n", p - 1);
        std::printf(
            "%d alternating samples of %d round trips per variant, after %d warm-up round trips\n",
            o.rounds, o.iters, o.warmup);
        std::printf("%10s %12s %12s %12s %12s %12s %12s %14s\n", "bytes", "native_med",
                    "native_min", "native_max", "range_med", "range_min", "range_max",
                    "range/native");
        for (const auto& r : pp) {
          std::printf("%10d %12s %12s %12s %12s %12s %12s %14.3f\n", r.bytes,
                      fmt_us(r.native.median).c_str(), fmt_us(r.native.min).c_str(),
                      fmt_us(r.native.max).c_str(), fmt_us(r.range.median).c_str(),
                      fmt_us(r.range.min).c_str(), fmt_us(r.range.max).c_str(),
                      r.range.median / r.native.median);
        }
        std::printf("\n");
      }

      std::printf("Ratios:\n");
      std::printf("  creation  native/range: MPI_Comm_create_group %.0fx, MPI_Comm_split %.0fx\n",
                  s_group.median / made[kRange].wall.median,
                  s_split.median / made[kRange].wall.median);
      for (const auto& r : pp) {
        double q = r.range.median / r.native.median;
        std::printf("  ping-pong range/native, %d B: %.3f (%+.1f%%)\n", r.bytes, q,
                    (q - 1.0) * 100.0);
      }
      std::printf("total time %.1f s%s\n", t_total, errors ? "" : "; no errors");
    });
    if (errors) std::fprintf(stderr, "create_bench: %d error(s), see above\n", errors);
    std::fflush(stdout);
  }

  const int status = errors ? 1 : 0;
  MPI_Finalize();
  return status;
}
