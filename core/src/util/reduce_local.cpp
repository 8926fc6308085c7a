#include "util/reduce_local.hpp"

#include <type_traits>

namespace rangecomm::detail {

namespace {

enum class Kind { sum, prod, max, min };

// Integers are added and multiplied in their unsigned counterpart, so that overflow wraps
// instead of being undefined.
template <class T, bool = std::is_integral_v<T>>
struct Arith {
  using type = T;
};
template <class T>
struct Arith<T, true> {
  using type = std::make_unsigned_t<T>;
};

template <class T>
void apply(Kind kind, const void* in_buf, void* out_buf, int count) {
  const T* in = static_cast<const T*>(in_buf);
  T* out = static_cast<T*>(out_buf);
  using A = typename Arith<T>::type;
  switch (kind) {
    case Kind::sum:
      for (int i = 0; i < count; ++i) out[i] = static_cast<T>(A(out[i]) + A(in[i]));
      break;
    case Kind::prod:
      for (int i = 0; i < count; ++i) out[i] = static_cast<T>(A(out[i]) * A(in[i]));
      break;
    case Kind::max:
      for (int i = 0; i < count; ++i) out[i] = out[i] > in[i] ? out[i] : in[i];
      break;
    case Kind::min:
      for (int i = 0; i < count; ++i) out[i] = out[i] < in[i] ? out[i] : in[i];
      break;
  }
}

bool kind_of(MPI_Op op, Kind* kind) {
  if (op == MPI_SUM)
    *kind = Kind::sum;
  else if (op == MPI_MAX)
    *kind = Kind::max;
  else if (op == MPI_MIN)
    *kind = Kind::min;
  else if (op == MPI_PROD)
    *kind = Kind::prod;
  else
    return false;
  return true;
}

// Reduces and returns true for the pairs handled here. MAX and MIN only on signed integers:
// on floating types MPI libraries differ in which operand a NaN or a signed zero comes from, and
// on 64-bit unsigned types the libraries at hand compare as if signed (MPICH 4.0.2 on unsigned
// long and unsigned long long, Open MPI 4.1.4 on unsigned long), so these stay with MPI, whose
// answer the collectives must give whatever the vector's length.
bool apply_typed(Kind kind, const void* in, void* out, int count, MPI_Datatype type) {
  bool arithmetic = kind == Kind::sum || kind == Kind::prod;
  if (type == MPI_INT)
    apply<int>(kind, in, out, count);
  else if (type == MPI_LONG)
    apply<long>(kind, in, out, count);
  else if (type == MPI_LONG_LONG)
    apply<long long>(kind, in, out, count);
  else if (!arithmetic)
    return false;
  else if (type == MPI_DOUBLE)
    apply<double>(kind, in, out, count);
  else if (type == MPI_FLOAT)
    apply<float>(kind, in, out, count);
  else if (type == MPI_UNSIGNED)
    apply<unsigned>(kind, in, out, count);
  else if (type == MPI_UNSIGNED_LONG)
    apply<unsigned long>(kind, in, out, count);
  else if (type == MPI_UNSIGNED_LONG_LONG)
    apply<unsigned long long>(kind, in, out, count);
  else
    return false;
  return true;
}

}  // namespace

int reduce_local(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op) {
  if (count <= 0) return MPI_SUCCESS;
  Kind kind;
  if (count <= kReduceLocalInlineCount && kind_of(op, &kind) &&
      apply_typed(kind, in, out, count, type))
    return MPI_SUCCESS;
  return MPI_Reduce_local(in, out, count, type, op);
}

}  // namespace rangecomm::detail
