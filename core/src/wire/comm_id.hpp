// A communicator's wide identity (docs/tag-layout.md, "Identities").
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rangecomm::detail {

// Derived by every member from its parent's identity and from what the creation was, so that
// members agree on it without a message. 128 bits: two communicators share one only by a hash
// collision (odds below 2^-100 for a million communicators).
struct CommId {
  std::uint64_t hi = 0, lo = 0;
  bool operator==(const CommId& o) const { return hi == o.hi && lo == o.lo; }
  bool operator!=(const CommId& o) const { return !(*this == o); }
};

struct CommIdHash {
  std::size_t operator()(const CommId& id) const { return static_cast<std::size_t>(id.lo); }
};

// The identity of the `k`-th creation described by `digest` from `parent` at this process.
CommId derive_id(const CommId& parent, std::uint64_t digest, std::uint64_t k);
// A digest of words (a creation's kind and arguments).
std::uint64_t digest_words(std::initializer_list<std::uint64_t> words);
// The digest of a range first..last:stride of a parent's ranks made `levels` below it.
std::uint64_t digest_range(int first, int last, int stride, int levels);
// A digest of a creation's kind, its members' root ranks in rank order, and one more word.
std::uint64_t digest_members(std::uint64_t kind, const std::vector<int>& roots,
                             std::uint64_t extra);

// How many creations of each digest a parent has made (at this process): the k of derive_id.
// The k-th identical creation from a parent is the same communicator at every member.
class ChildCounts {
 public:
  std::uint64_t next(std::uint64_t digest);

 private:
  static constexpr std::size_t kFew = 16;  // searched linearly; a hash map beyond
  std::vector<std::pair<std::uint64_t, std::uint64_t>> few_;
  std::unordered_map<std::uint64_t, std::uint64_t> many_;
};

// Kinds of creation, the first word of every digest.
enum CreationKind : std::uint64_t {
  kRangeCreation = 1,   // Split_Comm and its levels
  kGroupCreation = 2,   // a group made locally (Group_Comm_below, Icomm_create_group)
  kDupCreation = 3,     // Icomm_dup: the parent's collective sequence number
  kAgreedCreation = 4,  // Icomm_create_agreed: a number the members drew together
  kAgreementTalk = 5,   // the communicator an agreement runs on
};

}  // namespace rangecomm::detail
