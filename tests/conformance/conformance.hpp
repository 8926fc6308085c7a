// Differential conformance test: every case runs on a native MPI communicator and on a library
// communicator with the same members in the same order, and every output must be identical
// (docs/conformance.md). Shared declarations of the generator, the datatypes, the buffers and the
// outcome of a case.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace conf {

// ---------------------------------------------------------------- random numbers
// splitmix64: the same sequence on every rank for the same seed.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed) {}
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  long range(long lo, long hi) {
    return lo + (long)(next() % (uint64_t)(hi - lo + 1));
  }  // [lo, hi]
  bool chance(int percent) { return (int)(next() % 100) < percent; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[next() % v.size()];
  }
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[next() % i]);
  }
};
uint64_t mix(uint64_t a, uint64_t b);

// ---------------------------------------------------------------- basic elements
enum Prim : uint8_t {
  P_INT8,
  P_UINT8,
  P_INT16,
  P_UINT16,
  P_INT32,
  P_UINT32,
  P_INT64,
  P_UINT64,
  P_FLOAT,
  P_DOUBLE,
  P_BYTE,
  P_CHAR,
  P_BOOL
};
MPI_Datatype prim_type(Prim p);
int prim_size(Prim p);

// One basic element of a type map: its displacement, size and kind.
struct Piece {
  MPI_Aint off;
  Prim prim;
};

// Signature units: the element every datatype of a data-moving case is made of.
enum Unit {
  U_INT,
  U_DOUBLE,
  U_SHORT,
  U_BYTE,
  U_CHAR,
  U_LONG_LONG,
  U_MIX,
  U_DOUBLE_INT,
  U_2INT,
  U_SHORT_INT,
  U_COUNT
};
const char* unit_name(int u);
int unit_data_bytes(int u);  // bytes of data (MPI_Type_size) of one unit
void init_units();           // after MPI_Init: the struct unit U_MIX
void free_units();

// ---------------------------------------------------------------- datatype layouts
// A datatype described independently of any rank (the generator makes it from the case's random
// sequence); build() makes the MPI datatype on one rank.
struct Layout;
using LayoutP = std::shared_ptr<const Layout>;
struct Layout {
  enum Kind {
    BASE,
    BASE_ALT,
    CONTIG,
    VECTOR,
    HVECTOR,
    INDEXED,
    HINDEXED,
    INDEXED_BLOCK,
    STRUCT,
    RESIZED,
    DUP,
    SUBARRAY
  } kind = BASE;
  int unit = U_INT;
  int n = 0, blen = 0, gap = 0;         // count, block length, gap (child extents or 16-byte steps)
  bool negative = false;                // VECTOR: negative stride; SUBARRAY: Fortran order
  std::vector<int> blens, gaps, order;  // INDEXED/HINDEXED/STRUCT blocks, placement order
  std::vector<int> dims;                // SUBARRAY: sizes[2], subsizes[2], starts[2]
  int lb_shift = 0, ext_add = 0;  // RESIZED: 8-byte steps before the child's lb / after its ub
  std::vector<LayoutP> kids;
  long units = 1;  // signature units per element
  std::string describe() const;
};
// A layout of exactly k units of unit u (k of 1, 2, 3, 4, 6, 8, 12), nesting at most depth.
LayoutP gen_layout(Rng& rng, int unit, long k, int depth);
// Units per element allowed for generated layouts.
long gen_units_per_element(Rng& rng);

// A datatype on one rank with the type map of one element.
struct TypeInfo {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  bool owned = false;  // committed here; free() frees it
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  std::vector<Piece> pieces;  // one element's type map, in type-map order
  long units = 1;
  std::string name;
  void free();
};
using TypeP = std::shared_ptr<TypeInfo>;
TypeP build(const LayoutP& layout);
TypeP predefined(MPI_Datatype t, std::vector<Piece> pieces, const char* name);
// The same type map displaced by the absolute address of origin: used with MPI_BOTTOM.
TypeP absolute(const TypeP& t, const void* origin);

// ---------------------------------------------------------------- buffers
// `count` elements of `type` starting `at` bytes from the buffer's origin.
struct Placement {
  TypeP type;
  long count;
  MPI_Aint at;
  std::string label;
};
// A buffer: a region that covers every placement plus margins, filled with a seed-dependent
// pattern; origin() is where the buffer argument points.
struct Buf {
  std::vector<unsigned char> mem;
  MPI_Aint origin_off = 0;
  std::vector<Placement> places;
  unsigned char* origin() { return mem.data() + origin_off; }
  bool empty_region() const { return places.empty(); }
};
Buf make_buf(std::vector<Placement> places, uint64_t fill_seed);
// Valid values for a reduction with operation class `cls` in every element of the placements.
enum ValueClass { V_ANY, V_SUM, V_PROD, V_MINMAX, V_LOGICAL, V_LOC };
void fill_values(Buf& b, ValueClass cls, uint64_t seed);
// Where byte `off` of the region lies: which placement, element and basic element, or outside.
std::string where_in(const Buf& b, size_t off);
// A mask of the type-map bytes of the placements (1 = inside).
std::vector<unsigned char> typemap_mask(const Buf& b);

// ---------------------------------------------------------------- outcomes
// Everything a case produces on one rank, compared between the native and the library run.
struct Item {
  std::string name;
  std::vector<unsigned char> bytes;
  std::vector<unsigned char> care;  // empty: every byte counts; else 1 = compared
  std::shared_ptr<Buf> buf;         // for locating a differing byte
};
struct Outcome {
  std::vector<Item> items;
  void ints(const std::string& name, std::vector<int> v);
  void buffer(const std::string& name, Buf&& b, std::vector<unsigned char> care = {});
};
// The first difference, described; empty when equal.
std::string compare(const Outcome& native, const Outcome& lib);

// ---------------------------------------------------------------- cases
struct Ctx {
  MPI_Comm comm;
  int rank, size;
  bool lib;
  uint64_t seed;  // per case and rank: fill patterns
};
// One operation of a case. Every rank holds the same description; run() executes this rank's
// part. start() does a blocking call entirely, or starts a nonblocking one and returns its
// request; finish() records the outcome after completion.
struct Op {
  virtual ~Op() = default;
  virtual std::string describe() const = 0;
  virtual bool nonblocking() const { return false; }
  // Point-to-point operations: a process outside some of its messages may run ahead into the
  // next operation, whose messages an MPI_ANY_SOURCE receive here could match; a barrier after
  // it keeps the operations of a case apart.
  virtual bool fenced() const { return false; }
  // Returns the requests started (none for blocking operations).
  virtual void start(Ctx& ctx, Outcome& out, std::vector<MPI_Request>& reqs) = 0;
  virtual void finish(Ctx& ctx, Outcome& out) = 0;
};
using OpP = std::shared_ptr<Op>;

// How a rank completes its pending requests (complete() in main.cpp).
enum Completion {
  WAITALL,
  WAIT_IN_ORDER,
  WAIT_IN_REVERSE,
  TESTALL,
  WAITANY,
  TESTANY,
  WAITSOME,
  TESTSOME,
  NUM_COMPLETIONS
};

struct Case {
  int comm_index = 0;
  std::vector<OpP> ops;
  int completion = 0;  // how pending nonblocking collectives complete
  std::string describe() const;
};

struct Limits {
  long max_bytes = 1 << 20;  // largest buffer of one argument
  bool p2p = true, coll = true;
};

// Thresholds as the library reads them (its defaults, or RANGECOMM_* of the environment).
long threshold(const char* name);
void scale_thresholds();  // sets small RANGECOMM_* values so every algorithm runs at small sizes

OpP gen_collective(Rng& rng, int p, const Limits& lim);
int pick_unit(Rng& rng);
int coll_unit(Rng& rng, int p);
OpP gen_p2p(Rng& rng, int p, const Limits& lim);

// Units of a block whose bytes lie around a threshold or in a size class.
long pick_units(Rng& rng, int unit_bytes, long multiple, const std::vector<long>& thresholds,
                long divisor, const Limits& lim);

int err_class(int rc);
std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] void die(const char* f, ...) __attribute__((format(printf, 1, 2)));

}  // namespace conf
