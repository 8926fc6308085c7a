#include "wire/control.hpp"

#include <array>
#include <cstring>

#include "engine/progress.hpp"
#include "util/type_facts.hpp"

namespace rangecomm::detail {

namespace {

// A control message sent with MPI_Isend that was not complete at once: its buffer lives until
// it is.
template <class Buffer>
class ControlSendOp final : public Operation {
 public:
  Buffer message;
  MPI_Request request = MPI_REQUEST_NULL;
  bool test(MPI_Status* status, int* rc) override {
    int flag = 0;
    *rc = MPI_Test(&request, &flag, status);
    return flag || *rc != MPI_SUCCESS;
  }
  void cancel() override {}
};

// Sends op->message (whose first `bytes` bytes are the message) with MPI_Isend; keeps op until
// the send is complete.
template <class Buffer>
int send_buffered(ControlSendOp<Buffer>* op, const void* data, int bytes, MPI_Datatype type,
                  int dest, int tag, MPI_Comm lane) {
  int rc = MPI_Isend(data, bytes, type, dest, tag, lane, &op->request);
  MPI_Status st;
  int done_rc = MPI_SUCCESS;
  if (rc != MPI_SUCCESS || op->test(&st, &done_rc)) {
    op->unref();
    return rc != MPI_SUCCESS ? rc : done_rc;
  }
  adopt_orphan(op);  // completes in a later progress call
  return MPI_SUCCESS;
}

}  // namespace

int send_control(Channel& channel, int lane, int dest, TagLayout::Control kind,
                 const ControlMessage& m) {
  auto* op = new ControlSendOp<ControlMessage>;
  op->message = m;
  return send_buffered(op, &op->message, sizeof m, MPI_BYTE, dest,
                       channel.layout().control_tag(kind), channel.lane(lane).comm);
}

int send_bound_data(Channel& channel, int lane, int dest, const BoundDataHeader& header,
                    const void* buf, int count, MPI_Datatype type, bool* sent) {
  *sent = false;
  if (header.bytes > kBoundDataLimit) return MPI_SUCCESS;  // the binding goes alone
  // A predefined type without gaps is its packed form (MPICH and Open MPI pack in the
  // machine's own representation). Only predefined: a derived type can be gapless and still
  // list its bytes in another order (an indexed type of two blocks given backwards).
  TypeFacts t = type_facts(type);
  bool raw = t.predefined && t.contiguous() && buf != MPI_BOTTOM;
  int data_size = static_cast<int>(header.bytes);
  if (!raw && (MPI_Pack_size(count, type, MPI_COMM_SELF, &data_size) != MPI_SUCCESS ||
               data_size > kBoundDataLimit))
    return MPI_SUCCESS;
  // One allocation: the header and the data in the op's own fixed buffer.
  auto* op = new ControlSendOp<std::array<char, sizeof header + kBoundDataLimit>>;
  std::memcpy(op->message.data(), &header, sizeof header);
  int position = sizeof header;
  if (raw) {
    std::memcpy(op->message.data() + position, buf, static_cast<size_t>(header.bytes));
    position += data_size;
  } else if (count > 0) {
    int rc = pack_typed(buf, count, type, op->message.data(), static_cast<int>(op->message.size()),
                        &position);
    if (rc != MPI_SUCCESS) {
      op->unref();
      return rc;
    }
  }
  *sent = true;
  return send_buffered(op, op->message.data(), position, MPI_BYTE, dest,
                       channel.layout().control_tag(TagLayout::bind_with_data),
                       channel.lane(lane).comm);
}

}  // namespace rangecomm::detail
