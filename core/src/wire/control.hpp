// Sending the control messages that name a communicator to a peer: a binding of a slot (or a
// header for a message sent without one), and a binding that carries a small first collective
// message with it. Receiving them is the matching engine's (p2p/matching.cpp, dispatch).
#pragma once

#include <mpi.h>

#include "wire/channel.hpp"

namespace rangecomm::detail {

// Sends a control message (a binding or a header) to root rank dest on lane.
int send_control(Channel& channel, int lane, int dest, TagLayout::Control kind,
                 const ControlMessage& m);

// Packed data up to this size travels inside its sender's binding.
constexpr int kBoundDataLimit = 1024;

// Sends a binding together with the collective message (buf, count, type) to root rank dest on
// lane, as one TagLayout::bind_with_data message, when the data packs into kBoundDataLimit
// bytes (*sent true); otherwise sends nothing (*sent false).
int send_bound_data(Channel& channel, int lane, int dest, const BoundDataHeader& header,
                    const void* buf, int count, MPI_Datatype type, bool* sent);

}  // namespace rangecomm::detail
