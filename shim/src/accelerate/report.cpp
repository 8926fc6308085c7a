#include "accelerate/report.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "handles/handles.h"
#include "requests/requests.h"

namespace rcshim {

int g_report = 0;

namespace {

constexpr int kCalls = static_cast<int>(Creation::count);
constexpr int kWhys = static_cast<int>(Why::count);
constexpr int kColumns = 1 + kWhys;  // made by the library, then by MPI for each reason

// Relaxed atomics: counts from several threads, read once all of them are done.
std::atomic<long> g_counts[kCalls][kColumns];

const char* const kCallNames[kCalls] = {"MPI_Comm_dup",           "MPI_Comm_dup_with_info",
                                        "MPI_Comm_idup",          "MPI_Comm_idup_with_info",
                                        "MPI_Comm_split",         "MPI_Comm_split_type",
                                        "MPI_Comm_create",        "MPI_Comm_create_group",
                                        "MPI_Intercomm_merge",    "MPI_Comm_create_from_group",
                                        "MPIX_Comm_create_range", "MPIX_Icomm_create_group"};

const char* const kWhyNames[kWhys] = {"RANGECOMM_MODE is off",
                                      "intercommunicator",
                                      "processes outside MPI_COMM_WORLD",
                                      "split type MPI computes",
                                      "arguments MPI checks",
                                      "left to MPI in this mode",
                                      "topology to copy",
                                      "MPI's own, inside another MPI call",
                                      "handle table full"};

}  // namespace

void read_report() {
  const char* v = std::getenv("RANGECOMM_REPORT");
  g_report = v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

void count_library(Creation c) {
  g_counts[static_cast<int>(c)][0].fetch_add(1, std::memory_order_relaxed);
}

void count_mpi(Creation c, Why why) {
  g_counts[static_cast<int>(c)][1 + static_cast<int>(why)].fetch_add(1, std::memory_order_relaxed);
}

void print_report() {
  long mine[kCalls * kColumns], sum[kCalls * kColumns];
  for (int c = 0; c < kCalls; ++c)
    for (int k = 0; k < kColumns; ++k)
      mine[c * kColumns + k] = g_counts[c][k].load(std::memory_order_relaxed);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (MPI_Reduce(mine, sum, kCalls * kColumns, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD) !=
          MPI_SUCCESS ||
      rank != 0)
    return;
  const char* mode = std::getenv("RANGECOMM_MODE");
  std::fprintf(stderr,
               "rangecomm report: RANGECOMM_MODE=%s, %d processes; communicators made, summed "
               "over the processes\n",
               mode != nullptr && mode[0] != '\0' ? mode : "off", size);
  std::fprintf(stderr, "  %-28s %10s %10s  %s\n", "call", "library", "MPI", "why MPI");
  bool any = false;
  for (int c = 0; c < kCalls; ++c) {
    const long* row = &sum[c * kColumns];
    long through_mpi = 0;
    for (int w = 0; w < kWhys; ++w) through_mpi += row[1 + w];
    if (row[0] == 0 && through_mpi == 0) continue;
    any = true;
    char why[256] = "";
    size_t used = 0;
    for (int w = 0; w < kWhys && used < sizeof why; ++w)
      if (row[1 + w] != 0)
        used += std::snprintf(why + used, sizeof why - used, "%s%s: %ld", used ? "; " : "",
                              kWhyNames[w], row[1 + w]);
    std::fprintf(stderr, "  %-28s %10ld %10ld  %s\n", kCallNames[c], row[0], through_mpi, why);
  }
  if (!any) std::fprintf(stderr, "  (the program created no communicators)\n");
  std::fflush(stderr);
}

}  // namespace rcshim
