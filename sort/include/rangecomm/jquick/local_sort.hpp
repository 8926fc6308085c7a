// The sequential sorts inside Janus Quicksort: a one-process communicator's data and every base
// case. Well-kept sorts from Debian's registry when their headers are on the include path,
// std::sort otherwise:
//
//   below kIps4oMin elements   pdqsort (pdqsort-dev): pattern-defeating quicksort, the
//                              branchless variant for arithmetic element types
//   from kIps4oMin elements    ips4o (libips4o-dev): in-place super scalar sample sort, the
//                              sequential one (no threads)
//
// Measured here (Debian 12, g++ 12, -O2, one process, uniform doubles; docs/jquick.md): 65536
// elements std::sort 4.9 ms, pdqsort 2.0 ms, ips4o 2.6 ms (1.9 ms at -O3); 2^20 elements
// 96 / 36 / 50 ms (34 ms ips4o at -O3). ips4o's buffers make it slower than pdqsort below some
// thousands of elements (256: 8.7 us against 1.9 us).
//
// Define RANGECOMM_JQUICK_STD_SORT to use std::sort whatever is installed. Every translation
// unit of a program should see the same choice.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <type_traits>

#if !defined(RANGECOMM_JQUICK_STD_SORT) && __has_include(<pdqsort.h>)
#include <pdqsort.h>
#define RANGECOMM_JQUICK_HAVE_PDQSORT 1
#endif
#if !defined(RANGECOMM_JQUICK_STD_SORT) && __has_include(<ips4o.hpp>)
#include <ips4o.hpp>
#define RANGECOMM_JQUICK_HAVE_IPS4O 1
#endif

namespace rangecomm::jquick {

// Where ips4o takes over from pdqsort (at -O3 they cross near 2^16 doubles; at -O2 pdqsort
// stays ahead up to 2^20, so the step is taken late).
inline constexpr std::ptrdiff_t kIps4oMin = std::ptrdiff_t{1} << 17;

// Sorts [first, last) under comp (a strict weak ordering); not stable, like std::sort.
template <class RandomIt, class Compare>
void local_sort(RandomIt first, RandomIt last, Compare comp) {
  [[maybe_unused]] const std::ptrdiff_t n = last - first;
#if defined(RANGECOMM_JQUICK_HAVE_IPS4O)
  if (n >= kIps4oMin) {
    ips4o::sort(first, last, comp);
    return;
  }
#endif
#if defined(RANGECOMM_JQUICK_HAVE_PDQSORT)
  using T = typename std::iterator_traits<RandomIt>::value_type;
  if constexpr (std::is_arithmetic<T>::value)
    pdqsort_branchless(first, last, comp);
  else
    pdqsort(first, last, comp);
#else
  std::sort(first, last, comp);
#endif
}

}  // namespace rangecomm::jquick
