#include "coll/common.hpp"

#include "engine/request_access.hpp"
#include "p2p/matching.hpp"
#include "util/errors.hpp"

namespace rangecomm::detail {

int bad_comm(const RangeState* s, const char* fn) {
  if (s == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_COMM, "%s: null communicator", fn);
  return raise(s->errcomm(), MPI_ERR_COMM, "%s: the range's MPI communicator was freed", fn);
}

int bad_root(const RangeState& s, int root, const char* fn) {
  return raise(s.errcomm(), MPI_ERR_ROOT, "%s: root %d is not in the range (size %d)", fn, root,
               s.size);
}

int bad_buffer(const RangeState& s, int count, const char* fn) {
  if (count < 0) return raise(s.errcomm(), MPI_ERR_COUNT, "%s: count %d is negative", fn, count);
  return raise(s.errcomm(), MPI_ERR_TYPE, "%s: MPI_DATATYPE_NULL", fn);
}

int bad_in_place(const RangeState& s, bool is_root, const char* root_buf_name, const char* fn) {
  if (is_root)
    return raise(s.errcomm(), MPI_ERR_BUFFER, "%s: %s cannot be MPI_IN_PLACE", fn, root_buf_name);
  return raise(s.errcomm(), MPI_ERR_BUFFER, "%s: MPI_IN_PLACE is only for the root", fn);
}

int bad_op(const RangeState& s, const char* fn) {
  return raise(s.errcomm(), MPI_ERR_OP, "%s: MPI_OP_NULL", fn);
}

int check_reduction(const Comm& comm, int count, MPI_Datatype type, MPI_Op op, const char* fn,
                    RangeState** s) {
  int rc = check_comm(comm, fn, s);
  if (rc == MPI_SUCCESS) rc = check_buffer(**s, count, type, fn);
  if (rc == MPI_SUCCESS) rc = check_op(**s, op, fn);
  return rc;
}

int run_schedule(const Comm& comm, SchedulePtr schedule, Request* request) {
  const auto& state = CommAccess::state(comm);
  MPI_Request native = MPI_REQUEST_NULL;
  bool is_recv = false;
  int posted = MPI_SUCCESS;
  if (request != nullptr && start_single_native(*state, *schedule, &native, &is_recv, &posted)) {
    if (posted != MPI_SUCCESS) return raise_mpi(state->errcomm(), posted, "collective");
    RequestAccess::set_native(request, native, is_recv, MPI_ANY_SOURCE, MPI_ANY_TAG,
                              state->errcomm());
    return MPI_SUCCESS;
  }
  Operation* op = nullptr;
  int rc = start_schedule(state, std::move(schedule), &op);
  if (rc != MPI_SUCCESS) return raise_mpi(state->errcomm(), rc, "collective");
  Request local;
  RequestAccess::set_op(request ? request : &local, op, state->errcomm());
  return request ? MPI_SUCCESS : Wait(&local, MPI_STATUS_IGNORE);
}

void add_ring_reduce_scatter(Plan& s, const Blocks& blocks, MPI_Datatype type, MPI_Op op, int rank,
                             int size, const Blocks* source) {
  int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  void* tmp = source ? nullptr : s.scratch(blocks.largest(), type);
  // After step k this process holds k + 2 contributions to block (rank - k - 1). Every block
  // but this rank's own is received exactly once, so with a source the partial sum lands in
  // place and this process's part of it is folded in then.
  for (int k = 0; k < size - 1; ++k) {
    int send_block = (rank - k + size) % size, recv_block = (rank - k - 1 + size) % size;
    int n = blocks.length(recv_block);
    const Blocks& from = source && k == 0 ? *source : blocks;
    s.send(from.at(send_block), blocks.length(send_block), type, right);
    s.recv(source ? blocks.at(recv_block) : tmp, n, type, left);
    s.end_round();
    s.reduce(source ? source->at(recv_block) : tmp, blocks.at(recv_block), n, type, op);
  }
  s.end_round();
}

int Fold::fold_in(Plan& s, void* buf, void* tmp, int count, MPI_Datatype type, MPI_Op op, int rank,
                  bool result_back) const {
  int nr = newrank(rank);
  if (rank >= 2 * rem) return nr;
  if (nr < 0) {
    s.send(buf, count, type, rank + 1);
    s.end_round();
    if (result_back) {
      s.recv(buf, count, type, rank + 1);
      s.end_round();
    }
    return nr;
  }
  s.recv(tmp, count, type, rank - 1);
  s.end_round();
  s.reduce(tmp, buf, count, type, op);
  return nr;
}

void Fold::fold_out(Plan& s, const void* buf, int count, MPI_Datatype type, int rank) const {
  if (rank < 2 * rem && rank % 2 == 1) s.send(buf, count, type, rank - 1);
  s.end_round();
}

void add_halving_reduce_scatter(Plan& s, const Blocks& mine, const Blocks& theirs,
                                MPI_Datatype type, MPI_Op op, int newrank, const Fold& fold,
                                const Blocks* source, HalvingSpans* spans) {
  int lo = 0, hi = fold.pof2, steps = 0;
  while ((1 << steps) < fold.pof2) ++steps;
  for (int step = 0; step < steps; ++step) {
    int mask = spans != nullptr ? 1 << step : fold.pof2 >> (step + 1);
    if (spans != nullptr) spans->before[step] = {lo, hi};
    int partner = fold.real(newrank ^ mask), mid = (lo + hi) / 2;
    bool upper = (newrank & mask) != 0;
    int keep_lo = upper ? mid : lo, keep_hi = upper ? hi : mid;
    int give_lo = upper ? lo : mid, give_hi = upper ? mid : hi;
    int keep = span_length(mine, keep_lo, keep_hi);
    if (source != nullptr && hi - lo == fold.pof2) {
      // First step from the caller's buffer: the partner's half lands in place and ours is
      // folded into it (op commutative), so mine never holds a copy of the whole vector.
      s.send(source->at(give_lo), span_length(mine, give_lo, give_hi), type, partner);
      s.recv(mine.at(keep_lo), keep, type, partner);
      s.end_round();
      s.reduce(source->at(keep_lo), mine.at(keep_lo), keep, type, op);
    } else {
      s.send(mine.at(give_lo), span_length(mine, give_lo, give_hi), type, partner);
      s.recv(theirs.at(keep_lo), keep, type, partner);
      s.end_round();
      s.reduce(theirs.at(keep_lo), mine.at(keep_lo), keep, type, op);
    }
    lo = keep_lo;
    hi = keep_hi;
  }
  if (spans != nullptr) {
    spans->steps = steps;
    spans->kept = {lo, hi};
  }
}

void add_bcast(Plan& s, void* buf, int count, MPI_Datatype type, int root, int rank, int size,
               int piece_count) {
  // Each tree edge carries the message as one message, or as pieces of piece_count elements
  // (posted in order, so they match in order).
  if (piece_count <= 0 || piece_count >= count) piece_count = count;
  MPI_Aint extent = piece_count < count ? type_facts(type).extent : 0;  // past the first piece
  auto each_piece = [&](auto&& post) {
    for (int at = 0; at < count; at += piece_count)
      post(static_cast<char*>(buf) + static_cast<MPI_Aint>(at) * extent,
           std::min(piece_count, count - at));
  };
  int v = relative(rank, root, size);
  int mask = 1;
  for (; mask < size; mask <<= 1) {
    if (v & mask) {
      int parent = absolute(v - mask, root, size);
      each_piece([&](void* p, int n) { s.recv(p, n, type, parent); });
      s.end_round();
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (v + mask >= size) continue;
    int child = absolute(v + mask, root, size);
    each_piece([&](void* p, int n) { s.send(p, n, type, child); });
  }
}

bool relay_bcast(const Comm& comm, void* buf, int count, MPI_Datatype type, int root,
                 Request* request, int* rc) {
  const auto& state = CommAccess::state(comm);
  const TreeLinks links = binomial_links(state->rank, root, state->size);
  Request local;
  if (!start_relay(state, buf, count, type, links.parent, links.child, links.children,
                   request ? request : &local, rc))
    return false;
  if (*rc != MPI_SUCCESS)
    *rc = raise_mpi(state->errcomm(), *rc, "collective");
  else if (request == nullptr)
    *rc = Wait(&local, MPI_STATUS_IGNORE);
  return true;
}

ExchangeParts& exchange_parts(int size) {
  static ExchangeParts& parts = *new ExchangeParts;  // never destroyed: usable at exit
  parts.sends.resize(size);
  parts.recvs.resize(size);
  return parts;
}

void add_exchange(Plan& s, std::vector<Part>& sends, const std::vector<Part>& recvs, bool in_place,
                  bool pairwise, int rank, int size) {
  if (in_place) {
    for (int j = 0; j < size; ++j) {
      if (j == rank || recvs[j].empty()) continue;
      const Part& r = recvs[j];
      sends[j] = {s.scratch(r.count, r.type), r.count, r.type};
      s.copy(r.buf, r.count, r.type, sends[j].buf, r.count, r.type);
    }
  } else {
    const Part &in = sends[rank], &out = recvs[rank];
    s.copy(in.buf, in.count, in.type, out.buf, out.count, out.type);
  }
  for (int k = 1; k < size; ++k) {
    int to = (rank + k) % size, from = (rank - k + size) % size;
    if (!sends[to].empty()) s.send(sends[to].buf, sends[to].count, sends[to].type, to);
    if (!recvs[from].empty()) s.recv(recvs[from].buf, recvs[from].count, recvs[from].type, from);
    if (pairwise) s.end_round();
  }
  s.end_round();
}

void add_reduce(Plan& s, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                MPI_Op op, int root, int rank, int size) {
  // A non-commutative op needs contiguous rank blocks combined lower-first: build the tree on
  // absolute ranks towards rank 0 and forward the result to the root.
  bool rotate = commutative(op);
  int tree_root = rotate ? root : 0;
  int v = relative(rank, tree_root, size);
  if (rotate && v == 0) {
    // The root of a commutative tree folds every child's part straight into recvbuf (which
    // holds its own values when in place; otherwise the first child's part lands there and its
    // own values are folded in): one scratch buffer, no final copy.
    bool filled = sendbuf == recvbuf;
    void* spare = nullptr;
    for (int mask = 1; mask < size; mask <<= 1) {
      int child = absolute(mask, tree_root, size);
      if (!filled) {
        s.recv(recvbuf, count, type, child);
        s.end_round();
        s.reduce(sendbuf, recvbuf, count, type, op);
        filled = true;
        continue;
      }
      if (!spare) spare = s.scratch(count, type);
      s.recv(spare, count, type, child);
      s.end_round();
      s.reduce(spare, recvbuf, count, type, op);
    }
    if (!filled) s.copy(sendbuf, count, type, recvbuf, count, type);
    s.end_round();
    return;
  }
  const void* acc = sendbuf;
  void* spare[2] = {nullptr, nullptr};
  int next = 0;
  for (int mask = 1; mask < size; mask <<= 1) {
    if (v & mask) {
      s.send(acc, count, type, absolute(v - mask, tree_root, size));
      s.end_round();
      break;
    }
    if (v + mask >= size) continue;
    if (!spare[next]) spare[next] = s.scratch(count, type);
    s.recv(spare[next], count, type, absolute(v + mask, tree_root, size));
    s.end_round();
    s.reduce(acc, spare[next], count, type, op);  // spare = acc op spare: lower ranks first
    acc = spare[next];
    next ^= 1;
  }
  if (v != 0) {
    if (rank == root) {  // non-commutative case: the result comes from rank 0
      s.recv(recvbuf, count, type, 0);
      s.end_round();
    }
    return;
  }
  if (rank == root) {
    s.copy(acc, count, type, recvbuf, count, type);
  } else {
    s.send(acc, count, type, root);
  }
  s.end_round();
}

}  // namespace rangecomm::detail
