// MPI_Comm_split computed locally from everyone's colours and keys (comm_split.cpp): for library
// communicators, and for real parents under the acceleration modes.
#pragma once

#include <vector>

#include "rangecomm/rangecomm.hpp"

namespace rcshim {

// What each member gives a split's exchange, kSplitEntry ints in rank order: its colour, its
// key, and whether its handle table is nearly full (comm_handles_low).
constexpr int kSplitEntry = 3;
// Whether any member's handle table is nearly full: then every member leaves the split to MPI.
bool any_table_low(const std::vector<int>& entries);
// What MPI_Comm_split makes, from everyone's entries (comm_split.cpp).
struct SplitPlan {
  bool member = false;     // color != MPI_UNDEFINED
  std::vector<int> ranks;  // my group's parent ranks in new rank order (members only)
};
SplitPlan plan_split(const std::vector<int>& entries, int me);
// This process's group of plan made `levels` below parent (null for a non-member).
int make_members(const rangecomm::Comm& parent, const SplitPlan& plan, int levels,
                 rangecomm::Comm* out);

}  // namespace rcshim
