// Datatypes, buffers and outcomes of the conformance test.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "conformance.hpp"

namespace conf {

uint64_t mix(uint64_t a, uint64_t b) {
  Rng r(a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull));
  r.next();
  return r.next();
}

std::string fmt(const char* f, ...) {
  va_list args, again;
  va_start(args, f);
  va_copy(again, args);
  int n = vsnprintf(nullptr, 0, f, args);
  va_end(args);
  std::string s(n > 0 ? (size_t)n : 0, '\0');
  if (n > 0) vsnprintf(&s[0], (size_t)n + 1, f, again);
  va_end(again);
  return s;
}

void die(const char* f, ...) {
  char buf[2048];
  va_list args;
  va_start(args, f);
  vsnprintf(buf, sizeof buf, f, args);
  va_end(args);
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "conformance: rank %d: %s\n", rank, buf);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
  abort();
}

int err_class(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}

// ---------------------------------------------------------------- basic elements and units

MPI_Datatype prim_type(Prim p) {
  switch (p) {
    case P_INT8:
      return MPI_INT8_T;
    case P_UINT8:
      return MPI_UINT8_T;
    case P_INT16:
      return MPI_SHORT;
    case P_UINT16:
      return MPI_UNSIGNED_SHORT;
    case P_INT32:
      return MPI_INT;
    case P_UINT32:
      return MPI_UNSIGNED;
    case P_INT64:
      return MPI_LONG_LONG;
    case P_UINT64:
      return MPI_UNSIGNED_LONG;
    case P_FLOAT:
      return MPI_FLOAT;
    case P_DOUBLE:
      return MPI_DOUBLE;
    case P_BYTE:
      return MPI_BYTE;
    case P_CHAR:
      return MPI_CHAR;
    case P_BOOL:
      return MPI_C_BOOL;
  }
  return MPI_DATATYPE_NULL;
}

int prim_size(Prim p) {
  switch (p) {
    case P_INT8:
    case P_UINT8:
    case P_BYTE:
    case P_CHAR:
    case P_BOOL:
      return 1;
    case P_INT16:
    case P_UINT16:
      return 2;
    case P_INT32:
    case P_UINT32:
    case P_FLOAT:
      return 4;
    default:
      return 8;
  }
}

namespace {

struct UnitDef {
  const char* name;
  MPI_Datatype type;
  std::vector<Piece> pieces;
};
std::vector<UnitDef> g_units;
MPI_Datatype g_mix = MPI_DATATYPE_NULL;

}  // namespace

void init_units() {
  // int, short, double at 0, 4, 8: a struct with a hole at 6..7 (extent 16)
  int blens[3] = {1, 1, 1};
  MPI_Aint disps[3] = {0, 4, 8};
  MPI_Datatype types[3] = {MPI_INT, MPI_SHORT, MPI_DOUBLE};
  MPI_Type_create_struct(3, blens, disps, types, &g_mix);
  MPI_Type_commit(&g_mix);
  g_units = {
      {"int", MPI_INT, {{0, P_INT32}}},
      {"double", MPI_DOUBLE, {{0, P_DOUBLE}}},
      {"short", MPI_SHORT, {{0, P_INT16}}},
      {"byte", MPI_BYTE, {{0, P_BYTE}}},
      {"char", MPI_CHAR, {{0, P_CHAR}}},
      {"long long", MPI_LONG_LONG, {{0, P_INT64}}},
      {"struct{int,short,double}", g_mix, {{0, P_INT32}, {4, P_INT16}, {8, P_DOUBLE}}},
      {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, {{0, P_DOUBLE}, {8, P_INT32}}},
      {"MPI_2INT", MPI_2INT, {{0, P_INT32}, {4, P_INT32}}},
      {"MPI_SHORT_INT", MPI_SHORT_INT, {{0, P_INT16}, {4, P_INT32}}},
  };
}

void free_units() { MPI_Type_free(&g_mix); }

const char* unit_name(int u) {
  static const char* names[U_COUNT] = {"int",       "double", "short",      "byte", "char",
                                       "long long", "mix",    "double_int", "2int", "short_int"};
  return names[u];
}

int unit_data_bytes(int u) {
  static const int bytes[U_COUNT] = {4, 8, 2, 1, 1, 8, 14, 12, 8, 6};
  return bytes[u];
}

// ---------------------------------------------------------------- layouts

std::string Layout::describe() const {
  auto kid = [&](size_t i) { return kids.at(i)->describe(); };
  auto list = [](const std::vector<int>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s;
  };
  switch (kind) {
    case BASE:
      return unit_name(unit);
    case BASE_ALT:
      return std::string("reordered(") + unit_name(unit) + ")";
    case CONTIG:
      return fmt("contig(%d,%s)", n, kid(0).c_str());
    case VECTOR:
      return fmt("vector(%dx%d,stride %s%d,%s)", n, blen, negative ? "-" : "", blen + gap,
                 kid(0).c_str());
    case HVECTOR:
      return fmt("hvector(%dx%d,gap %dx16%s,%s)", n, blen, gap, negative ? ",negative" : "",
                 kid(0).c_str());
    case INDEXED:
      return fmt("indexed(blens %s,gaps %s,order %s,%s)", list(blens).c_str(), list(gaps).c_str(),
                 list(order).c_str(), kid(0).c_str());
    case HINDEXED:
      return fmt("hindexed(blens %s,gaps %sx16,order %s,%s)", list(blens).c_str(),
                 list(gaps).c_str(), list(order).c_str(), kid(0).c_str());
    case INDEXED_BLOCK:
      return fmt("indexed_block(%dx%d,gaps %s,order %s,%s)", n, blen, list(gaps).c_str(),
                 list(order).c_str(), kid(0).c_str());
    case STRUCT: {
      std::string s = "struct(";
      for (size_t i = 0; i < kids.size(); ++i)
        s += fmt("%s%dx%s", i ? "," : "", blens[i], kid(i).c_str());
      return s + fmt(";gaps %sx16,order %s)", list(gaps).c_str(), list(order).c_str());
    }
    case RESIZED:
      return fmt("resized(lb-%d,ext+%d,%s)", 8 * lb_shift, 8 * (lb_shift + ext_add),
                 kid(0).c_str());
    case DUP:
      return fmt("dup(%s)", kid(0).c_str());
    case SUBARRAY:
      return fmt("subarray(%s,%dx%d of %dx%d at %d,%d,%s)", negative ? "fortran" : "c", dims[2],
                 dims[3], dims[0], dims[1], dims[4], dims[5], kid(0).c_str());
  }
  return "?";
}

long gen_units_per_element(Rng& rng) {
  static const std::vector<long> ks = {1, 1, 1, 1, 2, 2, 3, 4, 4, 6, 8, 12};
  return rng.pick(ks);
}

namespace {

std::vector<long> divisors(long k) {
  std::vector<long> d;
  for (long i = 1; i <= k; ++i)
    if (k % i == 0) d.push_back(i);
  return d;
}

// Splits total into 1..maxparts positive parts.
std::vector<int> partition(Rng& rng, long total, int maxparts) {
  int parts = (int)rng.range(1, std::min<long>(total, maxparts));
  std::vector<int> v(parts, 1);
  for (long rest = total - parts; rest > 0; --rest) v[rng.next() % parts]++;
  return v;
}

std::vector<int> permutation(Rng& rng, int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  if (rng.chance(60)) rng.shuffle(v);
  return v;
}

}  // namespace

LayoutP gen_layout(Rng& rng, int unit, long k, int depth) {
  auto L = std::make_shared<Layout>();
  L->unit = unit;
  L->units = k;
  if (depth <= 0 || rng.chance(25)) {
    if (k == 1) {
      L->kind = rng.chance(70) ? Layout::BASE : Layout::BASE_ALT;
    } else {
      L->kind = Layout::CONTIG;
      L->n = (int)k;
      L->kids = {gen_layout(rng, unit, 1, 0)};
    }
    return L;
  }
  static const std::vector<Layout::Kind> kinds = {
      Layout::CONTIG,  Layout::VECTOR,   Layout::VECTOR,        Layout::HVECTOR, Layout::INDEXED,
      Layout::INDEXED, Layout::HINDEXED, Layout::INDEXED_BLOCK, Layout::STRUCT,  Layout::STRUCT,
      Layout::RESIZED, Layout::RESIZED,  Layout::RESIZED,       Layout::DUP,     Layout::SUBARRAY};
  L->kind = rng.pick(kinds);
  std::vector<long> ds = divisors(k);
  long kc = ds[rng.next() % ((ds.size() + 1) / 2)];  // the child takes a smaller divisor
  long m = k / kc;
  switch (L->kind) {
    case Layout::CONTIG:
      L->n = (int)m;
      break;
    case Layout::VECTOR:
    case Layout::HVECTOR: {
      std::vector<long> dm = divisors(m);
      L->n = (int)rng.pick(dm);
      L->blen = (int)(m / L->n);
      L->gap = (int)rng.range(0, 3);
      L->negative = rng.chance(15);
      break;
    }
    case Layout::INDEXED:
    case Layout::HINDEXED: {
      L->blens = partition(rng, m, 4);
      if (rng.chance(20)) L->blens.insert(L->blens.begin() + rng.range(0, L->blens.size()), 0);
      for (size_t i = 0; i < L->blens.size(); ++i) L->gaps.push_back((int)rng.range(0, 2));
      L->order = permutation(rng, (int)L->blens.size());
      break;
    }
    case Layout::INDEXED_BLOCK: {
      std::vector<long> dm = divisors(m);
      L->n = (int)rng.pick(dm);
      L->blen = (int)(m / L->n);
      for (int i = 0; i < L->n; ++i) L->gaps.push_back((int)rng.range(0, 2));
      L->order = permutation(rng, L->n);
      break;
    }
    case Layout::STRUCT: {
      // parts of k, each a block of blen elements of its own child layout
      std::vector<int> parts = partition(rng, k, 3);
      for (int part : parts) {
        std::vector<long> dp = divisors(part);
        long blen = rng.pick(dp);
        L->blens.push_back((int)blen);
        L->kids.push_back(gen_layout(rng, unit, part / blen, depth - 1));
        L->gaps.push_back((int)rng.range(0, 2));
      }
      L->order = permutation(rng, (int)parts.size());
      return L;
    }
    case Layout::RESIZED:
      kc = k;
      L->lb_shift = (int)rng.range(rng.chance(70) ? 1 : 0, 3);
      L->ext_add = (int)rng.range(0, 3);
      break;
    case Layout::DUP:
      kc = k;
      break;
    case Layout::SUBARRAY: {
      std::vector<long> dm = divisors(m);
      int rows = (int)rng.pick(dm), cols = (int)(m / rows);
      int R = rows + (int)rng.range(0, 2), C = cols + (int)rng.range(0, 2);
      L->dims = {R, C, rows, cols, (int)rng.range(0, R - rows), (int)rng.range(0, C - cols)};
      L->negative = rng.chance(40);
      break;
    }
    default:
      break;
  }
  L->kids = {gen_layout(rng, unit, kc, depth - 1)};
  return L;
}

// ---------------------------------------------------------------- building datatypes

void TypeInfo::free() {
  if (owned && type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  type = MPI_DATATYPE_NULL;
  owned = false;
}

static void fill_extents(TypeInfo& t) {
  MPI_Type_get_extent(t.type, &t.lb, &t.extent);
  MPI_Type_get_true_extent(t.type, &t.true_lb, &t.true_extent);
}

TypeP predefined(MPI_Datatype type, std::vector<Piece> pieces, const char* name) {
  auto t = std::make_shared<TypeInfo>();
  t->type = type;
  t->pieces = std::move(pieces);
  t->name = name;
  fill_extents(*t);
  return t;
}

namespace {

MPI_Aint round16(MPI_Aint x) { return (x + 15) / 16 * 16; }

// Uncommitted; owned unless predefined.
TypeP build_rec(const Layout& L) {
  auto t = std::make_shared<TypeInfo>();
  t->units = L.units;
  std::vector<TypeP> kids;
  for (auto& k : L.kids) kids.push_back(build_rec(*k));
  TypeP c = kids.empty() ? nullptr : kids[0];
  auto add = [&](const TypeInfo& child, MPI_Aint at) {
    for (const Piece& p : child.pieces) t->pieces.push_back({p.off + at, p.prim});
  };
  switch (L.kind) {
    case Layout::BASE: {
      const UnitDef& u = g_units[L.unit];
      t->type = u.type;
      t->pieces = u.pieces;
      break;
    }
    case Layout::BASE_ALT: {
      // the unit's basic elements in their order, placed in shuffled 8-byte slots
      const UnitDef& u = g_units[L.unit];
      int n = (int)u.pieces.size();
      std::vector<int> slot(n);
      for (int i = 0; i < n; ++i) slot[i] = n - 1 - i;
      std::vector<int> blens(n, 1);
      std::vector<MPI_Aint> disps(n);
      std::vector<MPI_Datatype> types(n);
      for (int i = 0; i < n; ++i) {
        disps[i] = 8 + 8 * slot[i];
        types[i] = prim_type(u.pieces[i].prim);
        t->pieces.push_back({disps[i], u.pieces[i].prim});
      }
      MPI_Type_create_struct(n, blens.data(), disps.data(), types.data(), &t->type);
      t->owned = true;
      break;
    }
    case Layout::CONTIG:
      MPI_Type_contiguous(L.n, c->type, &t->type);
      for (int i = 0; i < L.n; ++i) add(*c, i * c->extent);
      break;
    case Layout::VECTOR: {
      int stride = (L.blen + L.gap) * (L.negative ? -1 : 1);
      MPI_Type_vector(L.n, L.blen, stride, c->type, &t->type);
      for (int j = 0; j < L.n; ++j)
        for (int i = 0; i < L.blen; ++i) add(*c, ((MPI_Aint)j * stride + i) * c->extent);
      break;
    }
    case Layout::HVECTOR: {
      MPI_Aint stride = (round16(L.blen * c->extent) + 16 * L.gap) * (L.negative ? -1 : 1);
      MPI_Type_create_hvector(L.n, L.blen, stride, c->type, &t->type);
      for (int j = 0; j < L.n; ++j)
        for (int i = 0; i < L.blen; ++i) add(*c, j * stride + i * c->extent);
      break;
    }
    case Layout::INDEXED:
    case Layout::INDEXED_BLOCK: {
      int nb = L.kind == Layout::INDEXED ? (int)L.blens.size() : L.n;
      std::vector<int> blens(nb), disps(nb);
      for (int b = 0; b < nb; ++b) blens[b] = L.kind == Layout::INDEXED ? L.blens[b] : L.blen;
      int cursor = 0;
      for (int b : L.order) {
        cursor += L.gaps[b];
        disps[b] = cursor;
        cursor += blens[b];
      }
      if (L.kind == Layout::INDEXED)
        MPI_Type_indexed(nb, blens.data(), disps.data(), c->type, &t->type);
      else
        MPI_Type_create_indexed_block(nb, L.blen, disps.data(), c->type, &t->type);
      for (int b = 0; b < nb; ++b)
        for (int i = 0; i < blens[b]; ++i) add(*c, (MPI_Aint)(disps[b] + i) * c->extent);
      break;
    }
    case Layout::HINDEXED:
    case Layout::STRUCT: {
      int nb = (int)L.blens.size();
      std::vector<MPI_Aint> disps(nb);
      std::vector<MPI_Datatype> types(nb);
      MPI_Aint cursor = 0;
      for (int b : L.order) {
        const TypeInfo& k = L.kind == Layout::STRUCT ? *kids[b] : *c;
        cursor += 16 * L.gaps[b];
        disps[b] = cursor - k.lb;  // the block starts at cursor
        cursor = round16(cursor + L.blens[b] * k.extent);
      }
      for (int b = 0; b < nb; ++b) types[b] = L.kind == Layout::STRUCT ? kids[b]->type : c->type;
      std::vector<int> blens = L.blens;
      if (L.kind == Layout::STRUCT)
        MPI_Type_create_struct(nb, blens.data(), disps.data(), types.data(), &t->type);
      else
        MPI_Type_create_hindexed(nb, blens.data(), disps.data(), c->type, &t->type);
      for (int b = 0; b < nb; ++b) {
        const TypeInfo& k = L.kind == Layout::STRUCT ? *kids[b] : *c;
        for (int i = 0; i < blens[b]; ++i) add(k, disps[b] + i * k.extent);
      }
      break;
    }
    case Layout::RESIZED:
      MPI_Type_create_resized(c->type, c->lb - 8 * L.lb_shift,
                              c->extent + 8 * (L.lb_shift + L.ext_add), &t->type);
      add(*c, 0);
      break;
    case Layout::DUP:
      MPI_Type_dup(c->type, &t->type);
      add(*c, 0);
      break;
    case Layout::SUBARRAY: {
      int sizes[2] = {L.dims[0], L.dims[1]}, sub[2] = {L.dims[2], L.dims[3]},
          starts[2] = {L.dims[4], L.dims[5]};
      bool fortran = L.negative;
      MPI_Type_create_subarray(2, sizes, sub, starts, fortran ? MPI_ORDER_FORTRAN : MPI_ORDER_C,
                               c->type, &t->type);
      if (!fortran) {
        for (int i = 0; i < sub[0]; ++i)
          for (int j = 0; j < sub[1]; ++j)
            add(*c, ((MPI_Aint)(starts[0] + i) * sizes[1] + starts[1] + j) * c->extent);
      } else {
        for (int j = 0; j < sub[1]; ++j)
          for (int i = 0; i < sub[0]; ++i)
            add(*c, ((MPI_Aint)(starts[1] + j) * sizes[0] + starts[0] + i) * c->extent);
      }
      break;
    }
  }
  if (L.kind != Layout::BASE) t->owned = true;
  for (auto& k : kids) k->free();
  fill_extents(*t);
  // A child with explicit bounds (resized, subarray) sets the bounds of its parent alone
  // (MPI's lb/ub markers), which may then not cover the parent's data: consecutive elements
  // would overlap, an erroneous receive buffer. Widen such bounds to the data.
  MPI_Aint ub = t->lb + t->extent, true_ub = t->true_lb + t->true_extent;
  if (t->true_extent > 0 && (t->true_lb < t->lb || true_ub > ub)) {
    MPI_Aint lb = std::min(t->lb, t->true_lb), hi = std::max(ub, true_ub);
    MPI_Datatype wide;
    MPI_Type_create_resized(t->type, lb, (hi - lb + 7) / 8 * 8, &wide);
    t->free();
    t->type = wide;
    t->owned = true;
    fill_extents(*t);
  }
  return t;
}

}  // namespace

TypeP build(const LayoutP& layout) {
  TypeP t = build_rec(*layout);
  if (t->owned) MPI_Type_commit(&t->type);
  t->name = layout->describe();
  return t;
}

TypeP absolute(const TypeP& t, const void* origin) {
  MPI_Aint at = 0;
  MPI_Get_address(origin, &at);
  int one = 1;
  MPI_Datatype st = MPI_DATATYPE_NULL, type = t->type;
  auto a = std::make_shared<TypeInfo>();
  MPI_Type_create_struct(1, &one, &at, &type, &st);
  MPI_Type_create_resized(st, at + t->lb, t->extent, &a->type);
  MPI_Type_free(&st);
  MPI_Type_commit(&a->type);
  a->owned = true;
  a->pieces = t->pieces;  // relative to origin, as the buffer's placements are
  a->units = t->units;
  a->name = "absolute " + t->name;
  fill_extents(*a);
  return a;
}

// ---------------------------------------------------------------- buffers

Buf make_buf(std::vector<Placement> places, uint64_t fill_seed) {
  Buf b;
  // The region always holds the origin itself. A buffer argument pointing outside its own
  // allocation could equal another buffer's argument: aliased arguments, which MPI forbids even
  // when the displacements keep the data apart (MPICH returns MPI_ERR_BUFFER; Open MPI's
  // nonblocking collectives take a send buffer equal to the receive buffer for MPI_IN_PLACE, and
  // an MPI_Ialltoallw whose sender did so hung).
  MPI_Aint lo = 0, hi = 0;
  for (const Placement& p : places) {
    if (p.count <= 0 || p.type->pieces.empty()) continue;
    MPI_Aint pmin = p.type->pieces[0].off, pmax = pmin;
    for (const Piece& q : p.type->pieces) {
      pmin = std::min(pmin, q.off);
      pmax = std::max(pmax, q.off + (MPI_Aint)prim_size(q.prim));
    }
    MPI_Aint last = (p.count - 1) * p.type->extent;
    lo = std::min(lo, p.at + std::min<MPI_Aint>(0, last) + pmin);
    hi = std::max(hi, p.at + std::max<MPI_Aint>(0, last) + pmax);
  }
  const MPI_Aint margin = 24;
  b.origin_off = round16(margin - lo);
  b.mem.resize((size_t)(b.origin_off + hi + margin));
  b.places = std::move(places);
  Rng r(fill_seed);
  size_t i = 0;
  for (; i + 8 <= b.mem.size(); i += 8) {
    uint64_t v = r.next();
    memcpy(&b.mem[i], &v, 8);
  }
  for (; i < b.mem.size(); ++i) b.mem[i] = (unsigned char)r.next();
  return b;
}

namespace {

void put_value(unsigned char* at, Prim prim, ValueClass cls, Rng& r) {
  long v;
  bool is_unsigned =
      prim == P_UINT8 || prim == P_UINT16 || prim == P_UINT32 || prim == P_UINT64 || prim == P_BYTE;
  switch (cls) {
    case V_SUM:
      v = prim_size(prim) == 1 ? r.range(-15, 15) : r.range(-50, 50);
      break;
    case V_PROD:
      v = prim_size(prim) == 1 ? (r.chance(50) ? 1 : -1) : r.range(-1, 2);
      break;
    case V_MINMAX:
    case V_LOC:
      v = r.range(-3, 3);
      break;
    case V_LOGICAL:
      v = r.range(0, 2);
      break;
    default:
      v = (long)r.next();
      break;
  }
  if (is_unsigned && v < 0 && cls != V_ANY) v = -v;
  if (prim == P_BOOL) v = v != 0;
  switch (prim) {
    case P_INT8:
    case P_UINT8:
    case P_BYTE:
    case P_CHAR:
    case P_BOOL:
      *at = (unsigned char)v;
      break;
    case P_INT16:
    case P_UINT16: {
      int16_t x = (int16_t)v;
      memcpy(at, &x, 2);
      break;
    }
    case P_INT32:
    case P_UINT32: {
      int32_t x = (int32_t)v;
      memcpy(at, &x, 4);
      break;
    }
    case P_INT64:
    case P_UINT64: {
      int64_t x = v;
      memcpy(at, &x, 8);
      break;
    }
    case P_FLOAT: {
      float x = (float)(cls == V_ANY ? v % 1000 : v);
      memcpy(at, &x, 4);
      break;
    }
    case P_DOUBLE: {
      double x = (double)(cls == V_ANY ? v % 1000 : v);
      memcpy(at, &x, 8);
      break;
    }
  }
}

}  // namespace

void fill_values(Buf& b, ValueClass cls, uint64_t seed) {
  Rng r(seed);
  for (const Placement& p : b.places)
    for (long e = 0; e < p.count; ++e)
      for (size_t k = 0; k < p.type->pieces.size(); ++k) {
        const Piece& q = p.type->pieces[k];
        // MINLOC/MAXLOC pairs: the second basic element is the index
        ValueClass c = (cls == V_LOC && k % 2 == 1) ? V_MINMAX : cls;
        unsigned char* at = b.origin() + p.at + e * p.type->extent + q.off;
        put_value(at, q.prim, c, r);
        if (cls == V_LOC && k % 2 == 1) {  // indices 0..5, non-negative
          int32_t x = (int32_t)r.range(0, 5);
          if (q.prim == P_INT32) memcpy(at, &x, 4);
        }
      }
}

std::string where_in(const Buf& b, size_t off) {
  MPI_Aint rel = (MPI_Aint)off - b.origin_off;
  for (const Placement& p : b.places)
    for (long e = 0; e < p.count; ++e)
      for (size_t k = 0; k < p.type->pieces.size(); ++k) {
        const Piece& q = p.type->pieces[k];
        MPI_Aint at = p.at + e * p.type->extent + q.off;
        if (rel >= at && rel < at + prim_size(q.prim))
          return fmt("origin%+ld: %s, element %ld, basic element %zu (+%ld)", (long)rel,
                     p.label.c_str(), e, k, (long)(rel - at));
      }
  return fmt("origin%+ld: outside the type map (must stay untouched)", (long)rel);
}

std::vector<unsigned char> typemap_mask(const Buf& b) {
  std::vector<unsigned char> m(b.mem.size(), 0);
  for (const Placement& p : b.places)
    for (long e = 0; e < p.count; ++e)
      for (const Piece& q : p.type->pieces) {
        MPI_Aint at = b.origin_off + p.at + e * p.type->extent + q.off;
        for (int i = 0; i < prim_size(q.prim); ++i) m[at + i] = 1;
      }
  return m;
}

// ---------------------------------------------------------------- outcomes

void Outcome::ints(const std::string& name, std::vector<int> v) {
  Item it;
  it.name = name;
  it.bytes.resize(v.size() * sizeof(int));
  memcpy(it.bytes.data(), v.data(), it.bytes.size());
  items.push_back(std::move(it));
}

void Outcome::buffer(const std::string& name, Buf&& b, std::vector<unsigned char> care) {
  Item it;
  it.name = name;
  it.bytes = b.mem;
  it.care = std::move(care);
  it.buf = std::make_shared<Buf>(std::move(b));
  it.buf->mem.clear();
  it.buf->mem.shrink_to_fit();
  items.push_back(std::move(it));
}

std::string compare(const Outcome& n, const Outcome& l) {
  if (n.items.size() != l.items.size())
    return fmt("native recorded %zu results, the library %zu", n.items.size(), l.items.size());
  for (size_t i = 0; i < n.items.size(); ++i) {
    const Item &a = n.items[i], &b = l.items[i];
    if (a.name != b.name)
      return fmt("result %zu is '%s' natively but '%s' on the library", i, a.name.c_str(),
                 b.name.c_str());
    if (a.bytes.size() != b.bytes.size())
      return fmt("'%s': %zu bytes natively, %zu on the library", a.name.c_str(), a.bytes.size(),
                 b.bytes.size());
    if (!a.buf) {  // integers
      std::vector<int> x(a.bytes.size() / sizeof(int)), y(x.size());
      memcpy(x.data(), a.bytes.data(), a.bytes.size());
      memcpy(y.data(), b.bytes.data(), b.bytes.size());
      for (size_t k = 0; k < x.size(); ++k)
        if (x[k] != y[k])
          return fmt("'%s'%s: native %d, library %d", a.name.c_str(),
                     x.size() > 1 ? fmt("[%zu]", k).c_str() : "", x[k], y[k]);
      continue;
    }
    size_t diffs = 0, first = 0;
    for (size_t k = 0; k < a.bytes.size(); ++k) {
      if (!a.care.empty() && !a.care[k]) continue;
      if (a.bytes[k] != b.bytes[k]) {
        if (diffs++ == 0) first = k;
      }
    }
    if (diffs && getenv("CONFORMANCE_ALL_DIFFS")) {  // every differing byte, for diagnosis
      std::string all;
      for (size_t k = 0; k < a.bytes.size(); ++k)
        if ((a.care.empty() || a.care[k]) && a.bytes[k] != b.bytes[k])
          all += fmt("\n      byte %zu at %s: native 0x%02x, library 0x%02x", k,
                     where_in(*a.buf, k).c_str(), a.bytes[k], b.bytes[k]);
      return fmt("buffer '%s' (%zu bytes, %zu differ):%s", a.name.c_str(), a.bytes.size(), diffs,
                 all.c_str());
    }
    if (diffs)
      return fmt(
          "buffer '%s' (%zu bytes, %zu differ): first differing byte %zu at %s: native "
          "0x%02x, library 0x%02x",
          a.name.c_str(), a.bytes.size(), diffs, first, where_in(*a.buf, first).c_str(),
          a.bytes[first], b.bytes[first]);
  }
  return "";
}

}  // namespace conf
