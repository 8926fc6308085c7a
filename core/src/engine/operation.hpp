// Operations the library runs itself (as opposed to requests handed straight to MPI).
#pragma once

#include <mpi.h>

namespace rangecomm::detail {

// A reference-counted operation behind a rangecomm::Request. The request holds one reference;
// engine queues that still need the operation hold their own.
class Operation {
 public:
  virtual ~Operation() = default;
  // Advances the operation without blocking. Returns true once it is complete, with its
  // status in *status (translated to the range) and its return code in *rc.
  virtual bool test(MPI_Status* status, int* rc) = 0;
  // Cancels it if it has not matched yet; a later test() then reports it cancelled.
  virtual void cancel() = 0;

  void ref() { ++refs_; }
  void unref() {
    if (--refs_ == 0) delete this;
  }

 private:
  int refs_ = 1;
};

}  // namespace rangecomm::detail
