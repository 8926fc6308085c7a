// Requests behind fake handles (requests.cpp): polling, waiting, reporting, detached
// operations, partitioned requests (partitioned.cpp) and the progress rule (progress_rule.cpp).
#pragma once

#include <mpi.h>

#include "handles/handles.h"
#include "rangecomm/embedding.hpp"
#include "requests/progress_rule.h"

namespace rcshim {

// Advances r; true once its operation is complete (the result is kept in r until reported).
bool poll(FakeRequest& r);
// Blocks until r is complete, advancing everything else meanwhile.
void wait(FakeRequest& r);
// Hands the result of a complete r to the user: status (MPI_ERROR untouched unless
// keep_error_field is false), return code; frees a one-shot request (*h = MPI_REQUEST_NULL),
// makes a persistent one inactive.
int report(MPI_Request* h, FakeRequest& r, MPI_Status* status, bool set_error_field);
// An inactive persistent request: completion calls treat it like MPI_REQUEST_NULL.
inline bool inactive(const FakeRequest& r) { return r.start && !r.active; }
// MPI's empty status.
void set_empty_status(MPI_Status* st);

// Whether r (r.partitioned set) is a started partitioned send whose partitions are not all
// ready yet: its message is not sent, so completion calls see it incomplete.
bool partitioned_held(const FakeRequest& r);
// A finished partitioned receive's status, from its hidden channel's ranks to the program's.
void partitioned_status(FakeRequest& r);

// Keeps an operation nobody will wait for (MPI_Request_free, MPI_Bsend's copy) with the memory
// it uses until it completes; swept when new requests are made and at MPI_Finalize.
void detach(FakeRequest&& r);
void sweep_detached();
void finish_detached();

// Every wait loop of the shim gives way as core's do (under threads: the library lock's pause).
using rangecomm::Backoff;

}  // namespace rcshim
