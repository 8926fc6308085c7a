// Create_Comm: attaching the range layer to an MPI communicator, its channel kept in an
// attribute of it and closed when MPI frees it or at MPI_Finalize.
#include "comm/range.hpp"
#include "util/errors.hpp"

namespace rangecomm {

using detail::CommAccess;
using detail::RangeState;

namespace {

// What a root communicator carries for us: its channel and its whole-range communicator. The
// attachment keeps the latter alive: its identity is the same in every process, so it must not
// be made again while peers may still hold the binding of its former slot.
struct Attachment {
  detail::ChannelRef channel;
  std::shared_ptr<RangeState> root;
};

int delete_attachment(MPI_Comm, int, void* value, void*) {
  auto* a = static_cast<Attachment*>(value);
  a->channel->close();
  delete a;
  return MPI_SUCCESS;
}

// At MPI_Finalize close every channel while MPI can still free the lanes. MPI_Finalize deletes
// MPI_COMM_SELF's attributes first, newest first (MPI 4.0, "Allowing User Functions at Process
// Termination"), then MPICH and Open MPI delete MPI_COMM_WORLD's the same way. This one is set
// on MPI_COMM_WORLD at the first Create_Comm, before the attributes a program (or a library such
// as PETSc) sets later, so their delete callbacks, run before it, may still use and free range
// communicators. (An MPI that left MPI_COMM_WORLD's attributes alone would free the lanes
// itself.)
int close_all_channels(MPI_Comm, int, void*, void*) {
  auto channels = detail::open_channels();
  for (detail::Channel* ch : channels) ch->close();
  return MPI_SUCCESS;
}

int attachment_keyval() {
  static int keyval = MPI_KEYVAL_INVALID;
  if (keyval == MPI_KEYVAL_INVALID) {
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attachment, &keyval, nullptr);
    int finalize_keyval = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, close_all_channels, &finalize_keyval, nullptr);
    MPI_Comm_set_attr(MPI_COMM_WORLD, finalize_keyval, nullptr);
  }
  return keyval;
}

}  // namespace

int Create_Comm(MPI_Comm mpi_comm, Comm* out) {
  if (out == nullptr) return detail::raise(MPI_COMM_WORLD, MPI_ERR_ARG, "Create_Comm: out is null");
  *out = Comm();
  if (mpi_comm == MPI_COMM_NULL)
    return detail::raise(MPI_COMM_WORLD, MPI_ERR_COMM, "Create_Comm: MPI_COMM_NULL");
  int keyval = attachment_keyval();
  void* value = nullptr;
  int found = 0;
  int rc = MPI_Comm_get_attr(mpi_comm, keyval, &value, &found);
  if (rc != MPI_SUCCESS) return detail::raise_mpi(MPI_COMM_WORLD, rc, "Create_Comm");
  auto* attachment = static_cast<Attachment*>(value);
  if (!found) {
    detail::ChannelRef channel;
    rc = detail::Channel::open(mpi_comm, &channel);
    if (rc != MPI_SUCCESS) return rc;
    attachment = new Attachment{std::move(channel), {}};
    MPI_Comm_set_attr(mpi_comm, keyval, attachment);
  }
  if (attachment->root) {
    *out = CommAccess::make(attachment->root);
    return MPI_SUCCESS;
  }
  // The root's identity is the same on every process (each channel has lanes of its own).
  auto s = detail::new_range_state();
  s->channel = attachment->channel;
  s->size = s->channel->root_size();
  s->rank = s->channel->root_rank();
  s->id = {1, 1};
  attachment->root = s;
  *out = CommAccess::make(std::move(s));
  return MPI_SUCCESS;
}

}  // namespace rangecomm
