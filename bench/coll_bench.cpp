// coll_bench: collectives on a range communicator against the native collective on a real
// communicator of the same processes (paper Fig. 4 / Fig. 9), the overlap of nonblocking
// collectives with computation (NBCBench method, paper 004), and creation + broadcast
// (paper Fig. 7). Everything is measured in one run, native and range alternating.
//
//  latency:  for each collective and message size, one sample = mean time of --iters calls
//            after a barrier, max over ranks; --rounds samples per variant, alternating order.
//            On all processes, or with --on half on each process's half (both halves at
//            once, each its own communicator). ibcast completes by Wait; ibcast_test (only
//            when named in --colls) by a loop of Test calls.
//  overlap:  t_pure = start + wait; t_cpu = computation alone, a fixed amount of work
//            calibrated to take about t_pure; t_ovl = start, the same work calling Test every
//            --test-every us worth of it, wait. Overlap (IMB-NBC
//            formula) = 100 * max(0, min(1, (t_pure + t_cpu - t_ovl) / min(t_pure, t_cpu))).
//            Rows overlap_X (percent), and pure_X (t_pure) and extra_X (t_ovl - t_cpu: what
//            the operation still adds to the computation) in microseconds. X = shift is no
//            collective but the floor of a broadcast's data movement: every process sends the
//            message to the next and receives it from the previous (Isend + Irecv).
//  create+bcast: a range made from the world range plus k broadcasts of n ints, against the
//            cheaper of MPI_Comm_create_group and MPI_Comm_split plus the same broadcasts.
//
// Built with -Drbc or -Dkadis (bench/baselines), the latency experiment also runs the original
// RBC library's operation on an RBC range of the same processes (variant rbc, its ratio also
// against native), in the same alternating rounds.
//
// Output on rank 0: a table, CSV rows experiment,variant,param,ranks,median_us,min_us,
// max_us,ratio_vs_native (--format csv, or --output FILE) or JSON (--format json); --help.
// Benchmarks measure: a timing never makes the exit status nonzero.

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_cli.hpp"
#include "rangecomm/rangecomm.hpp"
// Declarations only; the rbc variants are compiled in (and the adapter linked) only with
// RANGECOMM_BENCH_RBC, but their lambdas are parsed in every build.
#include "baselines/rbc_baseline.hpp"

namespace {

struct Options {
  std::vector<long> sizes = {4, 64, 1024, 16384, 262144, 4194304};  // bytes per message
  int rounds = 5;
  int iters = 0;  // 0: chosen per size
  long overlap_bytes = 1 << 20;
  double test_every_us = 50;
  benchcli::Output out;
  std::string colls = "barrier,bcast,reduce,allreduce,scan,gather,allgather,alltoall,ibcast,iscan";
  std::string experiments = "latency,overlap,create";
  std::string on = "whole";  // the latency experiment's communicator: whole or half
  bool wants(const std::string& list, const std::string& name) const {
    return ("," + list + ",").find("," + name + ",") != std::string::npos;
  }
};

void add_options(CLI::App& app, Options* o) {
  app.add_option("--sizes", o->sizes, "message sizes in bytes")
      ->delimiter(',')
      ->check(benchcli::at_least(1))
      ->capture_default_str();
  app.add_option("--rounds", o->rounds, "samples per variant (alternating native/range)")
      ->check(benchcli::at_least(1))
      ->capture_default_str();
  app.add_option("--iters", o->iters, "calls per sample (0: from 200 for small to 5 for 4 MiB)")
      ->check(benchcli::at_least(0))
      ->capture_default_str();
  app.add_option("--overlap-bytes", o->overlap_bytes, "message size of the overlap experiment")
      ->check(benchcli::at_least(4, 1LL << 30))
      ->capture_default_str();
  app.add_option("--test-every", o->test_every_us,
                 "computation between Test calls in the overlap experiment (us)")
      ->check(benchcli::at_least(1))
      ->capture_default_str();
  app.add_option("--colls", o->colls, "latency collectives")->capture_default_str();
  app.add_option("--experiments", o->experiments, "latency, overlap, create")
      ->capture_default_str();
  app.add_option("--on", o->on,
                 "the latency experiment's communicators: whole (all processes) or half (each "
                 "process's half, ranks 0..p/2-1 or p/2..p-1, its rows named <coll>_half)")
      ->check(CLI::IsMember({"whole", "half"}))
      ->capture_default_str();
  benchcli::add_output_options(app, &o->out);
}

int rank_ = 0, size_ = 1;

double now_us() { return MPI_Wtime() * 1e6; }

double median(std::vector<double> v) { return benchcli::stats(v).median; }

std::vector<benchcli::Row> rows;

void add_row(const std::string& e, const std::string& v, const std::string& p,
             std::vector<double> samples, double ratio) {
  benchcli::Stats st = benchcli::stats(samples);
  rows.push_back(benchcli::make_row(e, v, p, size_, st.median, st.min, st.max, ratio,
                                    e.rfind("overlap_", 0) == 0 ? "percent" : "us"));
}

// One sample: iters calls of f after a barrier, mean per call, max over ranks.
double sample(const std::function<void()>& f, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now_us();
  for (int i = 0; i < iters; ++i) f();
  double mine = (now_us() - t0) / iters, worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

// Alternates native, range and (when given) rbc samples, the order rotating every round;
// rows carry each median's ratio to native's.
void compare(const std::string& experiment, const std::string& param,
             const std::function<void()>& native, const std::function<void()>& range, int iters,
             int rounds, const std::function<void()>& rbc = {}) {
  const std::function<void()>* variants[] = {&native, &range, &rbc};
  const int count = rbc ? 3 : 2;
  std::vector<double> samples[3];
  for (int v = 0; v < count; ++v) (*variants[v])();  // warm up each
  for (int k = 0; k < rounds; ++k)
    for (int i = 0; i < count; ++i) {
      int v = (k + i) % count;
      samples[v].push_back(sample(*variants[v], iters));
    }
  const double base = median(samples[0]);
  add_row(experiment, "native", param, samples[0], 1.0);
  add_row(experiment, "range", param, samples[1], median(samples[1]) / base);
  if (rbc) add_row(experiment, "rbc", param, samples[2], median(samples[2]) / base);
}

// The rbc variant of a latency row: f called on the RBC range, or nothing without RBC.
#if defined(RANGECOMM_BENCH_RBC)
rbc_baseline::Comm g_rbc;
template <class F>
std::function<void()> rbc_variant(F f) {
  return [f] { f(g_rbc); };
}
#else
template <class F>
std::function<void()> rbc_variant(F) {
  return {};
}
#endif

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  std::fprintf(stderr, "coll_bench: %s failed (%d)\n", what, rc);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

void latency(const Options& o, const rangecomm::Comm& range, MPI_Comm native) {
  const std::string suffix = o.on == "half" ? "_half" : "";
  if (o.wants(o.colls, "barrier")) {  // no message size: one row, size 0
    if (rank_ == 0) std::fprintf(stderr, "  %-10s %9s bytes\n", "barrier", "0");
    compare(
        "barrier" + suffix, "0", [&] { check(MPI_Barrier(native), "MPI_Barrier"); },
        [&] { check(rangecomm::Barrier(range), "Barrier"); }, o.iters ? o.iters : 200, o.rounds,
        rbc_variant([](const auto& c) { check(rbc_baseline::barrier(c), "RBC::Barrier"); }));
  }
  for (long bytes : o.sizes) {
    int n = static_cast<int>(std::max(1L, bytes / 4));  // ints per message
    int iters =
        o.iters ? o.iters : static_cast<int>(std::clamp(2000000L / (bytes + 8000), 5L, 200L));
    std::vector<int> a(static_cast<size_t>(n) * size_, rank_), b(a.size());
    std::string param = std::to_string(n * 4);
    auto run = [&](const char* name, std::function<void()> nat, std::function<void()> rng,
                   std::function<void()> rbc = {}) {
      if (!o.wants(o.colls, name)) return;
      if (rank_ == 0) std::fprintf(stderr, "  %-10s %9s bytes\n", name, param.c_str());
      compare(name + suffix, param, nat, rng, iters, o.rounds, rbc);
    };
    int* pa = a.data();
    int* pb = b.data();
    run(
        "bcast", [&] { check(MPI_Bcast(a.data(), n, MPI_INT, 0, native), "MPI_Bcast"); },
        [&] { check(rangecomm::Bcast(a.data(), n, MPI_INT, 0, range), "Bcast"); },
        rbc_variant(
            [=](const auto& c) { check(rbc_baseline::bcast(pa, n, MPI_INT, 0, c), "RBC"); }));
    run(
        "ibcast",
        [&] {
          MPI_Request q;
          check(MPI_Ibcast(a.data(), n, MPI_INT, 0, native, &q), "MPI_Ibcast");
          check(MPI_Wait(&q, MPI_STATUS_IGNORE), "MPI_Wait");
        },
        [&] {
          rangecomm::Request q;
          check(rangecomm::Ibcast(a.data(), n, MPI_INT, 0, range, &q), "Ibcast");
          check(rangecomm::Wait(&q, MPI_STATUS_IGNORE), "Wait");
        },
        rbc_variant(
            [=](const auto& c) { check(rbc_baseline::ibcast_wait(pa, n, MPI_INT, 0, c), "RBC"); }));
    run(
        "ibcast_test",
        [&] {
          MPI_Request q;
          check(MPI_Ibcast(a.data(), n, MPI_INT, 0, native, &q), "MPI_Ibcast");
          for (int done = 0; !done;) check(MPI_Test(&q, &done, MPI_STATUS_IGNORE), "MPI_Test");
        },
        [&] {
          rangecomm::Request q;
          check(rangecomm::Ibcast(a.data(), n, MPI_INT, 0, range, &q), "Ibcast");
          for (int done = 0; !done;) check(rangecomm::Test(&q, &done, MPI_STATUS_IGNORE), "Test");
        },
        rbc_variant(
            [=](const auto& c) { check(rbc_baseline::ibcast_test(pa, n, MPI_INT, 0, c), "RBC"); }));
    run(
        "reduce",
        [&] {
          check(MPI_Reduce(a.data(), b.data(), n, MPI_INT, MPI_SUM, 0, native), "MPI_Reduce");
        },
        [&] {
          check(rangecomm::Reduce(a.data(), b.data(), n, MPI_INT, MPI_SUM, 0, range), "Reduce");
        },
        rbc_variant([=](const auto& c) {
          check(rbc_baseline::reduce(pa, pb, n, MPI_INT, MPI_SUM, 0, c), "RBC::Reduce");
        }));
    run(
        "allreduce",
        [&] {
          check(MPI_Allreduce(a.data(), b.data(), n, MPI_INT, MPI_SUM, native), "MPI_Allreduce");
        },
        [&] {
          check(rangecomm::Allreduce(a.data(), b.data(), n, MPI_INT, MPI_SUM, range), "Allreduce");
        },
        rbc_variant([=](const auto& c) {
          check(rbc_baseline::allreduce(pa, pb, n, MPI_INT, MPI_SUM, c), "RBC::Allreduce");
        }));
    run(
        "scan",
        [&] { check(MPI_Scan(a.data(), b.data(), n, MPI_INT, MPI_SUM, native), "MPI_Scan"); },
        [&] { check(rangecomm::Scan(a.data(), b.data(), n, MPI_INT, MPI_SUM, range), "Scan"); },
        rbc_variant([=](const auto& c) {
          check(rbc_baseline::scan(pa, pb, n, MPI_INT, MPI_SUM, c), "RBC::Scan");
        }));
    run(
        "iscan",
        [&] {
          MPI_Request q;
          check(MPI_Iscan(a.data(), b.data(), n, MPI_INT, MPI_SUM, native, &q), "MPI_Iscan");
          check(MPI_Wait(&q, MPI_STATUS_IGNORE), "MPI_Wait");
        },
        [&] {
          rangecomm::Request q;
          check(rangecomm::Iscan(a.data(), b.data(), n, MPI_INT, MPI_SUM, range, &q), "Iscan");
          check(rangecomm::Wait(&q, MPI_STATUS_IGNORE), "Wait");
        },
        rbc_variant([=](const auto& c) {
          check(rbc_baseline::iscan_wait(pa, pb, n, MPI_INT, MPI_SUM, c), "RBC::Iscan");
        }));
    // Gather-type sizes: n ints per process.
    run(
        "gather",
        [&] {
          check(MPI_Gather(a.data(), n, MPI_INT, b.data(), n, MPI_INT, 0, native), "MPI_Gather");
        },
        [&] {
          check(rangecomm::Gather(a.data(), n, MPI_INT, b.data(), n, MPI_INT, 0, range), "Gather");
        },
        rbc_variant([=](const auto& c) {
          check(rbc_baseline::gather(pa, n, MPI_INT, pb, 0, c), "RBC::Gather");
        }));
    run(
        "allgather",
        [&] {
          check(MPI_Allgather(a.data(), n, MPI_INT, b.data(), n, MPI_INT, native), "MPI_Allgather");
        },
        [&] {
          check(rangecomm::Allgather(a.data(), n, MPI_INT, b.data(), n, MPI_INT, range),
                "Allgather");
        },
        rbc_variant([=](const auto& c) {
          check(rbc_baseline::allgather(pa, n, MPI_INT, pb, c), "RBC::Allgather");
        }));
    int per = std::max(1, n / size_);  // alltoall: the message is split among the processes
    run(
        "alltoall",
        [&] {
          check(MPI_Alltoall(a.data(), per, MPI_INT, b.data(), per, MPI_INT, native),
                "MPI_Alltoall");
        },
        [&] {
          check(rangecomm::Alltoall(a.data(), per, MPI_INT, b.data(), per, MPI_INT, range),
                "Alltoall");
        },
        rbc_variant([=](const auto& c) {
          check(rbc_baseline::alltoall(pa, per, MPI_INT, pb, c), "RBC::Alltoall");
        }));
  }
}

// Computation is a fixed amount of work, as in NBCBench, not a stretch of wall-clock time: a
// rank that is descheduled (more ranks than cores) or busy copying inside a test call must
// take longer, or the overlap would be overstated. kWorkPerUnit iterations take about 1/rate
// microseconds on this rank, calibrated once.
constexpr int kWorkPerUnit = 200;
double g_units_per_us = 0;

void work_units(long units, long poll_every, const std::function<void()>& poll) {
  volatile double x = 1.0;
  for (long u = 0; u < units; ++u) {
    for (int i = 0; i < kWorkPerUnit; ++i) x = x * 1.0000001 + 1e-9;
    if (poll && poll_every > 0 && (u + 1) % poll_every == 0) poll();
  }
}

void calibrate_work() {
  MPI_Barrier(MPI_COMM_WORLD);
  long units = 0;
  double t0 = now_us();
  while (now_us() - t0 < 20000) {
    work_units(100, 0, nullptr);
    units += 100;
  }
  g_units_per_us = units / (now_us() - t0);
}

// Work worth about `us` microseconds (as calibrated), calling poll every `every` microseconds'
// worth of it.
void compute(double us, double every, const std::function<void()>& poll) {
  long units = static_cast<long>(us * g_units_per_us);
  long poll_every = std::max(1L, static_cast<long>(every * g_units_per_us));
  work_units(units, poll_every, poll);
}

struct Overlap {
  double percent, pure_us, extra_us;
};

// NBCBench-style overlap of one nonblocking operation (max over ranks of the times, as NBCBench
// reports the slowest process; each time the median of five samples).
template <class Start, class Test, class Wait>
Overlap overlap(Start start, Test test, Wait wait, double every) {
  auto timed = [](auto f) {
    std::vector<double> samples;
    for (int k = 0; k < 5; ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now_us();
      f();
      double mine = now_us() - t0, worst = 0;
      MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      samples.push_back(worst);
    }
    return median(samples);
  };
  start();  // warm up, as the latency experiment does
  wait();
  double t_pure = timed([&] {
    start();
    wait();
  });
  double t_cpu = timed([&] { compute(t_pure, every, nullptr); });
  double t_ovl = timed([&] {
    start();
    compute(t_pure, every, test);
    wait();
  });
  double ratio = (t_pure + t_cpu - t_ovl) / std::min(t_pure, t_cpu);
  // Below zero only by noise (the overlapped run faster than the computation alone).
  return {100.0 * std::max(0.0, std::min(1.0, ratio)), t_pure, std::max(0.0, t_ovl - t_cpu)};
}

void overlaps(const Options& o, const rangecomm::Comm& range, MPI_Comm native) {
  calibrate_work();
  int n = static_cast<int>(o.overlap_bytes / 4);
  std::vector<int> a(static_cast<size_t>(n), rank_), b(a.size());
  int per = std::max(1, n / size_);
  int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
  std::string param = std::to_string(o.overlap_bytes);
  MPI_Request nr[2];
  rangecomm::Request rr[2];
  int nreqs = 1;  // 2 for the shift
  auto ntest = [&] {
    int f;
    MPI_Testall(nreqs, nr, &f, MPI_STATUSES_IGNORE);
  };
  auto nwait = [&] { MPI_Waitall(nreqs, nr, MPI_STATUSES_IGNORE); };
  auto rtest = [&] {
    int f;
    rangecomm::Testall(nreqs, rr, &f, MPI_STATUSES_IGNORE);
  };
  auto rwait = [&] { rangecomm::Waitall(nreqs, rr, MPI_STATUSES_IGNORE); };
  auto both = [&](const char* name, std::function<void()> nstart, std::function<void()> rstart) {
    if (rank_ == 0) std::fprintf(stderr, "  overlap %s\n", name);
    Overlap on = overlap(nstart, ntest, nwait, o.test_every_us);
    Overlap orr = overlap(rstart, rtest, rwait, o.test_every_us);
    auto pair = [&](const char* what, double native_value, double range_value) {
      add_row(std::string(what) + name, "native", param, {native_value}, 1.0);
      add_row(std::string(what) + name, "range", param, {range_value},
              native_value > 0 ? range_value / native_value : 0);
    };
    pair("overlap_", on.percent, orr.percent);
    pair("pure_", on.pure_us, orr.pure_us);
    pair("extra_", on.extra_us, orr.extra_us);
  };
  if (size_ > 1) {
    nreqs = 2;
    both(
        "shift",
        [&] {
          MPI_Irecv(b.data(), n, MPI_INT, prev, 3, native, &nr[0]);
          MPI_Isend(a.data(), n, MPI_INT, next, 3, native, &nr[1]);
        },
        [&] {
          rangecomm::Irecv(b.data(), n, MPI_INT, prev, 3, range, &rr[0]);
          rangecomm::Isend(a.data(), n, MPI_INT, next, 3, range, &rr[1]);
        });
    nreqs = 1;
  }
  both(
      "ibcast", [&] { MPI_Ibcast(a.data(), n, MPI_INT, 0, native, &nr[0]); },
      [&] { rangecomm::Ibcast(a.data(), n, MPI_INT, 0, range, &rr[0]); });
  both(
      "iallreduce",
      [&] { MPI_Iallreduce(a.data(), b.data(), n, MPI_INT, MPI_SUM, native, &nr[0]); },
      [&] { rangecomm::Iallreduce(a.data(), b.data(), n, MPI_INT, MPI_SUM, range, &rr[0]); });
  both(
      "ialltoall",
      [&] { MPI_Ialltoall(a.data(), per, MPI_INT, b.data(), per, MPI_INT, native, &nr[0]); },
      [&] { rangecomm::Ialltoall(a.data(), per, MPI_INT, b.data(), per, MPI_INT, range, &rr[0]); });
}

// Paper Fig. 7: creating the communicator of the lower half plus k broadcasts.
void create_and_bcast(const Options& o, const rangecomm::Comm& world) {
  MPI_Group world_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int h = std::max(1, size_ / 2), lower = rank_ < h, first = lower ? 0 : h,
      last = lower ? h - 1 : size_ - 1;
  for (int bcasts : {1, 50}) {
    for (int n : {1, 1024}) {
      std::vector<int> buf(n, rank_);
      std::string param = std::to_string(n) + "x" + std::to_string(bcasts);
      auto via_group = [&] {
        MPI_Group g;
        int triple[1][3] = {{first, last, 1}};
        MPI_Group_range_incl(world_group, 1, triple, &g);
        MPI_Comm c;
        check(MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &c), "MPI_Comm_create_group");
        for (int k = 0; k < bcasts; ++k) MPI_Bcast(buf.data(), n, MPI_INT, 0, c);
        MPI_Comm_free(&c);
        MPI_Group_free(&g);
      };
      auto via_split = [&] {
        MPI_Comm c;
        check(MPI_Comm_split(MPI_COMM_WORLD, lower, rank_, &c), "MPI_Comm_split");
        for (int k = 0; k < bcasts; ++k) MPI_Bcast(buf.data(), n, MPI_INT, 0, c);
        MPI_Comm_free(&c);
      };
      auto via_range = [&] {
        rangecomm::Comm c;
        check(rangecomm::Split_Comm(world, first, last, &c), "Split_Comm");
        for (int k = 0; k < bcasts; ++k) rangecomm::Bcast(buf.data(), n, MPI_INT, 0, c);
      };
      if (rank_ == 0) std::fprintf(stderr, "  create+bcast %s\n", param.c_str());
      via_group();  // warm up all three, as compare() does
      via_split();
      via_range();
      std::vector<double> g, s, r;
      for (int k = 0; k < o.rounds; ++k) {
        g.push_back(sample(via_group, 5));
        s.push_back(sample(via_split, 5));
        r.push_back(sample(via_range, 5));
      }
      double best = std::min(median(g), median(s));
      add_row("create_bcast", "create_group", param, g, 1.0);
      add_row("create_bcast", "split", param, s, median(s) / median(g));
      add_row("create_bcast", "range", param, r, median(r) / best);
    }
  }
  MPI_Group_free(&world_group);
}

void print(const Options& o) {
  nlohmann::json settings{{"sizes", o.sizes},
                          {"rounds", o.rounds},
                          {"iters", o.iters},
                          {"overlap_bytes", o.overlap_bytes},
                          {"test_every_us", o.test_every_us},
                          {"colls", o.colls},
                          {"experiments", o.experiments}};
  benchcli::emit("coll_bench", o.out, rows, settings, false, [&] {
    std::printf("coll_bench: %d ranks (overlap rows are percent, others microseconds)\n", size_);
    std::printf("%-18s %-13s %12s %12s %12s %12s %10s\n", "experiment", "variant", "param",
                "median", "min", "max", "ratio");
    for (const benchcli::Row& r : rows)
      std::printf("%-18s %-13s %12s %12.3f %12.3f %12.3f %10.3f\n", r.experiment.c_str(),
                  r.variant.c_str(), r.param.c_str(), r.median, r.min, r.max, r.ratio);
  });
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  Options o;
  CLI::App app{
      "Collectives on a range communicator vs the native collective on the same "
      "processes (latency, overlap, creation + broadcast).",
      "coll_bench"};
  add_options(app, &o);
  int exit_code = 0;
  if (!benchcli::parse(app, argc, argv, &exit_code)) return exit_code;
  rangecomm::Comm world, range;
  check(rangecomm::Create_Comm(MPI_COMM_WORLD, &world), "Create_Comm");
  // The range of all processes, one level below the attachment, as a user would make it.
  check(rangecomm::Split_Comm(world, 0, size_ - 1, &range), "Split_Comm");
  MPI_Comm native;
  MPI_Comm_dup(MPI_COMM_WORLD, &native);
  // The latency experiment's processes: all, or this process's half (--on half).
  const bool halves = o.on == "half" && size_ > 1;
  const bool lower = !halves || rank_ < size_ / 2;
  const int first = lower ? 0 : size_ / 2, last = halves && lower ? size_ / 2 - 1 : size_ - 1;
  rangecomm::Comm half_range;
  MPI_Comm half_native = MPI_COMM_NULL;
  if (halves) {
    check(rangecomm::Split_Comm(world, first, last, &half_range), "Split_Comm (half)");
    MPI_Comm_split(MPI_COMM_WORLD, first, rank_, &half_native);
  }
#if defined(RANGECOMM_BENCH_RBC)
  // RBC's range of the latency experiment's processes, on a duplicate of its own (RBC sends on
  // the MPI communicator)
  MPI_Comm rbc_mpi;
  MPI_Comm_dup(MPI_COMM_WORLD, &rbc_mpi);
  {
    rbc_baseline::Comm rbc_world;
    check(rbc_baseline::from_mpi(rbc_mpi, &rbc_world), "RBC::Create_Comm_from_MPI");
    check(rbc_baseline::create(rbc_world, first, last, 1, &g_rbc), "RBC::Comm_create_group");
  }
#endif
  if (o.wants(o.experiments, "latency")) {
    if (rank_ == 0) std::fprintf(stderr, "coll_bench: latency\n");
    latency(o, halves ? half_range : range, halves ? half_native : native);
  }
  if (o.wants(o.experiments, "overlap")) {
    if (rank_ == 0) std::fprintf(stderr, "coll_bench: overlap\n");
    overlaps(o, range, native);
  }
  if (o.wants(o.experiments, "create")) {
    if (rank_ == 0) std::fprintf(stderr, "coll_bench: creation + broadcast\n");
    create_and_bcast(o, world);
  }
  if (rank_ == 0) print(o);
  MPI_Comm_free(&native);
  if (half_native != MPI_COMM_NULL) MPI_Comm_free(&half_native);
#if defined(RANGECOMM_BENCH_RBC)
  g_rbc = rbc_baseline::Comm();
  MPI_Comm_free(&rbc_mpi);
#endif
  range = rangecomm::Comm();
  half_range = rangecomm::Comm();
  world = rangecomm::Comm();
  MPI_Finalize();
  return 0;
}
