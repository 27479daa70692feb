// RadiK's adaptive scaling (TopkStart::radik_scaling), made exact.
#pragma once
#include "cuda/topk/topk_pick.cuh"

namespace radixmesh::detail::topk_gpu {

// ---- RadiK's scaling, made exact (RadiK §4.3; TopkStart::radik_scaling).
// RadiK subtracts a sample x_r (its code: the first element of the task, NaN/inf -> 0) from every
// key before the radix passes, so that inputs sharing their high bits (U[128.6, 128.7]) spread
// over the first digit. Subtraction rounds, so distinct keys can meet (fl(x - c) == fl(y - c)),
// and RadiK then returns whichever of them its atomics pick. But x -> fl(x - c) is monotone
// (non-decreasing, NaN and inf included: c is finite, every NaN stays in the NaN block of the
// ranks), so the order by (scaled rank, original rank, lowest index) IS the order by (original
// rank, lowest index). Hence: (1) a select over the scaled ranks alone (W bits, no index digits)
// finds the scaled rank s of the k-th best and k_left, the places left among the elements whose
// scaled rank equals s (or, on an early exit, whose resolved top bits match: all of them win);
// (2) every element whose scaled rank is above that group wins outright; (3) the usual select on
// the original composite (rank, ~index) runs inside the group for the k_left places. Only f32 and
// f64 (16-bit keys would need device half arithmetic; integer keys gain nothing).
template <class U> __device__ __forceinline__ U scaled_rank(U rank, U sample, KeyType t, const TopkOptions& o) {
  return with_type<U>(t, [&](auto tag) -> U {
    using T = decltype(tag);
    if constexpr (key_traits<T>::is_float && sizeof(T) >= 4) {
      const T x = from_bits<T>(key_bits_t<T>(raw_of_rank<U>(rank, t, o)));
      // A NaN keeps its own rank: every NaN rank lies in the NaN block, beyond every number's, so
      // this stays monotone. Subtracting would not: an f64 NaN - c keeps the NaN's payload and
      // quiets it, which reorders NaNs among themselves (GpuTopkStart.F64 with include_nan and a
      // NaN on top fails that way on an H200; f32 gives one canonical NaN, a tie group).
      if (x != x) return rank;
      const T c = from_bits<T>(key_bits_t<T>(sample));
      return U(topk_rank(T(x - c), o));
    } else {
      return rank;
    }
  });
}

// The sample x_r from the raw bits of the source's first element: NaN and +-inf become 0 (RadiK's
// sampleScaler), so that x - c never makes a NaN from a number.
template <class U> __device__ __forceinline__ U scaling_sample(U raw, KeyType t) {
  return with_type<U>(t, [&](auto tag) -> U {
    using T = decltype(tag);
    if constexpr (key_traits<T>::is_float && sizeof(T) >= 4) {
      const T c = from_bits<T>(key_bits_t<T>(raw));
      return c - c == T(0) ? raw : U(0);  // false for NaN and +-inf
    } else {
      return U(0);
    }
  });
}

// A row's view of the scaled select: the sample and, once that select has run, its state (the
// group). `place` says where an element of original rank `rank` stands: +1 above the group (a
// winner), 0 inside it (the original-key select decides), -1 below it. Off: everything is "inside".
template <class U> struct ScaledView {
  bool on;
  U sample;
  RowState<U> group;
  __device__ __forceinline__ U scaled(U rank, KeyType t, const TopkOptions& o) const {
    return scaled_rank<U>(rank, sample, t, o);
  }
  __device__ __forceinline__ int place(U rank, KeyType t, const TopkOptions& o, int W) const {
    if (!on || group.resolved == 0) return 0;
    const std::uint64_t a = std::uint64_t(scaled(rank, t, o)) >> (W - group.resolved);
    const std::uint64_t b = std::uint64_t(group.rank_prefix) >> (W - group.resolved);
    return a > b ? 1 : a == b ? 0 : -1;
  }
};

// RadiK's scaling, step (1) to (3): the main select continues inside the scaled select's group
// with its k_left. An early exit of the scaled select (the group's count equals k_left before all
// W bits were resolved) means the whole group wins. Otherwise the group is {x : fl(x - c) == s},
// and every such x lies within half an ulp of s from c + s: the ranks of that interval's ends
// (rounded outward) bound the group's original ranks, so the main select starts at the bits they
// share (for exact subtractions, as for U[0.6, 0.7] and U[128.6, 128.7] with c from the same
// range (Sterbenz), all W rank bits: only the index digits are left). s = +-inf or NaN: no bound.
template <class U>
__device__ __forceinline__ void start_inside_group(RowState<U>& m, const RowState<U>& g, U sample, KeyType t,
                                                   const TopkOptions& o, int W) {
  if (m.done) return;
  m.k_left = g.k_left;
  m.done = g.resolved < W ? 1 : 0;
  if (m.done) return;
  with_type<U>(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (key_traits<T>::is_float && sizeof(T) >= 4) {
      const T scaled = from_bits<T>(key_bits_t<T>(raw_of_rank<U>(g.rank_prefix, t, o)));
      const T c = from_bits<T>(key_bits_t<T>(sample));
      if (!(scaled - scaled == T(0))) return;  // inf or NaN
      constexpr int kMantissa = key_traits<T>::mantissa_bits;
      constexpr int kMinExponent = sizeof(T) == 4 ? -126 : -1022;
      const int e = scaled == T(0) ? kMinExponent : (ilogb(scaled) > kMinExponent ? ilogb(scaled) : kMinExponent);
      // [L, H] = c + s -+ half an ulp of s, computed rounded outward (directed double adds); for
      // f32 its ends then round INWARD to floats (the smallest float >= L is still <= every member,
      // which is a float), so that an exact subtraction gives lo = hi = the one original value.
      const double half_ulp = ldexp(1.0, e - kMantissa - 1);
      const double low = __dsub_rd(__dadd_rd(double(c), double(scaled)), half_ulp);
      const double high = __dadd_ru(__dadd_ru(double(c), double(scaled)), half_ulp);
      T lo, hi;
      if constexpr (sizeof(T) == 4) lo = __double2float_ru(low), hi = __double2float_rd(high);
      else lo = low, hi = high;  // f64: one double wider on each side than needed
      const U a = U(topk_rank(lo, o)), b = U(topk_rank(hi, o));  // largest = false reverses them
      start_at_shared_bits(m, a < b ? a : b, a < b ? b : a, W);
    }
  });
}


// The row's view of the scaled select (off: everything is "inside").
template <class U> __device__ __forceinline__ ScaledView<U> scaled_view(const Params<U>& p, std::size_t r,
                                                                       const Source<U>& src) {
  if (!p.scaling) return {false, U(0), {}};
  return {true, scaling_sample<U>(src.first_raw(), p.type), p.sstate[r]};
}

// Run after the scaled select's passes (multi-block path): see start_inside_group.
template <class U> __global__ void begin_after_scaling(Params<U> p, std::size_t row_count) {
  for_each_index(row_count, [&](std::uint64_t r) {
    RowState<U> m = p.state[r];
    if (m.done) return;
    const Source<U> src = row_source(p, r);
    start_inside_group(m, p.sstate[r], scaling_sample<U>(src.first_raw(), p.type), p.type, p.options, p.W);
    p.state[r] = m;
  });
}

}  // namespace radixmesh::detail::topk_gpu
