// Collective cases: every MPI-3 collective, blocking and nonblocking, with legal argument sets.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>
#include <numeric>

#include "conformance.hpp"

namespace conf {

// ---------------------------------------------------------------- thresholds and sizes

namespace {

struct Default {
  const char* name;
  long value;
};
#ifdef OPEN_MPI
constexpr long kOmpi = 1;
#else
constexpr long kOmpi = 0;
#endif
const Default kDefaults[] = {
    {"BCAST_PIPELINE_BYTES", 8 << 20},
    {"BCAST_SEGMENT_BYTES", 1 << 20},
    {"BCAST_SMALL_PIECED_BYTES", kOmpi ? 1024 : 0},
    {"BCAST_SMALL_PIECE_BYTES", 256},
    {"BCAST_PIECED_BYTES", kOmpi ? 32768 : 0},
    {"BCAST_PIECE_BYTES", 4000},
    {"BCAST_FLAT_BYTES", kOmpi ? 65536 : 0},
    {"BCAST_FLAT_PROCS", 16},
    {"REDUCE_SHORT_BYTES", kOmpi ? 4194304 : 8192},
    {"REDUCE_RING_BYTES", 8 << 20},
    {"ALLREDUCE_DIRECT_PROCS", 8},
    {"ALLREDUCE_DIRECT_BYTES", 2048},
    {"BARRIER_DIRECT_PROCS", 8},
    {"ALLREDUCE_SHORT_BYTES", 8192},
    {"ALLREDUCE_RING_BYTES", 2 << 20},
    {"GATHER_SHORT_BYTES", 65536},
    {"SCATTER_SHORT_BYTES", 65536},
    {"ALLGATHER_DIRECT_PROCS", 8},
    {"ALLGATHER_DIRECT_BYTES", 16384},
    {"ALLGATHER_SHORT_BYTES", 8 << 20},
    {"ALLGATHERV_SHORT_BYTES", 81920},
    {"ALLTOALL_LINEAR_MAX_SIZE", 32},
    {"ALLTOALL_PAIRWISE_BYTES", 1 << 20},
    {"ALLTOALL_SHORT_BYTES", 256},
    {"ALLTOALLV_LINEAR_MAX_SIZE", 32},
    {"SCAN_CHAIN_MAX_SIZE", 16},
    {"SCAN_CHAIN_BYTES", 1 << 20},
    {"SCAN_SEGMENT_BYTES", 1 << 20},
    {"REDUCE_SCATTER_SHORT_BYTES", 524288},
};

// Small values under which every algorithm of docs/collectives.md runs at a few KiB and at the
// rank counts of the test suite (odd piece and segment sizes cut elements apart).
const Default kScaled[] = {
    {"BCAST_PIPELINE_BYTES", 6000},       {"BCAST_SEGMENT_BYTES", 1000},
    {"BCAST_SMALL_PIECED_BYTES", 96},     {"BCAST_SMALL_PIECE_BYTES", 20},
    {"BCAST_PIECED_BYTES", 1200},         {"BCAST_PIECE_BYTES", 300},
    {"BCAST_FLAT_BYTES", 2000},           {"BCAST_FLAT_PROCS", 5},
    {"REDUCE_SHORT_BYTES", 256},          {"REDUCE_RING_BYTES", 2048},
    {"ALLREDUCE_DIRECT_PROCS", 3},        {"ALLREDUCE_DIRECT_BYTES", 64},
    {"BARRIER_DIRECT_PROCS", 3},          {"ALLREDUCE_SHORT_BYTES", 256},
    {"ALLREDUCE_RING_BYTES", 2048},       {"GATHER_SHORT_BYTES", 512},
    {"SCATTER_SHORT_BYTES", 512},         {"ALLGATHER_DIRECT_PROCS", 3},
    {"ALLGATHER_DIRECT_BYTES", 256},      {"ALLGATHER_SHORT_BYTES", 4096},
    {"ALLGATHERV_SHORT_BYTES", 1024},     {"ALLTOALL_LINEAR_MAX_SIZE", 3},
    {"ALLTOALL_PAIRWISE_BYTES", 1024},    {"ALLTOALL_SHORT_BYTES", 64},
    {"ALLTOALLV_LINEAR_MAX_SIZE", 3},     {"SCAN_CHAIN_MAX_SIZE", 3},
    {"SCAN_CHAIN_BYTES", 2048},           {"SCAN_SEGMENT_BYTES", 700},
    {"REDUCE_SCATTER_SHORT_BYTES", 1024},
};

}  // namespace

long threshold(const char* name) {
  std::string key = std::string("RANGECOMM_") + name;
  if (const char* v = getenv(key.c_str())) {
    char* end = nullptr;
    long x = strtol(v, &end, 10);
    if (*v && end && *end == '\0') return x;
  }
  for (const Default& d : kDefaults)
    if (strcmp(d.name, name) == 0) return d.value;
  die("unknown threshold %s", name);
}

void scale_thresholds() {
  for (const Default& d : kScaled) {
    std::string key = std::string("RANGECOMM_") + d.name;
    setenv(key.c_str(), std::to_string(d.value).c_str(), 0);  // an explicit setting wins
  }
}

long pick_units(Rng& rng, int unit_bytes, long multiple, const std::vector<long>& thresholds,
                long divisor, const Limits& lim) {
  if (multiple < 1) multiple = 1;
  divisor = std::max<long>(divisor, 1);
  long cap = lim.max_bytes / divisor;  // bytes of data per block
  long grain = unit_bytes * multiple;
  long bytes;
  int r = (int)rng.range(0, 99);
  std::vector<long> near;
  for (long t : thresholds)
    if (t > 0 && t / divisor + 2 * grain <= cap) near.push_back(t / divisor);
  if (r < 6) {
    return 0;
  } else if (r < 30) {
    return multiple * rng.range(1, 3);
  } else if (r < 55) {
    bytes = rng.range(1, 1024);
  } else if (r < 90 && !near.empty()) {
    long t = rng.pick(near);
    bytes = t + grain * rng.range(-2, 2) + (rng.chance(30) ? rng.range(-grain, grain) : 0);
  } else {
    bytes = rng.range(1, std::min<long>(cap, 65536));
  }
  bytes = std::max<long>(0, std::min(bytes, cap));
  long units = bytes / unit_bytes / multiple * multiple;
  return units;
}

namespace {

long lcm(long a, long b) { return a / std::gcd(a, b) * b; }

}  // namespace

// The unit of a collective on p processes.
int coll_unit(Rng& rng, int p) {
  (void)p;
  return pick_unit(rng);
}

// Units whose basic elements differ in type and leave holes (the struct of int, short and
// double, MPI_SHORT_INT, MPI_DOUBLE_INT) move data only on Open MPI: MPICH 4.0.2 (UCX) reports
// MPI_ERR_TRUNCATE for a message of them above 8 KiB whose two sides describe it differently:
// packed data (MPI_PACKED, which buffered sends, Sendrecv_replace and many collectives send
// inside MPICH and the library) received as such a struct, or a struct of short and int
// received as MPI_SHORT_INT. Natively and so under the library too.
int pick_unit(Rng& rng) {
#ifdef OPEN_MPI
  static const std::vector<int> units = {U_INT,        U_INT,  U_INT,       U_DOUBLE, U_SHORT,
                                         U_BYTE,       U_CHAR, U_LONG_LONG, U_MIX,    U_MIX,
                                         U_DOUBLE_INT, U_2INT, U_SHORT_INT};
#else
  static const std::vector<int> units = {U_INT,  U_INT,  U_INT,       U_DOUBLE, U_SHORT,
                                         U_BYTE, U_CHAR, U_LONG_LONG, U_2INT,   U_2INT};
#endif
  return rng.pick(units);
}

namespace {

// How many units the datatypes of one collective hold per element. The standard lets every
// process use its own datatype, of any size, as long as the type signatures match; native MPIs
// cut long messages into segments counted in elements of the local type (Open MPI's segmented
// Bcast and linear Gather, MPICH's ring Allgatherv), which then do not line up and truncate or
// hang. So the oracle is trusted with datatypes of different sizes only for short messages and
// where every block is one message (Alltoallv/w); elsewhere all layouts of one collective hold
// the same number of units, each in its own layout.
struct Granularity {
  long k = 0;  // units per element of every layout, 0: each its own
  Limits lim;
};
Granularity granularity(Rng& rng, const Limits& lim, bool pairwise) {
  Granularity g;
  g.lim = lim;
  if (rng.chance(pairwise ? 60 : 15)) {
    if (!pairwise) g.lim.max_bytes = std::min(lim.max_bytes, 1024L);
  } else {
    g.k = gen_units_per_element(rng);
  }
  return g;
}

// n layouts of one unit: all alike, or each its own (same signature unit, any layout).
std::vector<LayoutP> layouts(Rng& rng, int unit, int n, long& multiple, const Granularity& g) {
  std::vector<LayoutP> v;
  bool same = rng.chance(40);
  int depth = (int)rng.range(0, 2);
  for (int i = 0; i < n; ++i) {
    if (same && i > 0) {
      v.push_back(v[0]);
    } else {
      v.push_back(gen_layout(rng, unit, g.k ? g.k : gen_units_per_element(rng), depth));
    }
    multiple = lcm(multiple, v.back()->units);
  }
  return v;
}

// Block placement of a v-collective: each block's gap before it and the order in memory.
struct Placing {
  std::vector<int> gaps, order;
  static Placing gen(Rng& rng, int n) {
    Placing pl;
    for (int i = 0; i < n; ++i) pl.gaps.push_back(rng.chance(50) ? 0 : (int)rng.range(1, 3));
    for (int i = 0; i < n; ++i) pl.order.push_back(i);
    if (rng.chance(50)) rng.shuffle(pl.order);
    return pl;
  }
  // Displacements in elements for the given counts.
  std::vector<int> displs(const std::vector<int>& counts) const {
    std::vector<int> d(counts.size());
    int cursor = 0;
    for (int b : order) {
      cursor += gaps[b];
      d[b] = cursor;
      cursor += counts[b];
    }
    return d;
  }
  // Byte displacements for per-block types (blocks start 16-aligned).
  std::vector<int> bytes(const std::vector<int>& counts, const std::vector<TypeP>& types) const {
    std::vector<int> d(counts.size());
    MPI_Aint cursor = 0;
    for (int b : order) {
      cursor += 16 * gaps[b];
      d[b] = (int)(cursor - types[b]->lb);
      cursor = (cursor + counts[b] * types[b]->extent + 15) / 16 * 16;
    }
    return d;
  }
  std::string describe() const {
    std::string s = "gaps";
    for (int g : gaps) s += " " + std::to_string(g);
    s += ", order";
    for (int o : order) s += " " + std::to_string(o);
    return s;
  }
};

std::string list(const std::vector<long>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}
std::string flags(const std::vector<bool>& v) {
  std::string s;
  for (bool b : v) s += b ? '1' : '0';
  return s;
}

// What a process passes for the arguments MPI ignores there (non-root buffers of rooted calls,
// send arguments under MPI_IN_PLACE): 0 = null buffer, zero count, MPI_DATATYPE_NULL, null
// arrays; 1 = meaningful-looking values (a live type, the real counts).
const char* insig_name(int m) { return m == 0 ? "null" : "filled"; }

// ---------------------------------------------------------------- common base

struct CollBase : Op {
  std::string call;
  bool nb = false, free_early = false;
  int p = 0, root = -1, insig = 0;

  // state of one run
  struct Rec {
    std::string name;
    Buf buf;
    std::vector<unsigned char> care;
    bool record = true;
  };
  std::deque<Rec> bufs;
  std::vector<TypeP> types;
  // count, displacement and type arrays: MPI reads those of a nonblocking call until it ends
  std::vector<int> counts, displs, scounts, sdispls;
  std::vector<MPI_Datatype> stypes, rtypes;
  int rc = MPI_SUCCESS;
  int nbuf = 0;
  uint64_t seed = 0;

  bool nonblocking() const override { return nb; }
  std::string head() const {
    std::string name = call;
    if (nb) name[0] = (char)tolower(name[0]);  // MPI_Ibcast, as the standard spells it
    return fmt("%s%s%s%s", nb ? "MPI_I" : "MPI_", name.c_str(),
               root >= 0 ? fmt(" root %d", root).c_str() : "",
               nb && free_early ? " (types freed before completion)" : "");
  }
  TypeP mk(const LayoutP& l) {
    TypeP t = build(l);
    types.push_back(t);
    return t;
  }
  TypeP abs_type(const TypeP& t, const void* origin) {
    TypeP a = absolute(t, origin);
    types.push_back(a);
    return a;
  }
  Buf& add(const std::string& name, std::vector<Placement> places) {
    bufs.push_back({name, make_buf(std::move(places), mix(seed, ++nbuf)), {}, true});
    return bufs.back().buf;
  }
  void begin(Ctx& ctx) {
    bufs.clear();
    types.clear();
    nbuf = 0;
    seed = ctx.seed;
    rc = MPI_SUCCESS;
  }
  // After the call: the request (nonblocking), and the early free of the types.
  void started(MPI_Request req, std::vector<MPI_Request>& reqs) {
    if (!nb) return;
    reqs.push_back(rc == MPI_SUCCESS ? req : MPI_REQUEST_NULL);
    if (free_early)
      for (auto& t : types) t->free();
  }
  void finish(Ctx&, Outcome& out) override {
    out.ints(head() + ": error class", {err_class(rc)});
    for (Rec& r : bufs)
      if (r.record) out.buffer(r.name, std::move(r.buf), std::move(r.care));
    for (auto& t : types) t->free();
    bufs.clear();
    types.clear();
  }
};

// ---------------------------------------------------------------- Barrier

struct BarrierOp : CollBase {
  std::string describe() const override { return head(); }
  void start(Ctx& ctx, Outcome&, std::vector<MPI_Request>& reqs) override {
    begin(ctx);
    MPI_Request req = MPI_REQUEST_NULL;
    rc = nb ? MPI_Ibarrier(ctx.comm, &req) : MPI_Barrier(ctx.comm);
    started(req, reqs);
  }
};

// ---------------------------------------------------------------- Bcast

struct BcastOp : CollBase {
  int unit = 0;
  std::vector<LayoutP> lay;
  long E = 0;
  std::vector<bool> bottom;
  std::string describe() const override {
    std::string s = head() + fmt(", %ld units of %s (%ld bytes), MPI_BOTTOM at %s", E,
                                 unit_name(unit), E * unit_data_bytes(unit), flags(bottom).c_str());
    for (int r = 0; r < p; ++r) s += fmt("\n    rank %d: %s", r, lay[r]->describe().c_str());
    return s;
  }
  void start(Ctx& ctx, Outcome&, std::vector<MPI_Request>& reqs) override {
    begin(ctx);
    int r = ctx.rank;
    TypeP t = mk(lay[r]);
    long count = E / t->units;
    Buf& b = add("buffer", {{t, count, 0, "buffer"}});
    void* ptr = b.origin();
    MPI_Datatype type = t->type;
    if (bottom[r]) ptr = MPI_BOTTOM, type = abs_type(t, b.origin())->type;
    MPI_Request req = MPI_REQUEST_NULL;
    rc = nb ? MPI_Ibcast(ptr, (int)count, type, root, ctx.comm, &req)
            : MPI_Bcast(ptr, (int)count, type, root, ctx.comm);
    started(req, reqs);
  }
};

// ---------------------------------------------------------------- Gather(v), Scatter(v)

struct RootedOp : CollBase {
  bool v = false, scatter = false, inplace = false, many_bottom = false;
  int unit = 0;
  std::vector<LayoutP> one;  // per rank: the send (gather) or receive (scatter) layout
  LayoutP many;              // root's receive (gather) or send (scatter) layout
  std::vector<long> E;       // units per rank's block
  Placing placing;           // v: where the blocks lie at the root
  std::vector<bool> one_bottom;
  std::string describe() const override {
    std::string s = head() + fmt(", units of %s, blocks %s units, %s, root layout %s%s%s",
                                 unit_name(unit), list(E).c_str(), insig_name(insig),
                                 many->describe().c_str(), many_bottom ? " at MPI_BOTTOM" : "",
                                 inplace ? ", MPI_IN_PLACE at the root" : "");
    if (v) s += ", " + placing.describe();
    for (int r = 0; r < p; ++r)
      s += fmt("\n    rank %d: %s%s", r, one[r]->describe().c_str(),
               one_bottom[r] ? " at MPI_BOTTOM" : "");
    return s;
  }
  void start(Ctx& ctx, Outcome&, std::vector<MPI_Request>& reqs) override {
    begin(ctx);
    const int r = ctx.rank;
    const bool is_root = r == root;
    // the root's many-block buffer
    void* mptr = nullptr;
    MPI_Datatype mtype = MPI_DATATYPE_NULL;
    counts.assign(p, 0);
    displs.assign(p, 0);
    int mcount = 0;
    if (is_root || insig == 1) {
      TypeP mt = mk(many);
      for (int j = 0; j < p; ++j) counts[j] = (int)(E[j] / mt->units);
      if (v) {
        displs = placing.displs(counts);
      } else {
        mcount = counts[0];
        for (int j = 0; j < p; ++j) displs[j] = j * mcount;
      }
      mtype = mt->type;
      if (is_root) {
        std::vector<Placement> pl;
        for (int j = 0; j < p; ++j)
          pl.push_back({mt, counts[j], displs[j] * mt->extent, fmt("block %d", j)});
        Buf& mb = add(scatter ? "sendbuf" : "recvbuf", std::move(pl));
        mptr = mb.origin();
        if (many_bottom) mptr = MPI_BOTTOM, mtype = abs_type(mt, mb.origin())->type;
      }
    }
    // this rank's own block
    void* optr = nullptr;
    MPI_Datatype otype = MPI_DATATYPE_NULL;
    int ocount = 0;
    if (is_root && inplace) {
      optr = MPI_IN_PLACE;
      if (insig == 1) otype = MPI_INT, ocount = 3;
    } else {
      TypeP ot = mk(one[r]);
      ocount = (int)(E[r] / ot->units);
      Buf& ob = add(scatter ? "recvbuf" : "sendbuf", {{ot, ocount, 0, "block"}});
      optr = ob.origin();
      otype = ot->type;
      if (one_bottom[r]) optr = MPI_BOTTOM, otype = abs_type(ot, ob.origin())->type;
    }
    const int* cnts = (is_root || insig == 1) ? counts.data() : nullptr;
    const int* dsps = (is_root || insig == 1) ? displs.data() : nullptr;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Comm c = ctx.comm;
    if (!scatter && !v)
      rc = nb ? MPI_Igather(optr, ocount, otype, mptr, mcount, mtype, root, c, &req)
              : MPI_Gather(optr, ocount, otype, mptr, mcount, mtype, root, c);
    else if (!scatter)
      rc = nb ? MPI_Igatherv(optr, ocount, otype, mptr, cnts, dsps, mtype, root, c, &req)
              : MPI_Gatherv(optr, ocount, otype, mptr, cnts, dsps, mtype, root, c);
    else if (!v)
      rc = nb ? MPI_Iscatter(mptr, mcount, mtype, optr, ocount, otype, root, c, &req)
              : MPI_Scatter(mptr, mcount, mtype, optr, ocount, otype, root, c);
    else
      rc = nb ? MPI_Iscatterv(mptr, cnts, dsps, mtype, optr, ocount, otype, root, c, &req)
              : MPI_Scatterv(mptr, cnts, dsps, mtype, optr, ocount, otype, root, c);
    started(req, reqs);
  }
};

// ---------------------------------------------------------------- Allgather(v)

struct AllgatherOp : CollBase {
  bool v = false, inplace = false;
  int unit = 0;
  std::vector<LayoutP> send, recv;  // per rank
  std::vector<long> E;              // units per rank's block
  std::vector<Placing> placing;     // v: per rank
  std::vector<bool> sbottom, rbottom;
  std::string describe() const override {
    std::string s = head() + fmt(", units of %s, blocks %s units%s", unit_name(unit),
                                 list(E).c_str(), inplace ? ", MPI_IN_PLACE" : "");
    for (int r = 0; r < p; ++r)
      s += fmt("\n    rank %d: send %s%s, recv %s%s%s", r, send[r]->describe().c_str(),
               sbottom[r] ? " at MPI_BOTTOM" : "", recv[r]->describe().c_str(),
               rbottom[r] ? " at MPI_BOTTOM" : "", v ? (", " + placing[r].describe()).c_str() : "");
    return s;
  }
  void start(Ctx& ctx, Outcome&, std::vector<MPI_Request>& reqs) override {
    begin(ctx);
    const int r = ctx.rank;
    TypeP rt = mk(recv[r]);
    counts.assign(p, 0);
    displs.assign(p, 0);
    for (int j = 0; j < p; ++j) counts[j] = (int)(E[j] / rt->units);
    if (v) {
      displs = placing[r].displs(counts);
#ifndef OPEN_MPI
      // MPICH 4.0.2's Allgatherv on one process copies the block to displacement 0.
      if (p == 1) displs[0] = 0;
#endif
    } else {
      for (int j = 0; j < p; ++j) displs[j] = j * counts[0];
    }
    std::vector<Placement> pl;
    for (int j = 0; j < p; ++j)
      pl.push_back({rt, counts[j], displs[j] * rt->extent, fmt("block %d", j)});
    Buf& rb = add("recvbuf", std::move(pl));
    void* rptr = rb.origin();
    MPI_Datatype rtype = rt->type;
    if (rbottom[r]) rptr = MPI_BOTTOM, rtype = abs_type(rt, rb.origin())->type;
    void* sptr = MPI_IN_PLACE;
    MPI_Datatype stype = MPI_DATATYPE_NULL;
    int scount = 0;
    if (!inplace) {
      TypeP st = mk(send[r]);
      scount = (int)(E[r] / st->units);
      Buf& sb = add("sendbuf", {{st, scount, 0, "block"}});
      sptr = sb.origin();
      stype = st->type;
      if (sbottom[r]) sptr = MPI_BOTTOM, stype = abs_type(st, sb.origin())->type;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Comm c = ctx.comm;
    if (!v)
      rc = nb ? MPI_Iallgather(sptr, scount, stype, rptr, counts[0], rtype, c, &req)
              : MPI_Allgather(sptr, scount, stype, rptr, counts[0], rtype, c);
    else
      rc = nb ? MPI_Iallgatherv(sptr, scount, stype, rptr, counts.data(), displs.data(), rtype, c,
                                &req)
              : MPI_Allgatherv(sptr, scount, stype, rptr, counts.data(), displs.data(), rtype, c);
    started(req, reqs);
  }
};

// ---------------------------------------------------------------- Alltoall(v,w)

struct AlltoallOp : CollBase {
  int variant = 0;  // 0 alltoall, 1 alltoallv, 2 alltoallw
  bool inplace = false;
  int unit = 0;
  // per rank (alltoall, v) or per rank and peer (w, index r * p + j)
  std::vector<LayoutP> send, recv;
  std::vector<long> E;  // units from i to j at i * p + j
  std::vector<Placing> splace, rplace;
  std::vector<bool> bottom;
  std::string describe() const override {
    std::string s = head() + fmt(", units of %s, units i->j %s%s", unit_name(unit), list(E).c_str(),
                                 inplace ? ", MPI_IN_PLACE" : "");
    for (int r = 0; r < p; ++r) {
      s += fmt("\n    rank %d:%s", r, bottom[r] ? " MPI_BOTTOM" : "");
      if (variant > 0)
        s += fmt(" send %s; recv %s", splace[r].describe().c_str(), rplace[r].describe().c_str());
      int n = variant == 2 ? p : 1;
      for (int j = 0; j < n; ++j)
        s += fmt("\n      %s%s -> %s", variant == 2 ? fmt("peer %d: ", j).c_str() : "",
                 inplace ? "-" : send[r * n + j]->describe().c_str(),
                 recv[r * n + j]->describe().c_str());
    }
    return s;
  }
  void start(Ctx& ctx, Outcome&, std::vector<MPI_Request>& reqs) override {
    begin(ctx);
    const int r = ctx.rank;
    MPI_Comm c = ctx.comm;
    const int n = variant == 2 ? p : 1;
    std::vector<TypeP> st(p), rt(p);
    for (int j = 0; j < p; ++j) {
      rt[j] = j < n ? mk(recv[r * n + j]) : rt[0];
      if (!inplace) st[j] = j < n ? mk(send[r * n + j]) : st[0];
    }
    scounts.assign(p, 0);
    counts.assign(p, 0);
    sdispls.assign(p, 0);
    std::vector<int>& rcounts = counts;
    for (int j = 0; j < p; ++j) {
      rcounts[j] = (int)(E[j * p + r] / rt[j]->units);
      if (!inplace) scounts[j] = (int)(E[r * p + j] / st[j]->units);
    }
    auto place = [&](const std::vector<int>& counts, const std::vector<TypeP>& ts,
                     const Placing& pl) {
      if (variant == 0) {
        std::vector<int> d(p);
        for (int j = 0; j < p; ++j) d[j] = j * counts[0];
        return d;
      }
      std::vector<int> d = variant == 1 ? pl.displs(counts) : pl.bytes(counts, ts);
#ifdef OPEN_MPI
      // Open MPI 4.1's collectives of one-process communicators (coll/self) multiply
      // Alltoallw's byte displacements by the type extents: the oracle is right only at 0.
      if (variant == 2 && p == 1) d[0] = 0;
#endif
      return d;
    };
    displs = place(rcounts, rt, rplace[r]);
    std::vector<int>& rdispls = displs;
    std::vector<Placement> rpl;
    for (int j = 0; j < p; ++j)
      rpl.push_back({rt[j], rcounts[j], variant == 2 ? rdispls[j] : rdispls[j] * rt[j]->extent,
                     fmt("block from %d", j)});
    Buf& rb = add("recvbuf", std::move(rpl));
    void* rptr = rb.origin();
    void* sptr = MPI_IN_PLACE;
    Buf* sb = nullptr;
    if (!inplace) {
      sdispls = place(scounts, st, splace[r]);
      std::vector<Placement> spl;
      for (int j = 0; j < p; ++j)
        spl.push_back({st[j], scounts[j], variant == 2 ? sdispls[j] : sdispls[j] * st[j]->extent,
                       fmt("block to %d", j)});
      sb = &add("sendbuf", std::move(spl));
      sptr = sb->origin();
    }
    stypes.assign(p, MPI_DATATYPE_NULL);
    rtypes.assign(p, MPI_DATATYPE_NULL);
    for (int j = 0; j < p; ++j) {
      rtypes[j] = rt[j]->type;
      if (!inplace) stypes[j] = st[j]->type;
    }
    if (bottom[r]) {
      // absolute types; alltoallw: one per peer, each at its block, displacement 0
      for (int j = 0; j < (variant == 2 ? p : 1); ++j) {
        MPI_Aint roff = variant == 2 ? rdispls[j] : 0;
        rtypes[j] = abs_type(rt[j], rb.origin() + roff)->type;
        if (variant == 2) rdispls[j] = 0;
        if (!inplace) {
          MPI_Aint soff = variant == 2 ? sdispls[j] : 0;
          stypes[j] = abs_type(st[j], sb->origin() + soff)->type;
          if (variant == 2) sdispls[j] = 0;
        }
      }
      rptr = MPI_BOTTOM;
      if (!inplace) sptr = MPI_BOTTOM;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    const bool filled = insig == 1;
    int* sc = inplace && !filled ? nullptr : scounts.data();
    int* sd = inplace && !filled ? nullptr : sdispls.data();
    if (variant == 0) {
      int scount = inplace ? 0 : scounts[0];
      MPI_Datatype stype = inplace ? MPI_DATATYPE_NULL : stypes[0];
      rc = nb ? MPI_Ialltoall(sptr, scount, stype, rptr, rcounts[0], rtypes[0], c, &req)
              : MPI_Alltoall(sptr, scount, stype, rptr, rcounts[0], rtypes[0], c);
    } else if (variant == 1) {
      MPI_Datatype stype = inplace ? (filled ? MPI_INT : MPI_DATATYPE_NULL) : stypes[0];
      rc = nb ? MPI_Ialltoallv(sptr, sc, sd, stype, rptr, rcounts.data(), rdispls.data(), rtypes[0],
                               c, &req)
              : MPI_Alltoallv(sptr, sc, sd, stype, rptr, rcounts.data(), rdispls.data(), rtypes[0],
                              c);
    } else {
      if (inplace && filled) std::fill(stypes.begin(), stypes.end(), MPI_INT);
      MPI_Datatype* stp = inplace && !filled ? nullptr : stypes.data();
      rc = nb ? MPI_Ialltoallw(sptr, sc, sd, stp, rptr, rcounts.data(), rdispls.data(),
                               rtypes.data(), c, &req)
              : MPI_Alltoallw(sptr, sc, sd, stp, rptr, rcounts.data(), rdispls.data(),
                              rtypes.data(), c);
    }
    started(req, reqs);
  }
};

// ---------------------------------------------------------------- reductions

// User operations: elements of contiguous ints (size == true extent), anywhere in their extent.
struct Elem {
  uintptr_t at;
  int ints;
};
void elements(void* base, int i, MPI_Datatype* dt, Elem* e) {
  MPI_Aint lb, ext, tlb, text;
  int size;
  MPI_Type_get_extent(*dt, &lb, &ext);
  MPI_Type_get_true_extent(*dt, &tlb, &text);
  MPI_Type_size(*dt, &size);
  if (size != text || size % 4 != 0)
    die("user operation called with a type of size %d, true extent %ld", size, (long)text);
  e->at = (uintptr_t)base + (uintptr_t)(i * ext) + (uintptr_t)tlb;
  e->ints = size / 4;
}

void user_add_c(void* in, void* inout, int* len, MPI_Datatype* dt) {
  for (int i = 0; i < *len; ++i) {
    Elem a, b;
    elements(in, i, dt, &a);
    elements(inout, i, dt, &b);
    for (int k = 0; k < a.ints; ++k) {
      uint32_t x, y;
      memcpy(&x, (void*)(a.at + 4 * k), 4);
      memcpy(&y, (void*)(b.at + 4 * k), 4);
      y = x + y;
      memcpy((void*)(b.at + 4 * k), &y, 4);
    }
  }
}

// inout = in x inout for 2x2 integer matrices (mod 2^32): associative, not commutative.
void user_mat(void* in, void* inout, int* len, MPI_Datatype* dt) {
  for (int i = 0; i < *len; ++i) {
    Elem a, b;
    elements(in, i, dt, &a);
    elements(inout, i, dt, &b);
    if (a.ints != 4) die("matrix operation on %d ints", a.ints);
    uint32_t x[4], y[4], z[4];
    memcpy(x, (void*)a.at, 16);
    memcpy(y, (void*)b.at, 16);
    z[0] = x[0] * y[0] + x[1] * y[2];
    z[1] = x[0] * y[1] + x[1] * y[3];
    z[2] = x[2] * y[0] + x[3] * y[2];
    z[3] = x[2] * y[1] + x[3] * y[3];
    memcpy((void*)b.at, z, 16);
  }
}

MPI_Op g_user_ops[3] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
const char* const kUserOpNames[3] = {"user sum (commutative)", "user sum declared non-commutative",
                                     "user 2x2 matrix product (non-commutative)"};

}  // namespace

// The sum declared non-commutative takes the library's rank-order paths with a result that
// does not depend on the order; the matrix product shows the order.
void init_ops() {
  MPI_Op_create(user_add_c, 1, &g_user_ops[0]);
  MPI_Op_create(user_add_c, 0, &g_user_ops[1]);
  MPI_Op_create(user_mat, 0, &g_user_ops[2]);
}
void free_ops() {
  for (MPI_Op& op : g_user_ops) MPI_Op_free(&op);
}

namespace {

struct PredefType {
  MPI_Datatype type;
  std::vector<Piece> pieces;
  const char* name;
  int classes;  // bit 0 arithmetic, 1 logical, 2 bitwise, 3 loc
};
std::vector<PredefType> predef_types() {
  return {
      {MPI_INT, {{0, P_INT32}}, "MPI_INT", 7},
      {MPI_UNSIGNED, {{0, P_UINT32}}, "MPI_UNSIGNED", 7},
      {MPI_SHORT, {{0, P_INT16}}, "MPI_SHORT", 7},
      {MPI_UNSIGNED_SHORT, {{0, P_UINT16}}, "MPI_UNSIGNED_SHORT", 7},
      {MPI_LONG_LONG, {{0, P_INT64}}, "MPI_LONG_LONG", 7},
      {MPI_LONG, {{0, P_INT64}}, "MPI_LONG", 7},
      {MPI_UNSIGNED_LONG, {{0, P_UINT64}}, "MPI_UNSIGNED_LONG", 7},
      {MPI_INT8_T, {{0, P_INT8}}, "MPI_INT8_T", 7},
      {MPI_UINT8_T, {{0, P_UINT8}}, "MPI_UINT8_T", 7},
      {MPI_SIGNED_CHAR, {{0, P_INT8}}, "MPI_SIGNED_CHAR", 7},
      {MPI_INT64_T, {{0, P_INT64}}, "MPI_INT64_T", 7},
      {MPI_FLOAT, {{0, P_FLOAT}}, "MPI_FLOAT", 1},
      {MPI_DOUBLE, {{0, P_DOUBLE}}, "MPI_DOUBLE", 1},
      {MPI_BYTE, {{0, P_BYTE}}, "MPI_BYTE", 4},
      {MPI_C_BOOL, {{0, P_BOOL}}, "MPI_C_BOOL", 2},
      {MPI_2INT, {{0, P_INT32}, {4, P_INT32}}, "MPI_2INT", 8},
      {MPI_DOUBLE_INT, {{0, P_DOUBLE}, {8, P_INT32}}, "MPI_DOUBLE_INT", 8},
      {MPI_FLOAT_INT, {{0, P_FLOAT}, {4, P_INT32}}, "MPI_FLOAT_INT", 8},
      {MPI_LONG_INT, {{0, P_INT64}, {8, P_INT32}}, "MPI_LONG_INT", 8},
      {MPI_SHORT_INT, {{0, P_INT16}, {4, P_INT32}}, "MPI_SHORT_INT", 8},
  };
}

struct PredefOp {
  MPI_Op op;
  const char* name;
  int cls;  // bit as above
  ValueClass values;
};
const PredefOp kOps[] = {
    {MPI_SUM, "MPI_SUM", 1, V_SUM},       {MPI_PROD, "MPI_PROD", 1, V_PROD},
    {MPI_MIN, "MPI_MIN", 1, V_MINMAX},    {MPI_MAX, "MPI_MAX", 1, V_MINMAX},
    {MPI_LAND, "MPI_LAND", 2, V_LOGICAL}, {MPI_LOR, "MPI_LOR", 2, V_LOGICAL},
    {MPI_LXOR, "MPI_LXOR", 2, V_LOGICAL}, {MPI_BAND, "MPI_BAND", 4, V_ANY},
    {MPI_BOR, "MPI_BOR", 4, V_ANY},       {MPI_BXOR, "MPI_BXOR", 4, V_ANY},
    {MPI_MINLOC, "MPI_MINLOC", 8, V_LOC}, {MPI_MAXLOC, "MPI_MAXLOC", 8, V_LOC},
};
const int kNumOps = sizeof kOps / sizeof kOps[0];

enum RedKind { REDUCE, ALLREDUCE, SCAN, EXSCAN, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK };
const char* kRedNames[] = {"Reduce", "Allreduce",      "Scan",
                           "Exscan", "Reduce_scatter", "Reduce_scatter_block"};

struct ReduceOp : CollBase {
  RedKind kind = REDUCE;
  int predef = -1;              // index into predef_types(), or -1: a user type
  LayoutP user_type;            // contiguous ints, anywhere in its extent
  int op = 0;                   // index into kOps, or -1 - user op index
  long count = 0;               // elements (Reduce_scatter_block: per process)
  std::vector<long> rs_counts;  // Reduce_scatter
  bool inplace = false, bottom = false, nonroot_recv = false;
  std::string type_name() const {
    return predef >= 0 ? predef_types()[predef].name : user_type->describe();
  }
  std::string op_name() const { return op >= 0 ? kOps[op].name : kUserOpNames[-1 - op]; }
  std::string describe() const override {
    return head() +
           fmt(", %s on %s, count %s%s%s%s", op_name().c_str(), type_name().c_str(),
               kind == REDUCE_SCATTER ? list(rs_counts).c_str() : std::to_string(count).c_str(),
               inplace ? ", MPI_IN_PLACE" : "", bottom ? ", MPI_BOTTOM" : "",
               kind == REDUCE && !nonroot_recv ? ", null recvbuf off the root" : "");
  }
  void start(Ctx& ctx, Outcome&, std::vector<MPI_Request>& reqs) override {
    begin(ctx);
    const int r = ctx.rank;
    MPI_Comm c = ctx.comm;
    TypeP t;
    if (predef >= 0) {
      PredefType pt = predef_types()[predef];
      t = predefined(pt.type, pt.pieces, pt.name);
    } else {
      t = mk(user_type);
    }
    ValueClass vc = op >= 0 ? kOps[op].values : V_ANY;
    long total = count, mine = count;  // elements in the send vector, and received here
    if (kind == REDUCE_SCATTER) {
      total = std::accumulate(rs_counts.begin(), rs_counts.end(), 0L);
      mine = rs_counts[r];
    } else if (kind == REDUCE_SCATTER_BLOCK) {
      total = count * p;
    }
    bool in_place_here = inplace && (kind != REDUCE || r == root);
    bool has_recv = kind != REDUCE || r == root || nonroot_recv;
    void* sptr = MPI_IN_PLACE;
    Buf* sb = nullptr;
    if (!in_place_here) {
      sb = &add("sendbuf", {{t, total, 0, "input"}});
      fill_values(*sb, vc, mix(seed, 77));
      sptr = sb->origin();
    }
    void* rptr = nullptr;
    Buf* rb = nullptr;
    if (has_recv) {
      long relems = in_place_here ? total : mine;
      rb = &add("recvbuf", {{t, relems, 0, in_place_here ? "input/result" : "result"}});
      if (in_place_here) fill_values(*rb, vc, mix(seed, 78));
      rptr = rb->origin();
      std::vector<unsigned char>& care = bufs.back().care;
      if (kind == EXSCAN && r == 0) {  // undefined on rank 0: only the bytes between elements
        care = typemap_mask(*rb);
        for (auto& x : care) x = !x;
      } else if (in_place_here && relems > mine) {
        // in place, only the first `mine` elements hold results; the rest of the input is
        // undefined afterwards
        Buf first = *rb;
        first.places = {{t, relems - mine, mine * t->extent, ""}};
        care = typemap_mask(first);
        for (auto& x : care) x = !x;
      }
    }
    MPI_Datatype type = t->type;
    MPI_Datatype stype = type, rtype = type;
    if (bottom) {
      if (sb) stype = abs_type(t, sb->origin())->type, sptr = MPI_BOTTOM;
      if (rb) rtype = abs_type(t, rb->origin())->type, rptr = MPI_BOTTOM;
      if (!sb) stype = rtype;
      if (!rb) rtype = stype;
    }
    // With MPI_BOTTOM the one type argument must name both buffers: only when one of them
    // is MPI_IN_PLACE or absent (the generator ensures it).
    MPI_Datatype dt = bottom ? (sb ? stype : rtype) : type;
    MPI_Op o = op >= 0 ? kOps[op].op : g_user_ops[-1 - op];
    MPI_Request req = MPI_REQUEST_NULL;
    int n = (int)count;
    switch (kind) {
      case REDUCE:
        rc = nb ? MPI_Ireduce(sptr, rptr, n, dt, o, root, c, &req)
                : MPI_Reduce(sptr, rptr, n, dt, o, root, c);
        break;
      case ALLREDUCE:
        rc = nb ? MPI_Iallreduce(sptr, rptr, n, dt, o, c, &req)
                : MPI_Allreduce(sptr, rptr, n, dt, o, c);
        break;
      case SCAN:
        rc = nb ? MPI_Iscan(sptr, rptr, n, dt, o, c, &req) : MPI_Scan(sptr, rptr, n, dt, o, c);
        break;
      case EXSCAN:
        rc = nb ? MPI_Iexscan(sptr, rptr, n, dt, o, c, &req) : MPI_Exscan(sptr, rptr, n, dt, o, c);
        break;
      case REDUCE_SCATTER: {
        counts.assign(rs_counts.begin(), rs_counts.end());
        rc = nb ? MPI_Ireduce_scatter(sptr, rptr, counts.data(), dt, o, c, &req)
                : MPI_Reduce_scatter(sptr, rptr, counts.data(), dt, o, c);
        break;
      }
      case REDUCE_SCATTER_BLOCK:
        rc = nb ? MPI_Ireduce_scatter_block(sptr, rptr, n, dt, o, c, &req)
                : MPI_Reduce_scatter_block(sptr, rptr, n, dt, o, c);
        break;
    }
    started(req, reqs);
  }
};

// ---------------------------------------------------------------- generators

std::vector<long> ths(std::initializer_list<const char*> names) {
  std::vector<long> v;
  for (const char* n : names) v.push_back(threshold(n));
  return v;
}

void common(CollBase& op, Rng& rng, const char* call, int p, bool rooted) {
  op.call = call;
  op.p = p;
  op.nb = rng.chance(50);
  op.free_early = op.nb && rng.chance(30);
  op.root = rooted ? (int)rng.range(0, p - 1) : -1;
  op.insig = rng.chance(70) ? 0 : 1;
}

std::vector<bool> bottoms(Rng& rng, int p, int percent) {
  std::vector<bool> b(p);
  for (int i = 0; i < p; ++i) b[i] = rng.chance(percent);
  return b;
}

OpP gen_bcast(Rng& rng, int p, const Limits& lim) {
  auto op = std::make_shared<BcastOp>();
  common(*op, rng, "Bcast", p, true);
  op->unit = coll_unit(rng, p);
  long mult = 1;
  Granularity g = granularity(rng, lim, false);
  op->lay = layouts(rng, op->unit, p, mult, g);
  op->E = pick_units(
      rng, unit_data_bytes(op->unit), mult,
      ths({"BCAST_SMALL_PIECED_BYTES", "BCAST_SMALL_PIECE_BYTES", "BCAST_PIECED_BYTES",
           "BCAST_PIECE_BYTES", "BCAST_FLAT_BYTES", "BCAST_PIPELINE_BYTES", "BCAST_SEGMENT_BYTES"}),
      1, g.lim);
  op->bottom = bottoms(rng, p, 10);
  return op;
}

// Units per block for p blocks: all equal, or (v) each its own, some zero.
std::vector<long> block_units(Rng& rng, int p, bool v, long mult, int unit_bytes,
                              const std::vector<long>& thresholds, const Limits& lim) {
  std::vector<long> E(p);
  long base = pick_units(rng, unit_bytes, mult, thresholds, p, lim);
  for (int i = 0; i < p; ++i) {
    E[i] = base;
    if (v) {
      int r = (int)rng.range(0, 9);
      if (r < 2)
        E[i] = 0;
      else if (r < 5)
        E[i] = mult * rng.range(0, 4);
      else if (r < 7)
        E[i] = base / mult / 2 * mult;
    }
  }
  return E;
}

OpP gen_rooted(Rng& rng, int p, const Limits& lim, bool scatter, bool v) {
  auto op = std::make_shared<RootedOp>();
  common(*op, rng, scatter ? (v ? "Scatterv" : "Scatter") : (v ? "Gatherv" : "Gather"), p, true);
  op->v = v;
  op->scatter = scatter;
  op->unit = coll_unit(rng, p);
  long mult = 1;
  Granularity g = granularity(rng, lim, false);
  op->one = layouts(rng, op->unit, p, mult, g);
  op->many = rng.chance(40) ? op->one[op->root]
                            : gen_layout(rng, op->unit, g.k ? g.k : gen_units_per_element(rng), 2);
  mult = lcm(mult, op->many->units);
  op->E = block_units(rng, p, v, mult, unit_data_bytes(op->unit),
                      ths({scatter ? "SCATTER_SHORT_BYTES" : "GATHER_SHORT_BYTES"}), g.lim);
  op->placing = Placing::gen(rng, p);
  op->inplace = rng.chance(25);
  op->one_bottom = bottoms(rng, p, 8);
  op->many_bottom = rng.chance(8);
  return op;
}

OpP gen_allgather(Rng& rng, int p, const Limits& lim, bool v) {
  auto op = std::make_shared<AllgatherOp>();
  common(*op, rng, v ? "Allgatherv" : "Allgather", p, false);
  op->v = v;
  op->unit = coll_unit(rng, p);
  long mult = 1;
  Granularity g = granularity(rng, lim, false);
#ifdef OPEN_MPI
  // Open MPI 4.1 chooses its Allgatherv algorithm from the send type's size times the receive
  // counts: with types of different sizes the processes choose differently and hang.
  if (g.k == 0) g.k = gen_units_per_element(rng), g.lim = lim;
#endif
  op->send = layouts(rng, op->unit, p, mult, g);
  op->recv = layouts(rng, op->unit, p, mult, g);
  op->E = block_units(
      rng, p, v, mult, unit_data_bytes(op->unit),
      ths({"ALLGATHER_DIRECT_BYTES", "ALLGATHER_SHORT_BYTES", "ALLGATHERV_SHORT_BYTES"}), g.lim);
#ifndef OPEN_MPI
  // MPICH 4.0.2's ring (I)Allgatherv, which it runs from 80 KiB in all, cuts blocks into
  // chunks of 32 KiB over the local receive type's extent: receive types of different extents
  // then disagree on the chunks and the call hangs (native_defects allgatherv-extents).
  long total = 0;
  for (long e : op->E) total += e;
  if (v && total * unit_data_bytes(op->unit) >= 81920)
    for (LayoutP& layout : op->recv) layout = op->recv[0];
#endif
  for (int r = 0; r < p; ++r) op->placing.push_back(Placing::gen(rng, p));
  op->inplace = rng.chance(25);
  op->sbottom = bottoms(rng, p, 8);
  op->rbottom = bottoms(rng, p, 8);
  return op;
}

OpP gen_alltoall(Rng& rng, int p, const Limits& lim, int variant) {
  auto op = std::make_shared<AlltoallOp>();
  common(*op, rng, variant == 0 ? "Alltoall" : variant == 1 ? "Alltoallv" : "Alltoallw", p, false);
  op->variant = variant;
  op->unit = coll_unit(rng, p);
  op->inplace = rng.chance(25);
  // Native in-place nonblocking Alltoallv/w are wrong (each checked against the blocking
  // in-place call of the same MPI, which agrees with the library): Open MPI 4.1.4's
  // MPI_Ialltoallv and MPI_Ialltoallw (libnbc) deliver blocks to the wrong peers once blocks
  // reach a few KiB, and hang when a process has nothing to exchange; MPICH 4.0.2's
  // MPI_Ialltoallw truncates or misplaces blocks whose types differ between peers.
#ifdef OPEN_MPI
  if (variant > 0 && op->nb) op->inplace = false;
#else
  if (variant == 2 && op->nb) op->inplace = false;
#endif
  int n = variant == 2 ? p * p : p;
  long mult = 1;
  Granularity g = granularity(rng, lim, variant > 0);
  op->send = layouts(rng, op->unit, n, mult, g);
  op->recv = layouts(rng, op->unit, n, mult, g);
  std::vector<long> thr = ths({"ALLTOALL_SHORT_BYTES", "ALLTOALL_PAIRWISE_BYTES"});
  long base = pick_units(rng, unit_data_bytes(op->unit), mult, thr, p, g.lim);
  op->E.assign(p * p, base);
  if (variant > 0) {
    for (int i = 0; i < p; ++i)
      for (int j = 0; j < p; ++j) {
        int r = (int)rng.range(0, 9);
        long e = base;
        if (r < 2)
          e = 0;
        else if (r < 5)
          e = mult * rng.range(0, 4);
        op->E[i * p + j] = e;
      }
    if (op->inplace)  // the same amount both ways between every pair
      for (int i = 0; i < p; ++i)
        for (int j = 0; j < i; ++j) op->E[i * p + j] = op->E[j * p + i];
  }
  for (int r = 0; r < p; ++r) {
    op->splace.push_back(Placing::gen(rng, p));
    op->rplace.push_back(Placing::gen(rng, p));
  }
  op->bottom = bottoms(rng, p, 8);
  return op;
}

// A user-op element type: `ints` contiguous ints, placed in various ways within its extent.
LayoutP user_layout(Rng& rng, int ints, bool dense) {
  auto base = std::make_shared<Layout>();
  base->kind = Layout::BASE;
  base->unit = U_INT;
  LayoutP data = base;
  if (ints > 1 || rng.chance(30)) {
    auto c = std::make_shared<Layout>();
    c->kind = Layout::CONTIG;
    c->n = ints;
    c->units = ints;
    c->kids = {base};
    data = c;
  }
  int r = (int)rng.range(0, 3);
  if (dense && (r == 1 || r == 2)) r = 0;
#ifdef OPEN_MPI
  // No data 16 bytes into a struct on Open MPI 4.1.4: at the root, its nonblocking MPI_Ireduce
  // (coll/libnbc) receives into a temporary block of count * extent bytes and writes 16 bytes
  // (the lower bound) past its end (native_defects ireduce-lb: 82 elements of 3 ints,
  // a user sum, root 1 of 4; AddressSanitizer's stack names the block from libnbc's ireduce),
  // which corrupted the heap in --seed 41 --only coll at 4 ranks, case 1163 (docs/conformance.md).
  // Its blocking ring MPI_Allreduce frees a corrupted block on them too in that run.
  if (r == 2) r = 3;
#endif
  if (r == 0) return data;
  auto outer = std::make_shared<Layout>();
  outer->units = ints;
  outer->kids = {data};
  if (r == 1) {  // resized: a negative lower bound and/or a gap after the data
    outer->kind = Layout::RESIZED;
    outer->lb_shift = (int)rng.range(0, 2);
    outer->ext_add = (int)rng.range(outer->lb_shift ? 0 : 1, 2);
  } else if (r == 2) {  // the data 16 bytes into a struct
    outer->kind = Layout::STRUCT;
    outer->blens = {1};
    outer->gaps = {1};
    outer->order = {0};
  } else {
    outer->kind = Layout::DUP;
  }
  return outer;
}

OpP gen_reduce(Rng& rng, int p, const Limits& lim, RedKind kind) {
  auto op = std::make_shared<ReduceOp>();
  common(*op, rng, kRedNames[kind], p, kind == REDUCE);
  op->kind = kind;
  int elem_bytes;
  if (rng.chance(35)) {  // a user operation on contiguous ints
    int u = (int)rng.range(0, 2);
    op->op = -1 - u;
    int ints = u == 2 ? 4 : (int)rng.range(1, 3);
    bool dense = false;
#ifndef OPEN_MPI
    // MPICH 4.0.2's Reduce_scatter(_block) for non-commutative operations on a power-of-two
    // number of processes corrupts its heap when the type's extent exceeds its size.
    dense = u > 0 && (kind == REDUCE_SCATTER || kind == REDUCE_SCATTER_BLOCK);
#endif
    op->user_type = user_layout(rng, ints, dense);
    elem_bytes = 4 * ints;
  } else {
    std::vector<PredefType> types = predef_types();
    op->predef = (int)rng.range(0, (long)types.size() - 1);
    std::vector<int> ok;
    for (int i = 0; i < kNumOps; ++i)
      if (kOps[i].cls & types[op->predef].classes) ok.push_back(i);
    op->op = rng.pick(ok);
    MPI_Type_size(types[op->predef].type, &elem_bytes);
  }
  std::vector<long> thr;
  long div = 1;
  switch (kind) {
    case REDUCE:
      thr = ths({"REDUCE_SHORT_BYTES", "REDUCE_RING_BYTES"});
      break;
    case ALLREDUCE:
      thr = ths({"ALLREDUCE_DIRECT_BYTES", "ALLREDUCE_SHORT_BYTES", "ALLREDUCE_RING_BYTES"});
      break;
    case SCAN:
    case EXSCAN:
      thr = ths({"SCAN_CHAIN_BYTES", "SCAN_SEGMENT_BYTES"});
      break;
    default:
      thr = ths({"REDUCE_SCATTER_SHORT_BYTES"});
      div = p;
      break;
  }
  op->count = pick_units(rng, elem_bytes, 1, thr, div, lim);
  if (kind == REDUCE_SCATTER) {
    for (int i = 0; i < p; ++i) {
      int r = (int)rng.range(0, 9);
      op->rs_counts.push_back(r < 2 ? 0 : r < 5 ? rng.range(0, 5) : op->count);
    }
  }
  op->inplace = rng.chance(30);
  // MPI_BOTTOM names one buffer through the single type argument: only in place (Reduce: in
  // place at the root, whose recvbuf it then names; the others name their sendbuf). Only with
  // user operations: absolute addresses need a derived type, and the predefined operations
  // take predefined types only.
  op->bottom = op->op < 0 && rng.chance(25);
#ifdef OPEN_MPI
  // Open MPI 4.1.4's MPI_Reduce leaves the root's MPI_BOTTOM recvbuf as it was under
  // MPI_IN_PLACE (at 3 or more processes), and its MPI_Ireduce crashes there: MPI_BOTTOM is a
  // null pointer in Open MPI, which it then takes for a missing buffer.
  if (kind == REDUCE) op->bottom = false;
  // Its ring MPI_Allreduce (longer vectors) crashes on the large positive lower bound of an
  // absolute-address type, as on any positive lower bound (see user_layout).
  if (kind == ALLREDUCE && op->count * elem_bytes > 4096) op->bottom = false;
#endif
  if (op->bottom) op->inplace = true;
#ifndef OPEN_MPI
  // MPICH 4.0.2's MPI_Reduce (its reduce-scatter-gather algorithm: a commutative operation on
  // more than 2048 bytes) dereferences MPI_IN_PLACE at a root other than 0 and crashes.
  const bool commutative_op = op->op >= 0 || op->op == -1;
  if (kind == REDUCE && !op->nb && op->root != 0 && commutative_op && op->count * elem_bytes > 2048)
    op->inplace = op->bottom = false;
#endif
  op->nonroot_recv = rng.chance(30);
  return op;
}

}  // namespace

OpP gen_collective(Rng& rng, int p, const Limits& given) {
  Limits lim = given;
#ifdef OPEN_MPI
  // Open MPI 4.1.4's collectives of one process (coll/self) copy between two layouts in 64 KiB
  // pieces and drop the last bytes when a few bytes remain after a whole piece (65544 bytes of
  // ints as subarray into resized elements: 8 bytes; checked against MPI_Pack/MPI_Unpack).
  if (p == 1) lim.max_bytes = std::min(lim.max_bytes, 65536L);
#endif
  switch (rng.range(0, 16)) {
    case 0: {
      auto op = std::make_shared<BarrierOp>();
      common(*op, rng, "Barrier", p, false);
      return op;
    }
    case 1:
      return gen_bcast(rng, p, lim);
    case 2:
      return gen_rooted(rng, p, lim, false, false);
    case 3:
      return gen_rooted(rng, p, lim, false, true);
    case 4:
      return gen_rooted(rng, p, lim, true, false);
    case 5:
      return gen_rooted(rng, p, lim, true, true);
    case 6:
      return gen_allgather(rng, p, lim, false);
    case 7:
      return gen_allgather(rng, p, lim, true);
    case 8:
      return gen_alltoall(rng, p, lim, 0);
    case 9:
      return gen_alltoall(rng, p, lim, 1);
    case 10:
      return gen_alltoall(rng, p, lim, 2);
    case 11:
      return gen_reduce(rng, p, lim, REDUCE);
    case 12:
      return gen_reduce(rng, p, lim, ALLREDUCE);
    case 13:
      return gen_reduce(rng, p, lim, SCAN);
    case 14:
      return gen_reduce(rng, p, lim, EXSCAN);
    case 15:
      return gen_reduce(rng, p, lim, REDUCE_SCATTER);
    default:
      return gen_reduce(rng, p, lim, REDUCE_SCATTER_BLOCK);
  }
}

}  // namespace conf
