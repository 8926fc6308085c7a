// The conversions of the Fortran entry points' library-handle path (support.h).
#include "fortran/support.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fortran_entries.h"

extern "C" void* rc_f_resolve(int index) {
  const char* name = rc_f_real_names[index];
  void* fn = dlsym(RTLD_NEXT, name);
  if (fn == nullptr) {
    // Only a Fortran caller reaches an entry, and its MPI Fortran library defines the name.
    std::fprintf(stderr,
                 "rangecomm: %s of the MPI Fortran library is not loaded after "
                 "librangecomm.so: %s\n",
                 name, dlerror());
    std::abort();
  }
  rc_f_real_table[index].store(fn, std::memory_order_relaxed);
  return fn;
}

namespace rcshim {

namespace {

#if defined(MPI_F_STATUS_SIZE)
constexpr int kStatusSize = MPI_F_STATUS_SIZE;
#else
constexpr int kStatusSize = sizeof(MPI_Status) / sizeof(MPI_Fint);  // Open MPI 4.1
#endif

// Fortran's special arguments are addresses of variables of the MPI's Fortran layer: Open
// MPI's in every name form it may export, MPICH's recorded at its Fortran initialisation in
// pointers (mpif.h) or variables of their own (mpi_f08).
enum Sentinel { kBottom, kInPlace, kUnweighted, kWeightsEmpty, kStatusIgnore, kStatusesIgnore };
constexpr int kSentinels = 6;
const char* const kOpenMpiNames[kSentinels] = {"bottom",        "in_place",      "unweighted",
                                               "weights_empty", "status_ignore", "statuses_ignore"};
// Variables holding the address (MPICH's mpif.h layer, and MPI's C names for Fortran's
// status sentinels).
const char* const kPointerNames[kSentinels] = {"MPIR_F_MPI_BOTTOM",     "MPIR_F_MPI_IN_PLACE",
                                               "MPIR_F_MPI_UNWEIGHTED", "MPIR_F_MPI_WEIGHTS_EMPTY",
                                               "MPI_F_STATUS_IGNORE",   "MPI_F_STATUSES_IGNORE"};
const char* const kF08Names[kSentinels] = {
    "MPIR_F08_MPI_BOTTOM", "MPIR_F08_MPI_IN_PLACE", nullptr, nullptr, nullptr, nullptr};

struct Addresses {
  const void* direct[kSentinels][5] = {};  // the sentinel is the variable's address
  void* const* pointer[kSentinels] = {};   // the sentinel is the variable's value
};

const Addresses& addresses() {
  static const Addresses found = [] {
    Addresses a;
    for (int s = 0; s < kSentinels; ++s) {
      std::string low = std::string("mpi_fortran_") + kOpenMpiNames[s];
      std::string up = low;
      std::transform(up.begin(), up.end(), up.begin(), ::toupper);
      const std::string names[5] = {low, low + "_", low + "__", up,
                                    kF08Names[s] != nullptr ? kF08Names[s] : ""};
      for (int i = 0; i < 5; ++i)
        if (!names[i].empty()) a.direct[s][i] = dlsym(RTLD_DEFAULT, names[i].c_str());
      a.pointer[s] = static_cast<void* const*>(dlsym(RTLD_DEFAULT, kPointerNames[s]));
    }
    return a;
  }();
  return found;
}

bool is(const void* p, Sentinel s) {
  if (p == nullptr) return false;
  const Addresses& a = addresses();
  for (const void* d : a.direct[s])
    if (d == p) return true;
  return a.pointer[s] != nullptr && *a.pointer[s] == p;
}

}  // namespace

bool fortran_null_copy_fn(const void* fn) {
  static const std::vector<const void*> found = [] {
    std::vector<const void*> all;
    for (std::string low : {"mpi_comm_null_copy_fn", "mpi_null_copy_fn"}) {
      std::string up = low;
      std::transform(up.begin(), up.end(), up.begin(), ::toupper);
      for (const std::string& name : {low, low + "_", low + "__", up})
        if (const void* p = dlsym(RTLD_DEFAULT, name.c_str())) all.push_back(p);
    }
    if (const void* p = dlsym(RTLD_DEFAULT, "__mpi_f08_callbacks_MOD_mpi_comm_null_copy_fn"))
      all.push_back(p);
    return all;
  }();
  return fn != nullptr && std::find(found.begin(), found.end(), fn) != found.end();
}

void* fortran_buffer(void* buffer) {
  if (is(buffer, kBottom)) return MPI_BOTTOM;
  if (is(buffer, kInPlace)) return MPI_IN_PLACE;
  return buffer;
}

int* fortran_weights(MPI_Fint* weights) {
  if (is(weights, kUnweighted)) return MPI_UNWEIGHTED;
  if (is(weights, kWeightsEmpty)) return MPI_WEIGHTS_EMPTY;
  return weights;
}

void fortran_indices(MPI_Fint* indices, MPI_Fint n) {
  for (MPI_Fint i = 0; i < n; ++i) ++indices[i];
}

MPI_Fint fortran_logical(bool value) { return value ? 1 : 0; }

MPI_Fint fortran_peers(MPI_Comm comm, Peers which) {
  int n = 0;
  if (which == Peers::all) {
    int inter = 0;
    MPI_Comm_test_inter(comm, &inter);
    (inter ? MPI_Comm_remote_size : MPI_Comm_size)(comm, &n);
    return n;
  }
  int topology = MPI_UNDEFINED;
  MPI_Topo_test(comm, &topology);
  if (topology == MPI_DIST_GRAPH) {
    int sources = 0, destinations = 0, weighted = 0;
    MPI_Dist_graph_neighbors_count(comm, &sources, &destinations, &weighted);
    return which == Peers::sources ? sources : destinations;
  }
  if (topology == MPI_GRAPH) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Graph_neighbors_count(comm, rank, &n);
    return n;
  }
  if (topology == MPI_CART) {
    MPI_Cartdim_get(comm, &n);
    return 2 * n;
  }
  return 0;  // no topology: MPI's call reports it
}

FortranString::FortranString(const char* text, size_t length) {
  size_t begin = 0, end = length;
  while (begin < end && text[begin] == ' ') ++begin;
  while (end > begin && text[end - 1] == ' ') --end;
  text_.assign(text + begin, end - begin);
}

FortranStringOut::FortranStringOut(char* out, size_t length)
    : out_(out), length_(length), buffer_(length + MPI_MAX_OBJECT_NAME + 1, '\0') {}

void FortranStringOut::copy_out() {
  size_t n = std::min(std::strlen(buffer_.data()), length_);
  std::memcpy(out_, buffer_.data(), n);
  std::memset(out_ + n, ' ', length_ - n);
}

FortranStatuses::FortranStatuses(MPI_Fint* out, MPI_Fint count, bool array)
    : out_(is(out, array ? kStatusesIgnore : kStatusIgnore) ? nullptr : out),
      ignore_(array ? MPI_STATUSES_IGNORE : MPI_STATUS_IGNORE),
      statuses_(out_ == nullptr ? 0 : std::max<size_t>(fortran_count(count), 1)) {}

void FortranStatuses::copy_out(MPI_Fint written) {
  if (out_ == nullptr) return;
  MPI_Fint n = std::min<MPI_Fint>(written, static_cast<MPI_Fint>(statuses_.size()));
  for (MPI_Fint i = 0; i < n; ++i) MPI_Status_c2f(&statuses_[i], out_ + i * kStatusSize);
}

}  // namespace rcshim
