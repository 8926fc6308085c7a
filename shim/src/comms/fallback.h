// The real communicator the shim makes for a range when an MPI call needs one (fallback.cpp);
// rc_real_comm_of (shim_hooks.h) makes it.
#pragma once

#include "handles/handles.h"

namespace rcshim {

// Frees the range's fallback communicator, if it has one (fallback.cpp).
void drop_fallback(FakeComm& c);

}  // namespace rcshim
