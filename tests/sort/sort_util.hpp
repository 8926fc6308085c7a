// Shared helpers of the sorting tests: input distributions, element types, and the checks every
// sorted output must pass (exact multiset, order across rank boundaries, exact balance).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mpi_test.hpp"
#include "rangecomm/rangecomm.hpp"

namespace sorttest {

// The detailed message of an MPI or rangecomm error code, for test failure output.
inline std::string error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (rangecomm::Error_string(code, text, &len) != MPI_SUCCESS) return "?";
  return std::string(text, static_cast<std::size_t>(len));
}

enum class Dist {
  uniform,       // random keys
  sorted,        // globally sorted already
  reverse,       // globally sorted descending
  all_equal,     // one key
  few_distinct,  // three keys
  zipf,          // heavy skew: key k with probability ~ 1/k
  on_rank0,      // everything on rank 0
  on_last_rank,  // everything on the last rank
  fewer_than_p,  // n = p - 1 elements, one per rank except rank 0
  single,        // n = 1, on the middle rank
  empty,         // n = 0
  unbalanced,    // random count per rank, 0..2*per
};

inline const std::vector<Dist>& all_dists() {
  static const std::vector<Dist> d = {Dist::uniform,   Dist::sorted,       Dist::reverse,
                                      Dist::all_equal, Dist::few_distinct, Dist::zipf,
                                      Dist::on_rank0,  Dist::on_last_rank, Dist::fewer_than_p,
                                      Dist::single,    Dist::empty,        Dist::unbalanced};
  return d;
}

inline const char* name(Dist d) {
  static const char* const names[] = {"uniform",      "sorted", "reverse",  "all_equal",
                                      "few_distinct", "zipf",   "on_rank0", "on_last_rank",
                                      "fewer_than_p", "single", "empty",    "unbalanced"};
  return names[static_cast<int>(d)];
}

// This rank's keys; convert<T> turns each into an element.
inline std::vector<std::uint64_t> make_keys(Dist d, std::int64_t per, std::uint64_t seed) {
  const int me = mpitest::world_rank(), p = mpitest::world_size();
  std::mt19937_64 g(seed * 7919u + static_cast<std::uint64_t>(me) * 104729u + static_cast<int>(d));
  std::int64_t count = per;
  switch (d) {
    case Dist::on_rank0:
      count = me == 0 ? per * p : 0;
      break;
    case Dist::on_last_rank:
      count = me == p - 1 ? per * p : 0;
      break;
    case Dist::fewer_than_p:
      count = me == 0 ? 0 : 1;
      break;
    case Dist::single:
      count = me == p / 2 ? 1 : 0;
      break;
    case Dist::empty:
      count = 0;
      break;
    case Dist::unbalanced:
      count = static_cast<std::int64_t>(g() % (2 * per + 1));
      break;
    default:
      break;
  }
  std::vector<std::uint64_t> k(static_cast<std::size_t>(count));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint64_t global = static_cast<std::uint64_t>(me) * per + i;
    std::uint64_t total = static_cast<std::uint64_t>(p) * per;
    switch (d) {
      case Dist::sorted:
        k[i] = global * 1000003u;
        break;
      case Dist::reverse:
        k[i] = (total - global) * 1000003u;
        break;
      case Dist::all_equal:
        k[i] = 42;
        break;
      case Dist::few_distinct:
        k[i] = g() % 3;
        break;
      case Dist::zipf:
        k[i] = static_cast<std::uint64_t>(1.0 / (u(g) + 1e-6));
        break;
      default:
        k[i] = g();
        break;
    }
  }
  return k;
}

// A struct sorted by a custom comparator: descending key, payload ignored. Equal keys with
// different payloads check that no element is lost or duplicated where the order cannot tell
// elements apart.
struct Rec {
  std::int32_t key;
  std::int32_t rank;
  std::uint64_t payload;
};
struct RecDescending {
  bool operator()(const Rec& a, const Rec& b) const { return a.key > b.key; }
};

template <class T>
T convert(std::uint64_t key, std::size_t i);

template <>
inline std::uint64_t convert<std::uint64_t>(std::uint64_t key, std::size_t) {
  return key;
}
template <>
inline std::int64_t convert<std::int64_t>(std::uint64_t key, std::size_t) {
  return static_cast<std::int64_t>(key);
}
// Doubles: signed, with zeros of both signs, infinities and subnormals among random keys.
template <>
inline double convert<double>(std::uint64_t key, std::size_t i) {
  if (key % 97 == 5) {
    const double special[] = {0.0,
                              -0.0,
                              std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::denorm_min(),
                              -1e-310};
    return special[(key / 97 + i) % 6];
  }
  return static_cast<double>(static_cast<std::int64_t>(key)) / 3.0;
}
template <>
inline Rec convert<Rec>(std::uint64_t key, std::size_t i) {
  Rec r{};
  r.key = static_cast<std::int32_t>(key > 1000000 ? key >> 40 : key);
  r.rank = mpitest::world_rank();
  r.payload = static_cast<std::uint64_t>(i) * 2654435761u + key;
  return r;
}

template <class T>
std::vector<T> make_input(Dist d, std::int64_t per, std::uint64_t seed) {
  auto keys = make_keys(d, per, seed);
  std::vector<T> v(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) v[i] = convert<T>(keys[i], i);
  return v;
}

// Order-independent checksum of the elements' bytes.
template <class T>
std::uint64_t checksum(const std::vector<T>& v) {
  std::uint64_t sum = 0;
  for (const T& x : v) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, &x, sizeof(T));
    std::uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : b) h = (h ^ c) * 1099511628211ULL;
    sum += h ^ (h >> 29);
  }
  return sum;
}

// Every rank's elements of `in` and of `out` at rank 0, each multiset as byte strings sorted
// (empty elsewhere). One Gather and one Gatherv: collectives are slow on oversubscribed MPICH.
template <class T>
std::pair<std::vector<std::string>, std::vector<std::string>> gather_both(const std::vector<T>& in,
                                                                          const std::vector<T>& out,
                                                                          MPI_Comm comm) {
  int me = 0, p = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  int mine[2] = {static_cast<int>(in.size()), static_cast<int>(out.size())};
  std::vector<char> buf((in.size() + out.size()) * sizeof(T) + 1);
  if (!in.empty()) std::memcpy(buf.data(), in.data(), in.size() * sizeof(T));
  if (!out.empty())
    std::memcpy(buf.data() + in.size() * sizeof(T), out.data(), out.size() * sizeof(T));
  std::vector<int> sizes(2 * static_cast<std::size_t>(p)), counts(p), displs(p);
  MPI_Gather(mine, 2, MPI_INT, sizes.data(), 2, MPI_INT, 0, comm);
  int total = 0;
  for (int i = 0; i < p; ++i) {
    displs[i] = total;
    counts[i] = (sizes[2 * i] + sizes[2 * i + 1]) * static_cast<int>(sizeof(T));
    total += counts[i];
  }
  std::vector<char> all(static_cast<std::size_t>(total) + 1);
  MPI_Gatherv(buf.data(), (mine[0] + mine[1]) * static_cast<int>(sizeof(T)), MPI_BYTE, all.data(),
              counts.data(), displs.data(), MPI_BYTE, 0, comm);
  std::pair<std::vector<std::string>, std::vector<std::string>> res;
  if (me != 0) return res;
  for (int i = 0; i < p; ++i) {
    const char* at = &all[displs[i]];
    for (int k = 0; k < sizes[2 * i] + sizes[2 * i + 1]; ++k, at += sizeof(T))
      (k < sizes[2 * i] ? res.first : res.second).emplace_back(at, sizeof(T));
  }
  std::sort(res.first.begin(), res.first.end());
  std::sort(res.second.begin(), res.second.end());
  return res;
}

// Collective over comm. CHECKs that `out` (this rank's output) is `in` (this rank's input)
// sorted across the whole communicator under comp, and, if balanced, that rank i holds exactly
// ceil(n/p) elements when i < n mod p and floor(n/p) otherwise.
template <class T, class Compare>
void check_sorted(const std::vector<T>& in, const std::vector<T>& out, MPI_Comm comm, Compare comp,
                  bool balanced) {
  int me = 0, p = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &p);
  std::uint64_t sums[4] = {in.size(), out.size(), checksum(in), checksum(out)};
  MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_UINT64_T, MPI_SUM, comm);
  CHECK(sums[1] == sums[0]);  // count
  CHECK(sums[3] == sums[2]);  // checksum
  const std::int64_t n = static_cast<std::int64_t>(sums[0]);
  if (balanced) CHECK(static_cast<std::int64_t>(out.size()) == n / p + (me < n % p ? 1 : 0));
  CHECK(std::is_sorted(out.begin(), out.end(), comp));

  // Order across boundaries: each non-empty rank's first element against the previous
  // non-empty rank's last.
  struct Ends {
    std::int32_t has;
    T first, last;
  };
  Ends mine{};
  mine.has = out.empty() ? 0 : 1;
  if (!out.empty()) {
    mine.first = out.front();
    mine.last = out.back();
  }
  std::vector<Ends> ends(static_cast<std::size_t>(p));
  MPI_Allgather(&mine, sizeof(Ends), MPI_BYTE, ends.data(), sizeof(Ends), MPI_BYTE, comm);
  int prev = -1;
  for (int i = 0; i < p; ++i) {
    if (!ends[i].has) continue;
    if (prev >= 0) {
      INFO("boundary between ranks " << prev << " and " << i);
      CHECK_FALSE(comp(ends[i].first, ends[prev].last));
    }
    prev = i;
  }

  auto all = gather_both(in, out, comm);
  CHECK(all.first == all.second);  // the exact multiset (only rank 0 holds them)
}

}  // namespace sorttest
