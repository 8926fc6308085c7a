#include "type_facts.hpp"

namespace rangecomm::detail {

TypeFactsSlot g_type_facts_slots[1 << kTypeFactsSlotBits];

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

}  // namespace rangecomm::detail
