// The paper's experiments in simulated time: run under SMPI (tools/run-scaling.sh) at any number
// of simulated processes, each measurement once with range communicators and once natively, in
// the same run. Rank 0 prints CSV rows "experiment,p,variant,parameter,seconds": simulated
// seconds per operation, the slowest process's (after a barrier, each process times its
// repetitions back to back); rows whose experiment ends in _count hold a count there instead.
// Every result is checked; a wrong one ends the run with exit status 1 and says where.
//
//   sim_scaling.so EXPERIMENT [--reps R] [--warmups W] [--per-rank N] [--variants V,...]
//
// Each measurement runs W times untimed (1 by default) before its R timed repetitions.
//
//   create  a communicator of each half of the processes, then freeing it: Split_Comm against
//           MPI_Comm_create_group and MPI_Comm_split (paper Fig. 6), and against a model of
//           MPICH's and Open MPI's creation (model_*: their context-id agreement's messages
//           and their measured local work)
//   fig7    that creation plus one broadcast of 1024 ints in the new communicator (Fig. 7)
//   coll    Bcast and Allreduce of 1, 1024 and 65536 ints on all processes (Fig. 9's sizes)
//   iscan   Iscan of one int, started and waited for (Fig. 4)
//   contact Iallreduce and Ibcast of one int64 over each half on a range made for each call
//           (every edge a first contact), on a range kept, and on an MPI communicator kept
//   jquick  Janus Quicksort of N doubles per process (16) on ranges and on native
//           communicators made by create_group and by split (Fig. 8), SMPI's own creation and
//           the models' (model_*); --variants picks some of range, native_create_group,
//           native_split, model_{mpich,openmpi}_{create_group,split}, or all (the default);
//           after each variant, where its last sort went: jquick_create (the slowest
//           process's seconds creating and freeing communicators), jquick_levels_count (the
//           most distributed levels a process took part in), jquick_messages_count (data
//           messages sent by all processes)
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
int g_warmups = 1;
int g_per_rank = 16;
std::string g_variants = "all";

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
  for (int i = 0; i < g_warmups; ++i) op();  // untimed: first contacts, lazily made state
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < g_reps; ++i) op();
  double mine = (MPI_Wtime() - start) / g_reps, slowest = 0;
  // Nothing after the timed calls reaches a process still in them: early finishers would
  // otherwise send the reduction's (and the next checks') messages into processes still
  // polling, where the simulator carries them beside the timed traffic.
  MPI_Barrier(MPI_COMM_WORLD);
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

// Native creation as MPICH 4.0 and Open MPI 4.1 make it, as a model: SMPI creates a communicator
// without agreeing on a context id, which both libraries do in messages, so the model sends those
// messages over the simulated network, in the algorithms each library's source uses for them,
// and adds the local work of a creation as measured on real MPI at 2 ranks (where the half is one
// process and no message is sent) or fitted from there. Local work that grows with the group
// (tables of members, split's sort of the (color, key) pairs) is left out, so the model is a
// lower bound of native creation, above SMPI's idealised one.
//   MPICH create_group: one all-reduction (bitwise and) of its 65-int mask of free context ids
//     over the group, by recursive doubling in point-to-point messages on the parent
//     (MPII_Allreduce_group).
//   MPICH split: an allgather of each process's (color, key) over the parent (Bruck's, as MPICH
//     takes for small blocks), then the mask's all-reduction over the parent (recursive
//     doubling).
//   Open MPI create_group: three all-reductions of one int over the group, each up and down a
//     binary tree of point-to-point messages (ompi_comm_allreduce_group_nb): the next context
//     id's maximum and the agreement's minimum, then the activation's.
//   Open MPI split: the allgather over the parent, then those three all-reductions over the
//     parent as libnbc's nonblocking all-reduction makes small ones: a binomial tree's reduction
//     and broadcast.
struct NativeModel {
  const char* name;
  bool open_mpi, split;
  // Measured on real MPI at 2 ranks (docs/scaling.md), less what the model's messages take at 2
  // processes on that machine's network (0.3 us, 5.7 GB/s): none for a half of one process,
  // 0.8 us for MPICH's split, 2.1 us for Open MPI's.
  double local_seconds;
};
constexpr NativeModel kNativeModels[] = {
    {"model_mpich_create_group", false, false, 1.0e-6},
    {"model_mpich_split", false, true, 8.2e-6},
    {"model_openmpi_create_group", true, false, 3.6e-6},
    {"model_openmpi_split", true, true, 3.1e-6},
};
constexpr int kMaskInts = 65, kModelTag = 4242;

enum class Shape { recursive_doubling, binary_tree, binomial_tree };

// The processes a model's messages go among: their ranks in the parent, in the group's order,
// and this process's place among them.
struct Members {
  MPI_Comm parent;
  std::vector<int> ranks;
  int me;
  int size() const { return static_cast<int>(ranks.size()); }
};

// An all-reduction of count ints over the members in point-to-point messages on the parent.
// Recursive doubling folds the members beyond the largest power of two into their partners
// first and gives them the result last. The trees reduce up to member 0, then broadcast down: a
// binary tree's children of r are 2r+1 and 2r+2, a binomial tree's r+1, r+2, r+4, ... below r's
// lowest set bit.
void group_allreduce(int* data, int count, MPI_Op op, const Members& g, Shape shape) {
  std::vector<int> in(static_cast<size_t>(count));
  const int rank = g.me, size = g.size();
  auto at = [&](int member) { return g.ranks[static_cast<size_t>(member)]; };
  auto recv_reduce = [&](int from) {
    MPI_Recv(in.data(), count, MPI_INT, at(from), kModelTag, g.parent, MPI_STATUS_IGNORE);
    MPI_Reduce_local(in.data(), data, count, MPI_INT, op);
  };
  auto send = [&](int to) { MPI_Send(data, count, MPI_INT, at(to), kModelTag, g.parent); };
  auto recv = [&](int from) {
    MPI_Recv(data, count, MPI_INT, at(from), kModelTag, g.parent, MPI_STATUS_IGNORE);
  };
  if (shape == Shape::binary_tree) {
    for (int child : {2 * rank + 1, 2 * rank + 2})
      if (child < size) recv_reduce(child);
    if (rank > 0) {
      send((rank - 1) / 2);
      recv((rank - 1) / 2);
    }
    for (int child : {2 * rank + 1, 2 * rank + 2})
      if (child < size) send(child);
    return;
  }
  if (shape == Shape::binomial_tree) {
    int top = 1;  // rank's lowest set bit; for member 0 the power of two that covers the group
    while (top < size && (rank & top) == 0) {
      if (rank + top < size) recv_reduce(rank + top);
      top <<= 1;
    }
    if (rank > 0) {
      send(rank - top);
      recv(rank - top);
    }
    for (int m = top >> 1; m > 0; m >>= 1)
      if (rank + m < size) send(rank + m);
    return;
  }
  int pof2 = 1;
  while (pof2 * 2 <= size) pof2 *= 2;
  const int extra = size - pof2;
  if (rank >= pof2) {  // folded into rank - pof2
    send(rank - pof2);
    recv(rank - pof2);
    return;
  }
  if (rank < extra) recv_reduce(rank + pof2);
  for (int mask = 1; mask < pof2; mask <<= 1) {
    MPI_Sendrecv(data, count, MPI_INT, at(rank ^ mask), kModelTag, in.data(), count, MPI_INT,
                 at(rank ^ mask), kModelTag, g.parent, MPI_STATUS_IGNORE);
    MPI_Reduce_local(in.data(), data, count, MPI_INT, op);
  }
  if (rank < extra) send(rank + pof2);
}

// Bruck's allgather of two ints a process over the parent: after the step of distance d a
// process holds the blocks of itself and the 2d - 1 processes above it (cyclically). Returns
// the pairs in rank order.
std::vector<int> bruck_allgather(MPI_Comm parent, int a, int b) {
  int rank = 0, size = 1;
  MPI_Comm_rank(parent, &rank);
  MPI_Comm_size(parent, &size);
  std::vector<int> rotated(static_cast<size_t>(2 * size));
  rotated[0] = a;
  rotated[1] = b;
  for (int have = 1; have < size; have <<= 1) {
    const int blocks = std::min(have, size - have);
    MPI_Sendrecv(rotated.data(), 2 * blocks, MPI_INT, (rank - have + size) % size, kModelTag,
                 rotated.data() + 2 * have, 2 * blocks, MPI_INT, (rank + have) % size, kModelTag,
                 parent, MPI_STATUS_IGNORE);
  }
  std::vector<int> all(static_cast<size_t>(2 * size));
  for (int i = 0; i < size; ++i) {
    const size_t r = static_cast<size_t>((rank + i) % size);
    all[2 * r] = rotated[static_cast<size_t>(2 * i)];
    all[2 * r + 1] = rotated[static_cast<size_t>(2 * i + 1)];
  }
  return all;
}

// The model's messages and local work for a creation over the parent: a split's (color, key)
// (checked at this process's place; the caller may check the rest) and, for create_group, the
// group's members; every all-reduction's result is checked.
std::vector<int> modelled_creation(const NativeModel& m, const Members& g, int color, int key) {
  std::vector<int> pairs;
  if (m.split) {
    pairs = bruck_allgather(g.parent, color, key);
    const size_t me = static_cast<size_t>(g.ranks[static_cast<size_t>(g.me)]);
    check(pairs[2 * me] == color && pairs[2 * me + 1] == key,
          "model allgather: a wrong (color, key)");
  }
  const int low = *std::min_element(g.ranks.begin(), g.ranks.end());
  const int high = *std::max_element(g.ranks.begin(), g.ranks.end());
  const int mine = g.ranks[static_cast<size_t>(g.me)];
  if (m.open_mpi) {
    for (MPI_Op op : {MPI_MAX, MPI_MIN, MPI_MIN}) {
      int v = mine;
      group_allreduce(&v, 1, op, g, m.split ? Shape::binomial_tree : Shape::binary_tree);
      check(v == (op == MPI_MAX ? high : low), "model all-reduction: wrong result");
    }
  } else {
    // Member r clears bit r % 32 of int r % 65; the and of all has every member's bit cleared.
    std::vector<int> mask(kMaskInts, -1), expected(kMaskInts, -1);
    for (int r : g.ranks) {
      const int bit = static_cast<int>(1u << (r % 32));
      if (r == mine) mask[static_cast<size_t>(r % kMaskInts)] &= ~bit;
      expected[static_cast<size_t>(r % kMaskInts)] &= ~bit;
    }
    group_allreduce(mask.data(), kMaskInts, MPI_BAND, g, Shape::recursive_doubling);
    check(mask == expected, "model all-reduction: wrong mask");
  }
  smpi_execute(m.local_seconds);
  return pairs;
}

// This process's half as a model's members: the half for create_group, the world for split.
void modelled_half(const NativeModel& m) {
  const Half h = my_half();
  Members g{MPI_COMM_WORLD, {}, m.split ? g_rank : h.rank};
  for (int r = m.split ? 0 : h.first; r <= (m.split ? g_size - 1 : h.last); ++r)
    g.ranks.push_back(r);
  const std::vector<int> pairs = modelled_creation(m, g, h.first, g_rank);
  for (int r = 0; r < static_cast<int>(pairs.size()) / 2; ++r)
    check(pairs[static_cast<size_t>(2 * r + 1)] == r &&
              pairs[static_cast<size_t>(2 * r)] == (r < g_size / 2 ? 0 : g_size / 2),
          "model allgather: a wrong (color, key)");
}

// The creation hook of the simulated build (sim/compat), set while a sort on native
// communicators runs as a model: the model of the creation that sort's backend makes.
const NativeModel* g_hook_model = nullptr;

void model_hook(MPI_Comm parent, MPI_Group group, int color, int key) {
  const bool split = group == MPI_GROUP_NULL;
  check(split == g_hook_model->split, std::string(g_hook_model->name) + ": the sort made a " +
                                          (split ? "split" : "create_group"));
  Members g{parent, {}, 0};
  if (split) {
    int size = 0;
    MPI_Comm_size(parent, &size);
    MPI_Comm_rank(parent, &g.me);
    for (int r = 0; r < size; ++r) g.ranks.push_back(r);
  } else {
    int size = 0;
    MPI_Group_size(group, &size);
    MPI_Group_rank(group, &g.me);
    std::vector<int> in(static_cast<size_t>(size));
    g.ranks.resize(static_cast<size_t>(size));
    for (int i = 0; i < size; ++i) in[static_cast<size_t>(i)] = i;
    MPI_Group parent_group;
    MPI_Comm_group(parent, &parent_group);
    MPI_Group_translate_ranks(group, size, in.data(), parent_group, g.ranks.data());
    MPI_Group_free(&parent_group);
  }
  modelled_creation(*g_hook_model, g, color, key);
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
  // The models broadcast on a communicator SMPI made beforehand, so SMPI's own creation is not
  // counted in them.
  MPI_Comm made = native_half(false);
  for (const NativeModel& m : kNativeModels) {
    row(name, m.name, with_bcast ? n : 0, timed([&] {
          modelled_half(m);
          if (with_bcast) {
            auto v = payload(0);
            check_mpi(MPI_Bcast(v.data(), n, MPI_INT, 0, made), "native Bcast");
            check_bcast(v, h.first, "native Bcast");
          }
        }));
  }
  MPI_Comm_free(&made);
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

// First contact: a nonblocking all-reduction and broadcast of one int64 over each half, on a
// range made for each call (the first message on every edge carries a binding and is taken
// through the matching engine, as on every level of Janus Quicksort), on one range kept, and
// on an MPI communicator kept (MPICH's schedules, sim/compat/smpi_requests.cpp).
void experiment_contact(const rangecomm::Comm& world) {
  const Half h = my_half();
  const std::int64_t mine = g_rank + 1;
  const std::int64_t sum = (2LL * h.first + h.size + 1) * h.size / 2;  // first+1 .. last+1
  rangecomm::Comm kept = range_half(world);
  MPI_Comm native = native_half(false);
  auto iallreduce = [&](const rangecomm::Comm& c) {
    std::int64_t got = 0;
    rangecomm::Request r;
    check_mpi(rangecomm::Iallreduce(&mine, &got, 1, MPI_INT64_T, MPI_SUM, c, &r), "Iallreduce");
    check_mpi(rangecomm::Wait(&r, MPI_STATUS_IGNORE), "Wait");
    check(got == sum, "range Iallreduce: wrong sum");
  };
  auto ibcast = [&](const rangecomm::Comm& c) {
    std::int64_t value = h.rank == 0 ? 1000 + h.first : -1;
    rangecomm::Request r;
    check_mpi(rangecomm::Ibcast(&value, 1, MPI_INT64_T, 0, c, &r), "Ibcast");
    check_mpi(rangecomm::Wait(&r, MPI_STATUS_IGNORE), "Wait");
    check(value == 1000 + h.first, "range Ibcast: wrong value");
  };
  auto fresh = [&](auto op) {
    return [&world, op] {
      rangecomm::Comm c = range_half(world);
      op(c);
      check_mpi(rangecomm::Comm_free(&c), "Comm_free");
    };
  };
  row("contact_iallreduce", "range", 1, timed(fresh(iallreduce)));
  row("contact_iallreduce", "range_kept", 1, timed([&] { iallreduce(kept); }));
  row("contact_iallreduce", "native", 1, timed([&] {
        std::int64_t got = 0;
        MPI_Request r;
        check_mpi(MPI_Iallreduce(&mine, &got, 1, MPI_INT64_T, MPI_SUM, native, &r),
                  "MPI_Iallreduce");
        check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
        check(got == sum, "native Iallreduce: wrong sum");
      }));
  row("contact_ibcast", "range", 1, timed(fresh(ibcast)));
  row("contact_ibcast", "range_kept", 1, timed([&] { ibcast(kept); }));
  row("contact_ibcast", "native", 1, timed([&] {
        std::int64_t value = h.rank == 0 ? 1000 + h.first : -1;
        MPI_Request r;
        check_mpi(MPI_Ibcast(&value, 1, MPI_INT64_T, 0, native, &r), "MPI_Ibcast");
        check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
        check(value == 1000 + h.first, "native Ibcast: wrong value");
      }));
  check_mpi(rangecomm::Comm_free(&kept), "Comm_free");
  MPI_Comm_free(&native);
}

// Sorted across the processes, balanced, and the same multiset (by sum and count). Balanced
// output leaves only the last processes empty, so each process compares its last element with
// the next process's first: one message per process, where an allgather of every process's
// ends would make the simulator carry p^2 messages (SMPI's allgather sends to every process).
void check_sorted(const std::vector<double>& v, long long n_total, double input_sum) {
  check(std::is_sorted(v.begin(), v.end()), "jquick: not sorted locally");
  const long long base = n_total / g_size, extra = n_total % g_size;
  check(static_cast<long long>(v.size()) == base + (g_rank < extra ? 1 : 0), "jquick: unbalanced");
  const int before = g_rank > 0 ? g_rank - 1 : MPI_PROC_NULL;
  const int after = g_rank + 1 < g_size ? g_rank + 1 : MPI_PROC_NULL;
  double front = v.empty() ? 0 : v.front(), next_front = 0;
  int next_count = 0;
  MPI_Status status;
  check_mpi(MPI_Sendrecv(&front, v.empty() ? 0 : 1, MPI_DOUBLE, before, 0, &next_front, 1,
                         MPI_DOUBLE, after, 0, MPI_COMM_WORLD, &status),
            "MPI_Sendrecv");
  if (after != MPI_PROC_NULL)
    check_mpi(MPI_Get_count(&status, MPI_DOUBLE, &next_count), "MPI_Get_count");
  check(v.empty() || next_count == 0 || v.back() <= next_front,
        "jquick: not sorted across processes");
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
  // The model_* variants sort on native communicators whose every creation first sends the
  // messages of its model (kNativeModels).
  struct Variant {
    const char* name;
    rangecomm::SortBackend backend;
    const NativeModel* model;
  };
  std::vector<Variant> variants = {
      {"range", rangecomm::SortBackend::range, nullptr},
      {"native_create_group", rangecomm::SortBackend::native_create_group, nullptr},
      {"native_split", rangecomm::SortBackend::native_split, nullptr}};
  for (const NativeModel& m : kNativeModels)
    variants.push_back({m.name,
                        m.split ? rangecomm::SortBackend::native_split
                                : rangecomm::SortBackend::native_create_group,
                        &m});
  std::string names;
  int ran = 0;
  for (const Variant& variant : variants) {
    names += names.empty() ? variant.name : std::string(", ") + variant.name;
    if (g_variants != "all" &&
        ("," + g_variants + ",").find(std::string(",") + variant.name + ",") == std::string::npos)
      continue;
    ++ran;
    rangecomm::JQuickOptions options;
    options.backend = variant.backend;
    rangecomm::JQuickStats stats;
    options.stats = &stats;
    g_hook_model = variant.model;
    rc_smpi_on_creation = variant.model != nullptr ? model_hook : nullptr;
    std::vector<double> v;
    row("jquick", variant.name, n, timed([&] {
          v = input;
          check_mpi(rangecomm::jquick_sort(v, MPI_COMM_WORLD, options), "jquick_sort");
        }));
    rc_smpi_on_creation = nullptr;
    check_sorted(v, static_cast<long long>(n) * g_size, total);
    // Where the last timed sort went: its slowest process's time creating and freeing
    // communicators, its deepest process's levels, and the data messages of all processes.
    double create_seconds = 0;
    long long levels = 0, messages = 0;
    const long long my_levels = stats.levels, my_messages = stats.messages;
    MPI_Reduce(&stats.create_seconds, &create_seconds, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&my_levels, &levels, 1, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&my_messages, &messages, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    row("jquick_create", variant.name, n, create_seconds);
    row("jquick_levels_count", variant.name, n, static_cast<double>(levels));
    row("jquick_messages_count", variant.name, n, static_cast<double>(messages));
  }
  check(ran > 0, "--variants " + g_variants + " names none of all, " + names);
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
    else if (option == "--warmups")
      g_warmups = std::max(0, std::atoi(argv[i + 1]));
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
      {"contact", [&] { experiment_contact(world); }},
      {"jquick", [] { experiment_jquick(); }},
  };
  bool known = false;
  for (const auto& [name, run] : experiments) {
    if (experiment != "all" && experiment != name) continue;
    known = true;
    run();
  }
  if (!known)
    fail("unknown experiment '" + experiment +
         "' (create, fig7, coll, iscan, contact, jquick, all)");
  check_mpi(rangecomm::Comm_free(&world), "Comm_free");
  MPI_Finalize();
  return 0;
}
