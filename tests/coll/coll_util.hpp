// Shared helpers of the collective tests: the same processes as a range and as a native MPI
// communicator, data generators, and element-by-element comparison.
#pragma once

#include <rangecomm/rangecomm.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "coll/tuning.hpp"  // core/src: tests force algorithms through the environment
#include "mpi_test.hpp"

namespace colltest {

// A range and a real communicator of exactly the same processes (native is MPI_COMM_NULL and
// range is null on non-members).
struct Pair {
  std::string name;
  rangecomm::Comm range;
  MPI_Comm native = MPI_COMM_NULL;
  Pair() = default;
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;
  ~Pair() {
    if (native != MPI_COMM_NULL) MPI_Comm_free(&native);
  }
  bool member() const { return !range.is_null(); }
};

inline rangecomm::Comm world() {
  rangecomm::Comm w;
  REQUIRE(rangecomm::Create_Comm(MPI_COMM_WORLD, &w) == MPI_SUCCESS);
  return w;
}

// Range first..last step stride of `parent` (whose ranks must be the world's ranks), and its
// native twin via MPI_Comm_create_group (collective over the members only, so overlapping
// pairs can be made one after the other).
inline std::unique_ptr<Pair> make_pair(const rangecomm::Comm& parent, int first, int last,
                                       int stride, const std::string& name) {
  auto p = std::make_unique<Pair>();
  p->name = name;
  // Every rank agrees on success before anyone goes on to a collective.
  bool made = rangecomm::Split_Comm(parent, first, last, stride, &p->range) == MPI_SUCCESS;
  REQUIRE(mpitest::all_ranks(made));
  if (p->member()) {
    MPI_Group world_group, group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int triple[1][3] = {{first, last, stride}};
    MPI_Group_range_incl(world_group, 1, triple, &group);
    REQUIRE(MPI_Comm_create_group(MPI_COMM_WORLD, group, 99, &p->native) == MPI_SUCCESS);
    MPI_Group_free(&group);
    MPI_Group_free(&world_group);
  }
  return p;
}

// The shapes every collective is tested on: the whole world, both halves, the evens, a size-1
// range, and the two sides of a janus process (p/2 is in both) — all alive at once. The janus
// sides are children of the whole-world range, one level deeper than the halves they may
// coincide with.
inline std::vector<std::unique_ptr<Pair>> shapes(const rangecomm::Comm& w) {
  int p = w.size(), h = p / 2, me = w.rank();
  std::vector<std::unique_ptr<Pair>> out;
  out.push_back(make_pair(w, 0, p - 1, 1, "world"));
  if (h > 0) out.push_back(make_pair(w, 0, h - 1, 1, "lower half"));
  out.push_back(make_pair(w, h, p - 1, 1, "upper half"));
  out.push_back(make_pair(w, 0, p - 1, 2, "evens"));
  out.push_back(make_pair(w, me, me, 1, "self"));
  if (p > 2) {
    const rangecomm::Comm& whole = out[0]->range;  // world ranks, depth 1
    out.push_back(make_pair(whole, 0, h, 1, "janus left"));
    out.push_back(make_pair(whole, h, p - 1, 1, "janus right"));
  }
  return out;
}

// Sets an environment variable (an algorithm threshold, read at every collective call; the
// same on every rank) for as long as the object lives. Restoring in the destructor keeps a
// forced setting from leaking into later test cases when a REQUIRE throws.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    setenv(name_.c_str(), value.c_str(), 1);
    rangecomm::detail::tuning_changed();
  }
  ScopedEnv(std::string name, long long value)
      : ScopedEnv(std::move(name), std::to_string(value)) {}
  ScopedEnv(ScopedEnv&& other) noexcept : name_(std::move(other.name_)) { other.name_.clear(); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ScopedEnv& operator=(ScopedEnv&&) = delete;
  ~ScopedEnv() {
    if (name_.empty()) return;
    unsetenv(name_.c_str());
    rangecomm::detail::tuning_changed();
  }

 private:
  std::string name_;
};

inline std::mt19937 rng_for(int rank, int salt) {
  return std::mt19937(static_cast<unsigned>(rank * 7919 + salt));
}

// n pseudo-random values of rank `rank` (same on every run), small enough not to overflow sums.
template <class T>
std::vector<T> random_values(size_t n, int rank, int salt) {
  auto g = rng_for(rank, salt);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(g() % 1000) - static_cast<T>(g() % 7);
  return v;
}

// A strided type: one int with the extent of two, i.e. every other int of a buffer.
inline MPI_Datatype every_other_int() {
  static MPI_Datatype t = [] {
    MPI_Datatype v, r;
    MPI_Type_vector(1, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 2 * sizeof(int), &r);
    MPI_Type_commit(&r);
    MPI_Type_free(&v);
    return mpitest::free_at_finalize(r);
  }();
  return t;
}

// A non-commutative operation: products of 2x2 integer matrices (mod 2^32), in rank order.
inline void matmul(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<std::uint32_t*>(in);
  auto* b = static_cast<std::uint32_t*>(inout);
  for (int i = 0; i < *len; ++i, a += 4, b += 4) {
    std::uint32_t r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                          a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    std::memcpy(b, r, sizeof r);
  }
}

inline MPI_Datatype matrix_type() {
  static MPI_Datatype t = [] {
    MPI_Datatype d;
    MPI_Type_contiguous(4, MPI_UINT32_T, &d);
    MPI_Type_commit(&d);
    return mpitest::free_at_finalize(d);
  }();
  return t;
}

inline MPI_Op matmul_op() {
  static MPI_Op op = [] {
    MPI_Op o;
    MPI_Op_create(matmul, 0, &o);
    return o;
  }();
  return op;
}

}  // namespace colltest
