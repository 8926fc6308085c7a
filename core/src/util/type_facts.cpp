#include "util/type_facts.hpp"

namespace rangecomm::detail {

TypeFactsSlot g_type_facts_slots[1 << kTypeFactsSlotBits];

HeldType::~HeldType() {
  int finalized = 0;
  if (owned_ && MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) MPI_Type_free(&type_);
}

TypeFacts type_facts_miss(MPI_Datatype type) {
  TypeFacts f;
  MPI_Type_size(type, &f.size);
  MPI_Type_get_extent(type, &f.lb, &f.extent);
  MPI_Type_get_true_extent(type, &f.true_lb, &f.true_extent);
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  MPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner);
  f.predefined = combiner == MPI_COMBINER_NAMED;
  if (f.predefined) g_type_facts_slots[type_facts_slot(type)] = {type, true, f};
  return f;
}

int pack_typed(const void* in, int count, MPI_Datatype type, void* packed, int packed_size,
               int* position) {
  if (in != MPI_BOTTOM || count == 0)
    return MPI_Pack(in, count, type, packed, packed_size, position, MPI_COMM_SELF);
  MPI_Status st;
  int rc = MPI_Sendrecv(in, count, type, 0, 0, static_cast<char*>(packed) + *position,
                        packed_size - *position, MPI_PACKED, 0, 0, MPI_COMM_SELF, &st);
  int bytes = 0;
  if (rc == MPI_SUCCESS) rc = MPI_Get_count(&st, MPI_PACKED, &bytes);
  if (rc == MPI_SUCCESS) *position += bytes;
  return rc;
}

int unpack_typed(const void* packed, int packed_size, int* position, void* out, int count,
                 MPI_Datatype type) {
  if (out != MPI_BOTTOM || count == 0)
    return MPI_Unpack(packed, packed_size, position, out, count, type, MPI_COMM_SELF);
  MPI_Count size = 0;
  MPI_Type_size_x(type, &size);
  int bytes = static_cast<int>(size * count);
  int rc = MPI_Sendrecv(static_cast<const char*>(packed) + *position, bytes, MPI_PACKED, 0, 0, out,
                        count, type, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS) *position += bytes;
  return rc;
}

}  // namespace rangecomm::detail
