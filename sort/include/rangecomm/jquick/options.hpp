// Options, statistics and the error type of rangecomm::jquick_sort (rangecomm/jquick.hpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace rangecomm {

// What the subgroups of Janus Quicksort are made of. The algorithm code is the same for all.
enum class SortBackend {
  range,                // rangecomm::Split_Comm: local, O(1)
  native_create_group,  // MPI_Comm_create_group: collective over each new group
  native_split,         // two MPI_Comm_split calls over the parent group (left, right)
};

const char* to_string(SortBackend backend);

// Filled by jquick_sort on the calling process when JQuickOptions::stats is set.
struct JQuickStats {
  double seconds = 0;           // the whole call
  double create_seconds = 0;    // creating and freeing communicators (setup and subgroups)
  int levels = 0;               // distributed recursion levels this process took part in
  int janus_levels = 0;         // ... of which while it worked on two groups at once
  int max_depth = 0;            // deepest distributed level (the first level is depth 0)
  std::int64_t pair_cases = 0;  // two-process base cases
  std::int64_t messages = 0;    // data messages sent (self-copies not counted)
};

// Sample size of a level over q processes holding N elements:
//   max(samples_per_log_p * ceil(log2 q), (N / q) / elements_per_sample, samples_min), odd.
// Everything except backend and slot_group_max is taken from rank 0 of the communicator, so
// ranks need not agree on it; those two must be the same on all ranks.
struct JQuickOptions {
  SortBackend backend = SortBackend::range;
  std::uint64_t seed = 0x6a616e7573ULL;
  int samples_per_log_p = 16;
  std::int64_t elements_per_sample = 64;
  int samples_min = 33;
  // Largest data message in bytes (larger transfers are split); 0 means INT_MAX.
  std::int64_t max_message_bytes = 0;
  // Groups of up to this many processes exchange counts and samples in one all-reduce of a
  // slot per process (fewer rounds of messages, messages growing with the group); larger
  // groups use exscan, all-reduce and broadcast of single values and a separate sample round.
  // Must be the same on all ranks, like backend.
  int slot_group_max = 256;
  // Groups of up to this many processes (and at most slot_group_max) send those slots straight
  // to every other member instead of all-reducing them: one message deep instead of log2 q,
  // at q - 1 messages per process. Must be the same on all ranks.
  int slot_direct_max = 8;
  JQuickStats* stats = nullptr;
};

// Thrown by the overload without options when the communicator's error handler returns
// (MPI_ERRORS_RETURN): code() is the MPI error code.
class SortError : public std::runtime_error {
 public:
  SortError(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

inline const char* to_string(SortBackend backend) {
  switch (backend) {
    case SortBackend::range:
      return "range";
    case SortBackend::native_create_group:
      return "create_group";
    case SortBackend::native_split:
      return "split";
  }
  return "?";
}

}  // namespace rangecomm
