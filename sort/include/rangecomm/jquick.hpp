// Janus Quicksort (paper 001, Sec. VII): distributed sorting with perfectly balanced output, on
// range communicators or, for comparison, on native MPI communicators.
//
//   std::vector<double> v = ...;               // any number of elements on any rank
//   rangecomm::jquick_sort(v, MPI_COMM_WORLD);  // collective over the communicator
//
// On return, the concatenation of the ranks' vectors in rank order is the input multiset in
// non-decreasing order under comp, and rank i holds exactly ceil(n/p) elements if
// i < n mod p and floor(n/p) otherwise (n = total count, 64-bit). T must be trivially copyable
// (it is sent as bytes) and default-constructible; comp must be a strict weak ordering that
// gives the same answers on every rank.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "rangecomm/jquick/backend.hpp"
#include "rangecomm/jquick/engine.hpp"
#include "rangecomm/jquick/options.hpp"

namespace rangecomm {

namespace jquick {

inline int check_comm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
  int inter = 0;
  int err = MPI_Comm_test_inter(comm, &inter);
  if (err != MPI_SUCCESS) return err;
  return inter ? MPI_ERR_COMM : MPI_SUCCESS;
}

template <class T, class Compare, class B>
int sort_with(B backend, std::vector<T>& data, MPI_Comm comm, const JQuickOptions& options,
              Compare comp) {
  double t0 = MPI_Wtime();
  Engine<T, Compare, B> engine(backend, comp, options);
  int err = engine.run(data, comm);
  if (options.stats != nullptr) {
    *options.stats = engine.stats();
    options.stats->seconds = MPI_Wtime() - t0;
  }
  return err;
}

}  // namespace jquick

// Returns MPI_SUCCESS or an MPI error code (MPI_ERR_COMM for a null or inter-communicator,
// MPI_ERR_ARG for an unknown backend, or what MPI / rangecomm reported). After an error the
// contents of data are unspecified.
template <class T, class Compare = std::less<>>
int jquick_sort(std::vector<T>& data, MPI_Comm comm, const JQuickOptions& options,
                Compare comp = {}) {
  static_assert(std::is_trivially_copyable<T>::value, "jquick_sort sends elements as bytes");
  static_assert(std::is_default_constructible<T>::value, "jquick_sort needs T{}");
  int err = jquick::check_comm(comm);
  if (err != MPI_SUCCESS) return err;
  int p = 0;
  MPI_Comm_size(comm, &p);
  switch (options.backend) {
    case SortBackend::range:
      // Two processes make no subgroups (the sort is one two-process base case on the sorts'
      // private communicator), so a range would only add its cost per message: they sort on
      // the private communicator itself, as the native backends do.
      if (p == 2)
        return jquick::sort_with(
            jquick::NativeBackend{jquick::NativeBackend::Creation::create_group}, data, comm,
            options, comp);
      return jquick::sort_with(jquick::RangeBackend{}, data, comm, options, comp);
    case SortBackend::native_create_group:
      return jquick::sort_with(jquick::NativeBackend{jquick::NativeBackend::Creation::create_group},
                               data, comm, options, comp);
    case SortBackend::native_split:
      return jquick::sort_with(jquick::NativeBackend{jquick::NativeBackend::Creation::split}, data,
                               comm, options, comp);
  }
  return MPI_ERR_ARG;
}

// Range communicators, default options. An error goes to comm's error handler (MPI_COMM_WORLD's
// for a null comm); if that handler returns, SortError is thrown.
template <class T, class Compare = std::less<>,
          class = std::enable_if_t<!std::is_same<std::decay_t<Compare>, JQuickOptions>::value>>
void jquick_sort(std::vector<T>& data, MPI_Comm comm, Compare comp = {}) {
  int err = jquick_sort(data, comm, JQuickOptions{}, comp);
  if (err == MPI_SUCCESS) return;
  MPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, err);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (rangecomm::Error_string(err, text, &len) != MPI_SUCCESS) len = 0;
  throw SortError(err,
                  "rangecomm::jquick_sort: " + std::string(text, static_cast<std::size_t>(len)));
}

}  // namespace rangecomm
