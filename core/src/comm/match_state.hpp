// What a range holds for the matching engine (p2p/matching.hpp), which alone reads and changes
// it: its receives waiting in the engine and the messages it sent to itself. Made on first use.
#pragma once

#include <mpi.h>

#include <list>
#include <vector>

namespace rangecomm::detail {

class SelfSendOp;
class RecvOp;

// A message a process sent to itself, packed at send time (standard mode buffers it).
struct SelfMessage {
  std::vector<char> packed;
  MPI_Count bytes = 0;  // size of the type signature
  int tag = 0;
  SelfSendOp* sync = nullptr;  // a synchronous send waiting for this message to match
};

struct MatchState {
  std::list<RecvOp*> waiting;         // receives in the engine, in post order (own a ref)
  std::list<SelfMessage> self_queue;  // self-messages not yet received, in send order
};

}  // namespace rangecomm::detail
