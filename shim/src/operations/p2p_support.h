// Helpers shared by the point-to-point, persistent and collective hooks.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "handles/errors.h"
#include "handles/handles.h"
#include "requests/requests.h"

namespace rcshim {

// The entry of a fake communicator whose range exists (not a pending MPI_Comm_idup).
int fake_range(MPI_Comm comm, const char* fn, FakeComm** c);

// A new fake request on comm whose operation op starts in its inner request; on failure the
// request is not made and the error is raised on comm.
int start_request(MPI_Comm comm, MPI_Request* request, const char* fn,
                  const std::function<int(rangecomm::Request*)>& op);

// MPI_Bsend's semantics: the data is copied and the call completes locally.
int buffered_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  const rangecomm::Comm& range);

// Sends an already packed copy (MPI_PACKED, size bytes), detached: it completes unseen.
int send_copy(std::shared_ptr<std::vector<char>> packed, int size, int dest, int tag, MPI_Comm comm,
              const rangecomm::Comm& range);

// Packs count elements of buf into *packed (MPI_PACKED, *size bytes).
int pack(const void* buf, int count, MPI_Datatype type, MPI_Comm comm, std::vector<char>* packed,
         int* size);

// A datatype that stays valid for as long as *keep lives, even if the program frees its own
// handle (persistent requests keep their arguments until they are freed).
MPI_Datatype held_type(MPI_Datatype type, std::shared_ptr<void>* keep);

}  // namespace rcshim

// Declares c and range for a hook on fake communicator comm, or returns the error.
#define RC_FAKE_RANGE(fn)                             \
  FakeComm* c = nullptr;                              \
  if (int rc_ = fake_range(comm, fn, &c)) return rc_; \
  const rangecomm::Comm& range = c->range
