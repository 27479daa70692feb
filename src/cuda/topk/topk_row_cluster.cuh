// The row-cluster path of the GPU top-k: few rows with a large k (LLM sampling at decoding batch
// sizes with k in the hundreds). One thread-block cluster per row: each block copies its slice of
// the row into shared memory once, and the cluster runs an MSD radix select over the composite
// keys (rank, complemented position; StreamKey) on those copies, 8 bits a pass, the blocks' digit
// histograms summed through distributed shared memory, every block taking the same decision from
// the same sums. The select stops at the first digit whose bucket holds exactly the places left
// (real logits: two or three passes). Slices of at least kClusterBoundSlice values first take a
// lower bound on the winners (each warp's m-th best of its threads' best keys, the least over the
// cluster: at least k keys reach it), and each block lists the keys that reach it once: the passes
// and the winners' listing then read that short list instead of the slice (a block whose list
// overflows reads its slice, filtered by the bound). Each block sorts its winners; every block
// then holds every block's sorted run and writes its own keys at their merge ranks. Gathered (few
// rows): once every block has listed the keys reaching the bound, the lists go to block 0's
// shared memory when they fit there, and block 0 alone selects, sorts and writes the row (no
// cluster barrier per pass, no merge); the others stop. Design and measurements:
// docs/design/topk.md.
//
// The kernel is bound by its barriers (a pass is a few hundred cycles of work), so every exchange
// between blocks is a remote store before a cluster barrier, not a remote load after one (except
// the bound's one value a block, where the load saves a barrier), and a pass takes three block
// barriers and one cluster barrier.
#pragma once
#include <cooperative_groups.h>

#include "cuda/topk/topk_row_stream.cuh"

namespace radixmesh::detail::topk_gpu {

constexpr int kClusterThreads = 1024;
constexpr int kClusterWarps = kClusterThreads / 32;
constexpr int kClusterDigitBits = 8;
constexpr int kClusterBins = 1 << kClusterDigitBits;
constexpr int kClusterHistCopies = 8;       // a histogram per 4 warps: fewer same-address atomics
constexpr unsigned kMaxClusterBlocks = 16;  // non-portable above 8 (Hopper allows 16)
// Dynamic shared memory ahead of a block's lists and slice: every block's counts of a pass, by
// pass parity (ClusterInbox).
constexpr std::size_t kClusterInboxBytes = 2 * kMaxClusterBlocks * kClusterBins * sizeof(unsigned);
// Slices from this many values take the bound and the list of keys reaching it (4 values a
// thread; below, a pass over the slice costs little more than one over the list).
constexpr std::uint64_t kClusterBoundSlice = 4 * kClusterThreads;
constexpr unsigned kClusterCandidates = 2048;  // keys a block's list holds
// A block's dynamic shared memory (row_cluster lays it out): the inbox, its run and every block's
// runs (`list` keys each), its list of keys reaching the bound, then its slice of `slice` values
// with room for a 16-byte alignment.
constexpr std::size_t cluster_shared_bytes(unsigned list, std::uint64_t slice, std::size_t value_bytes) {
  return kClusterInboxBytes + (2 * std::size_t(list) + kClusterCandidates) * sizeof(unsigned long long) +
         (slice + 16) * value_bytes;
}

// A block's slice of the row in shared memory: slot s holds the row's value at position
// `origin + s`, where origin is the slice's first position rounded down to a 16-byte boundary of
// the row (slots before the slice's own first position are never read), so the slice's aligned
// middle is copied by 16-byte vectors into 16-byte aligned slots.
template <class T> struct ClusterSlice {
  using U = key_bits_t<T>;
  static constexpr int E = 16 / int(sizeof(U));
  U* slots;
  std::uint64_t first, last, origin;  // positions within the row
  std::uint64_t aligned = 0, tail = 0;  // the aligned middle [aligned, tail), set by load

  // The key of the value at row position pos (first <= pos < last).
  template <int W>
  __device__ unsigned long long key_at(std::uint64_t pos, const StreamKey<W>& key, const StreamRank<T>& rank) const {
    return key.make(rank(slots[pos - origin]), pos);
  }

  // Copies the slice; seen(vector, position of its first value) for every aligned vector this
  // thread copied, in ascending position.
  template <class Seen> __device__ void load(const U* row, Seen&& seen) {
    const auto address = reinterpret_cast<std::uintptr_t>(row + first);
    origin = first - (address % 16) / sizeof(U);
    std::uint64_t head = ((16 - address % 16) % 16) / sizeof(U);
    if (head > last - first) head = last - first;
    aligned = first + head;
    const std::uint64_t vectors = (last - aligned) / E;
    tail = aligned + vectors * E;
    for (std::uint64_t i = threadIdx.x; i < head; i += blockDim.x) slots[first + i - origin] = row[first + i];
    const uint4* from = reinterpret_cast<const uint4*>(row + aligned);
    uint4* to = reinterpret_cast<uint4*>(slots + (aligned - origin));
#pragma unroll 4
    for (std::uint64_t v = threadIdx.x; v < vectors; v += blockDim.x) {
      const uint4 x = __ldcs(from + v);
      to[v] = x;
      seen(x, aligned + v * E);
    }
    for (std::uint64_t i = tail + threadIdx.x; i < last; i += blockDim.x) slots[i - origin] = row[i];
  }

  // Appends the slice's keys that reach `bound` (a StreamKey) to `out` from `*count` (places from
  // `cap` on are counted, not written), in no particular order. A vector of the aligned middle is
  // first compared natively with the bound's value (reach_mask lets ties and NaN through), so only
  // the few values that may reach it take a key: most vectors of a long slice hold none, and a
  // key a value made this loop issue-bound (1024 threads on one SM). One atomic a warp a round.
  template <int W>
  __device__ void list_reaching(unsigned long long bound, const StreamKey<W>& key, const StreamRank<T>& rank,
                                bool largest, unsigned long long* out, unsigned* count, unsigned cap) const {
    const U bound_value = rank.raw_of(U(StreamKey<W>::rank(bound)));
    const uint4* vectors = reinterpret_cast<const uint4*>(slots + (aligned - origin));
    const std::uint64_t n = (tail - aligned) / E;
    auto key_at = [&](std::uint64_t pos) { return this->key_at(pos, key, rank); };
    for (std::uint64_t base = 0; base < n; base += blockDim.x) {  // whole-warp rounds
      const std::uint64_t v = base + threadIdx.x, at = aligned + v * E;
      unsigned mask = v < n ? reach_mask<T>(vectors[v], bound_value, largest) : 0u;
      if (!__any_sync(0xffffffffu, mask)) continue;
      for (unsigned m = mask; m; m &= m - 1)
        if (key_at(at + unsigned(__ffs(m) - 1)) < bound) mask &= ~(1u << (__ffs(m) - 1));
      unsigned place = warp_reserve_n(unsigned(__popc(mask)), count);
      for (; mask; mask &= mask - 1, ++place)
        if (place < cap) out[place] = key_at(at + unsigned(__ffs(mask) - 1));
    }
    // The head and tail values (fewer than a vector each), one a thread.
    const std::uint64_t head = aligned - first, odd = head + (last - tail);
    for (std::uint64_t base = 0; base < odd; base += blockDim.x) {
      const std::uint64_t i = base + threadIdx.x, pos = i < head ? first + i : tail + (i - head);
      unsigned long long k = 0;
      const bool reaches = i < odd && (k = key_at(pos)) >= bound;
      const unsigned place = warp_reserve(reaches, count);
      if (reaches && place < cap) out[place] = k;
    }
  }
};

// Shared state of a cluster block besides its dynamic shared memory (the inbox, its run and every
// block's runs, then its slice).
struct ClusterShared {
  unsigned hist[2][kClusterHistCopies][kClusterBins];  // the block's counts of a pass's digit, by parity
  unsigned warp_sum[kClusterBins / 32];                // the digit scan's warp totals
  unsigned long long bin_warp_sum[kClusterBins / 32];  // the places' scan: warp totals (every block's, this one's)
  unsigned bin_start_part[kClusterBins / 32];          // the places' scan: warp sums of the winners before this block
  unsigned digit, above, bucket;                       // the pass's decision
  unsigned listed;                                     // the block's winners (its run)
  unsigned long long bound;                            // the least of its full warps' m-th best keys
  unsigned full_warps;                                 // its warps with m keys at or above their m-th
  unsigned long long bound_of[kMaxClusterBlocks];      // every block's bound and full warps, loaded from each
  unsigned full_of[kMaxClusterBlocks];
  unsigned candidates;                                 // keys of the slice reaching the cluster's bound
  unsigned gathered;                                   // block 0: keys gathered (places reserved)
  unsigned gather_at;                                  // the block's first place among them
  unsigned gather_fits[kMaxClusterBlocks];             // every block's: its list went to block 0
  unsigned run_count[kMaxClusterBlocks];               // every block's, pushed by each
  unsigned run_start[kMaxClusterBlocks + 1];           // their places among all the winners
  StreamShared stream;                                 // the run's sort
};

// Every block's list (`listed` keys, ~0u: none, it overflowed) into block 0's first `places` keys
// of dynamic shared memory, where they all fit: true in every block then, and block 0 holds
// sh.gathered keys; false in every block otherwise (the lists stay where they are). Every thread
// of the cluster calls it; it ends with a cluster barrier.
__device__ inline bool gather_lists(cooperative_groups::cluster_group& cluster, ClusterShared& sh,
                                    const unsigned long long* list, unsigned listed, unsigned char* cluster_bytes,
                                    unsigned places) {
  const unsigned blocks = cluster.num_blocks(), me = cluster.block_rank();
  // The block's places: one remote atomic on block 0's count (set to 0 before the bound's
  // cluster barrier).
  if (threadIdx.x == 0)
    sh.gather_at = listed <= places ? atomicAdd(cluster.map_shared_rank(&sh.gathered, 0), listed) : places + 1;
  __syncthreads();
  const unsigned at = sh.gather_at;
  const bool fits = at <= places && listed <= places - at;
  if (fits) {
    unsigned long long* to = cluster.map_shared_rank(reinterpret_cast<unsigned long long*>(cluster_bytes), 0) + at;
    for (unsigned i = threadIdx.x; i < listed; i += blockDim.x) to[i] = list[i];
  }
  if (threadIdx.x < blocks) cluster.map_shared_rank(sh.gather_fits, threadIdx.x)[me] = fits;
  cluster.sync();  // every list that fits is in block 0; every block's answer is in every block
  bool all = true;
  for (unsigned c = 0; c < blocks; ++c) all = all && sh.gather_fits[c];
  return all;
}

// The sum over the bins above each bin, where thread t < kClusterBins holds bin kClusterBins - 1 - t's
// `value` (the pass's decision and the places from the bins both count from the top): a shuffle
// scan within each warp, then the totals of the warps before through `warp_total`. Every thread of
// the block calls it (one barrier inside); threads past the bins get 0.
template <class V>
__device__ inline V cluster_sum_of_bins_above(V value, V* warp_total, unsigned t, unsigned lane, unsigned warp) {
  V inclusive = value;
  if (t < kClusterBins) {
    inclusive = ::radixmesh::device::block_scan::warp_inclusive_scan(value);
    if (lane == 31) warp_total[warp] = inclusive;
  }
  __syncthreads();
  V before = 0;
  if (t < kClusterBins) {
    before = inclusive - value;
    for (unsigned w = 0; w < warp; ++w) before += warp_total[w];
  }
  return before;
}

// One cluster (gridDim.x blocks) per row of the launch chunk: the row's min(k, length) best keys,
// sorted (best first, or by position) and written as the row's output. p.segment_length is a
// block's slice; p.capacity the keys of each of the two lists (k_pad, rounded up to 16 bytes).
// gather: whether the lists may be gathered into block 0 (the room ahead of its list: step 4).
template <class T>
__global__ void __launch_bounds__(kClusterThreads) row_cluster(StreamParams<T> p, bool gather) {
  using U = key_bits_t<T>;
  constexpr int W = 8 * sizeof(U);
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  extern __shared__ __align__(16) unsigned char cluster_bytes[];
  __shared__ ClusterShared sh;
  auto* inbox = reinterpret_cast<unsigned(*)[kMaxClusterBlocks][kClusterBins]>(cluster_bytes);  // [parity][block][bin]
  unsigned long long* run = reinterpret_cast<unsigned long long*>(cluster_bytes + kClusterInboxBytes);
  unsigned long long* all = run + p.capacity;  // every block's run, in block order
  unsigned long long* candidates = all + p.capacity;  // the slice's keys reaching the bound
  const unsigned me = cluster.block_rank(), blocks = cluster.num_blocks();
  const unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const std::size_t r = p.row0 + blockIdx.y;
  const std::uint64_t begin = p.rows.begin(r), length = p.rows.end(r) - begin;
  ClusterSlice<T> slice{reinterpret_cast<U*>(candidates + kClusterCandidates), 0, 0, 0};
  slice.first = std::min<std::uint64_t>(length, me * p.segment_length);
  slice.last = std::min<std::uint64_t>(length, slice.first + p.segment_length);
  const StreamKey<W> key(p.index_bits);
  const StreamRank<T> rank(p.options);
  const unsigned wanted = unsigned(std::min<std::uint64_t>(p.k, length));
  // Slices this long take the bound (below); its first step, each thread's best key among the
  // aligned values it copies, runs as they arrive (the head and tail values need not count).
  const bool bounded = wanted > 0 && p.segment_length >= kClusterBoundSlice;
  // A block's shared memory may be touched by the others only once it runs: without the bound
  // this arrival is waited for before the first remote store, after the load; with it, the
  // bound's own cluster barrier does that.
  if (!bounded) cluster.barrier_arrive();
  U best_rank = 0;
  std::uint64_t best_at = ~0ull;  // a position; a thread's ascend, so a strictly higher rank replaces
  slice.load(p.values + begin, [&](const uint4& v, std::uint64_t at) {
    if (!bounded) return;
    U lanes[ClusterSlice<T>::E];
    memcpy(lanes, &v, 16);
#pragma unroll
    for (int e = 0; e < ClusterSlice<T>::E; ++e) {
      const U rk = rank(lanes[e]);
      if (best_at == ~0ull || rk > best_rank) best_rank = rk, best_at = at + unsigned(e);
    }
  });
  if (t == 0) sh.listed = 0, sh.bound = ~0ull, sh.full_warps = 0, sh.candidates = 0, sh.gathered = 0;
  for (unsigned b = t; b < kClusterHistCopies * kClusterBins; b += blockDim.x) sh.hist[0][0][b] = 0;
  const std::uint64_t mine = slice.last - slice.first;
  auto key_at = [&](std::uint64_t i) { return slice.key_at(slice.first + i, key, rank); };  // i < mine
  __syncthreads();
  bool waited = false;  // for the cluster's arrivals (before the first remote store)

  // The bound: every winner's key is at least `bound`. A warp's m-th best of its threads' best
  // keys has m distinct keys at or above it; with m = ceil(wanted / every warp of the cluster),
  // the least over the warps that have m keys (full) has at least wanted keys at or above it
  // when full warps x m >= wanted (else no bound: 0). The slice's keys reaching it are listed.
  unsigned long long bound = 0;
  bool in_list = false;
  unsigned listed_keys = 0;
  if (bounded) {
    const unsigned m = (wanted + blocks * kClusterWarps - 1) / (blocks * kClusterWarps);  // <= 32
    const unsigned long long mth = warp_mth_best(best_at == ~0ull ? 0ull : key.make(best_rank, best_at), m);
    if (lane == 0 && mth) atomicMin(&sh.bound, mth), atomicAdd(&sh.full_warps, 1u);
    // Every block runs and holds its bound once past this barrier; 16 lanes then load them (one
    // barrier and a remote load instead of two barriers around remote stores). No block leaves
    // before the next cluster barrier (the gather's or the first pass's), so they stay readable.
    cluster.sync();
    waited = true;
    if (t < blocks) {
      sh.bound_of[t] = *cluster.map_shared_rank(&sh.bound, t);
      sh.full_of[t] = *cluster.map_shared_rank(&sh.full_warps, t);
    }
    __syncthreads();
    unsigned long long least = ~0ull;
    unsigned full = 0;
    for (unsigned c = 0; c < blocks; ++c)
      if (sh.full_of[c]) least = sh.bound_of[c] < least ? sh.bound_of[c] : least, full += sh.full_of[c];
    bound = std::uint64_t(full) * m >= wanted ? least : 0ull;
    if (bound) {
      slice.list_reaching(bound, key, rank, p.options.largest, candidates, &sh.candidates, kClusterCandidates);
      __syncthreads();
      listed_keys = sh.candidates;
      in_list = listed_keys <= kClusterCandidates;
      // Block 0's room ahead of its list (the inbox and both runs: unused until the passes, which
      // follow the gather's cluster barrier) takes the gathered keys.
      const unsigned places = unsigned(candidates - reinterpret_cast<unsigned long long*>(cluster_bytes));
      if (gather && gather_lists(cluster, sh, candidates, in_list ? listed_keys : ~0u, cluster_bytes, places)) {
        if (me == 0) {  // the others' lists are here; its own list's room takes the kept keys
          StreamBuffer buf{reinterpret_cast<unsigned long long*>(cluster_bytes), candidates, sh.stream};
          write_row(p, buf, r, begin, sh.gathered);
        }
        return;
      }
    }
  }
  // The keys the select counts and lists: the list, or the slice's keys reaching the bound.
  const std::uint64_t keys = in_list ? listed_keys : mine;
  auto counted_key = [&](std::uint64_t i) {  // i < keys; 0: not counted
    if (in_list) return candidates[i];
    const unsigned long long k = key_at(i);
    return k >= bound ? k : 0ull;
  };

  // The select: bits [high, 64) of the winners' keys are resolved to `prefix`; `need` places are
  // left among the keys that share it. Every block runs the same passes (the same sums decide),
  // over the rank bits only: where the k-th rank's equals are more than the places left, the
  // slices ascend, so the blocks take them in block order (each block's count of them is in the
  // inbox), and only the block where the places run out picks its first ones by position, alone.
  const int low = 64 - W - p.index_bits;  // the keys' lowest bit in use
  const int rank_low = 64 - W;              // the rank's lowest bit
  int high = 64;
  unsigned long long prefix = 0;
  unsigned need = wanted;
  bool ties = false;                     // the rank is resolved and its equals outnumber `need`
  unsigned pass_need = wanted;           // `need` as the last pass began
  // The last pass's inbox, digit and width (with ties: every block's equals of the k-th rank).
  unsigned last_parity = 0, last_digit = 0, last_width = 0;
  for (int pass = 0; need > 0 && high > rank_low; ++pass) {
    pass_need = need;
    const int shift = high - kClusterDigitBits > low ? high - kClusterDigitBits : low, width = high - shift;
    const unsigned parity = unsigned(pass) & 1;
    unsigned* counts = sh.hist[parity][warp % kClusterHistCopies];
    for (std::uint64_t i = t; i < keys; i += blockDim.x) {
      const unsigned long long k = counted_key(i);
      if (k && (high == 64 || (k >> high) == prefix)) atomicAdd(&counts[unsigned(k >> shift) & ((1u << width) - 1)], 1u);
    }
    __syncthreads();
    if (!waited) cluster.barrier_wait(), waited = true;  // every block of the cluster runs
    // The block's counts into every block's inbox; the other parity's copies zeroed for the next
    // pass (last read before the barrier above).
    if (t < kClusterBins) {
      unsigned sum = 0;
      for (int c = 0; c < kClusterHistCopies; ++c) sum += sh.hist[parity][c][t];
      for (unsigned c = 0; c < blocks; ++c) cluster.map_shared_rank(&inbox[parity][me][0], c)[t] = sum;
    } else {
      for (unsigned b = t - kClusterBins; b < kClusterHistCopies * kClusterBins; b += blockDim.x - kClusterBins)
        sh.hist[parity ^ 1][0][b] = 0;
    }
    // Every inbox is complete. This parity's is written again two passes on, after the next
    // cluster barrier, which every block reaches only after reading it.
    cluster.sync();
    // The digit holding the need-th best key, counted from the top: thread i takes digit 255 - i.
    unsigned count = 0;
    if (t < kClusterBins)
      for (unsigned c = 0; c < blocks; ++c) count += inbox[parity][c][kClusterBins - 1 - t];
    const unsigned before = cluster_sum_of_bins_above(count, sh.warp_sum, t, lane, warp);
    if (t < kClusterBins && before < need && need <= before + count)
      sh.digit = kClusterBins - 1 - t, sh.above = before, sh.bucket = count;
    __syncthreads();
    const unsigned digit = sh.digit, above = sh.above, bucket = sh.bucket;
    last_parity = parity, last_digit = digit, last_width = unsigned(width);
    need -= above;
    prefix = (high == 64 ? 0ull : prefix << width) | digit;
    high = shift;
    if (bucket == need) break;  // every key of this bucket wins
    if (high == rank_low) ties = true;  // the loop ends here: the last pass is the ties'
  }
  // With ties: this block's equals of the k-th rank, and how many of them win (`quota`: all in the
  // blocks before the one where the places run out, none after). That block finds the key
  // `tie_floor` that exactly `quota` of its equals reach, by passes over their position bits in
  // its own shared memory (no cluster barrier).
  unsigned equals = 0, quota = 0;
  unsigned long long tie_floor = 0;
  if (ties) {
    unsigned before = 0;
    for (unsigned c = 0; c < me; ++c) before += inbox[last_parity][c][last_digit];
    equals = inbox[last_parity][me][last_digit];
    quota = need > before ? (need - before < equals ? need - before : equals) : 0u;
    if (quota > 0 && quota < equals) {
      int h = rank_low;
      unsigned long long pre = prefix;
      unsigned left = quota;
      auto equal_key = [&](std::uint64_t i, unsigned long long& k) { return (k = counted_key(i)) != 0; };
      while (h > low) {
        const unsigned bucket = radix_select_pass(sh.stream, keys, equal_key, low, h, pre, left);
        if (bucket == left) break;  // keys are distinct: exactly `left` share the prefix then
        __syncthreads();            // the decision is read before the next pass rewrites it
      }
      tie_floor = pre << h;
    }
  }
  // A winner: a key above the k-th rank (its bits above `high` beat the prefix), or one of the
  // rank's equals the block takes (without ties, every key reaching the prefix).
  auto wins_key = [&](unsigned long long k) {
    const unsigned long long top = k >> high;
    if (!ties) return top >= prefix;
    return top > prefix || (top == prefix && quota > 0 && (quota == equals || k >= tie_floor));
  };

  // The winners, exactly `wanted` keys: those whose top bits reach the prefix. Each block lists
  // its own (a warp reserves its places with one shared atomic) and sorts them in the output's
  // order: its run. Every block then holds every run in block order, and places each key of its
  // own run at its merge rank (binary searches of the other runs, 16 lanes a key). By position,
  // the runs in block order are the output already: the slices ascend.
  // Places from the bins: where the passes resolved the rank (the last pass's digit ends at its
  // lowest bit) and every winner shares the digits of the passes before the last (none was taken
  // above them: the best k of bf16 logits share the sign and the exponent's top seven bits), a
  // winner's rank is its bin of the last pass, whose counts every block holds in its inbox. Its
  // place then follows without another exchange: the winners of the bins above it, those of its
  // bin in the blocks before this one (equals go in block order), and its own index among this
  // block's winners of the bin (its run ascends by position within a rank). By position, the
  // block's first place is the count of winners in the blocks before it. Thread t takes bin
  // 255 - t; its bin_base = winners above the bin in every block, less those in this block, plus
  // the bin's winners in the blocks before.
  const bool by_bins = wanted > 0 && last_width > 0 && high == rank_low && pass_need == wanted;
  unsigned* bin_base = sh.hist[0][0];  // the passes' histograms are read no more
  unsigned start_by_bins = 0;
  if (by_bins) {
    unsigned long long pair = 0;  // the bin's keys in every block (low half) and in this block (high half)
    unsigned before_me = 0;       // the bin's winners in the blocks before this one
    const unsigned b = kClusterBins - 1 - t;
    if (t < kClusterBins && b < (1u << last_width) && b >= last_digit) {
      unsigned total = 0;
      for (unsigned c = 0; c < blocks; ++c) {
        const unsigned n = inbox[last_parity][c][b];
        total += n, before_me += c < me ? n : 0u;
      }
      if (b == last_digit) before_me = before_me < need ? before_me : need;  // the equals that win
      pair = (b > last_digit ? total : 0u) | (unsigned long long)(b > last_digit ? inbox[last_parity][me][b] : 0u) << 32;
    }
    if (t < kClusterBins) {
      const unsigned part = __reduce_add_sync(0xffffffffu, before_me);
      if (lane == 0) sh.bin_start_part[warp] = part;  // read after the barrier in the scan below
    }
    const unsigned long long above = cluster_sum_of_bins_above(pair, sh.bin_warp_sum, t, lane, warp);
    for (unsigned w = 0; w < kClusterBins / 32; ++w) start_by_bins += sh.bin_start_part[w];
    if (t < kClusterBins)
      bin_base[b] = unsigned(above) - unsigned(above >> 32) + before_me;  // read after the listing's barrier
  }
  if (wanted == 0) {
    if (!waited) cluster.barrier_wait();  // no pass waited for the arrivals
    if (me == 0)
      for (unsigned q = t; q < p.k; q += blockDim.x) write_place(p, r, begin, q, 0ull);
    return;
  }
  for (std::uint64_t base = 0; base < keys; base += blockDim.x) {  // whole-warp rounds
    const std::uint64_t i = base + t;
    unsigned long long k = 0;
    const bool wins = i < keys && (k = counted_key(i)) && wins_key(k);
    const unsigned at = warp_reserve(wins, &sh.listed);
    if (wins && at < p.k_pad) run[at] = k;
  }
  __syncthreads();
  const unsigned listed = sh.listed < p.k_pad ? sh.listed : p.k_pad;
  const bool by_rank = p.options.sorted;
  auto order = [&](unsigned long long k) { return by_rank ? k : key.by_position(k); };
  auto sort_run = [&] {
    if (listed > 1) {
      unsigned size = 1;
      while (size < listed) size *= 2;
      StreamBuffer{run, run, sh.stream}.sort(listed, size, order);
    }
  };
  if (by_bins) {  // no block touches another's memory after the last pass's cluster barrier
    sort_run();
    const unsigned mask = (1u << last_width) - 1;
    for (unsigned i = t; i < listed; i += blockDim.x) {
      const unsigned long long k = run[i];
      write_place(p, r, begin, (by_rank ? bin_base[unsigned(k >> rank_low) & mask] : start_by_bins) + i, k);
    }
    if (me == 0)
      for (unsigned q = wanted + t; q < p.k; q += blockDim.x) write_place(p, r, begin, q, 0ull);
    return;
  }
  if (t < blocks) cluster.map_shared_rank(sh.run_count, t)[me] = listed;
  // The barrier that makes every block's count visible is arrived at before the sort and waited
  // for after it, so its latency overlaps the sort (a cluster barrier took 0.8-1.1 us in pass 0
  // of bench/phases/marked_kernel.sh row_cluster: h100-hf-row_cluster_phases-m.log).
  cluster.barrier_arrive();
  sort_run();
  cluster.barrier_wait();  // every block's count is here
  if (t <= blocks) {
    unsigned at = 0;
    for (unsigned c = 0; c < t; ++c) at += sh.run_count[c];
    sh.run_start[t] = at;
  }
  __syncthreads();
  const unsigned start = sh.run_start[me];
  if (!by_rank) {  // no block touches another's memory after the barrier above
    for (unsigned i = t; i < listed; i += blockDim.x) write_place(p, r, begin, start + i, run[i]);
  } else {
    for (unsigned i = t; i < blocks * listed; i += blockDim.x)
      cluster.map_shared_rank(all, i / listed)[start + i % listed] = run[i % listed];
    cluster.sync();  // every block holds every run; no block touches another's memory after this
    // 16 lanes per key: lane c counts the keys of run c before it (the runs descend).
    constexpr unsigned G = kMaxClusterBlocks;
    for (unsigned base = 0; base < listed * G; base += blockDim.x) {  // whole-warp rounds
      const unsigned w = base + t, i = w / G, c = w % G;
      unsigned before = 0;
      unsigned long long x = 0;
      if (i < listed) {
        x = run[i];
        if (c < blocks && c != me) {
          const auto ox = order(x);
          unsigned lo = sh.run_start[c], hi = sh.run_start[c + 1];
          while (lo < hi) {
            const unsigned mid = (lo + hi) / 2;
            if (order(all[mid]) > ox) lo = mid + 1;
            else hi = mid;
          }
          before = lo - sh.run_start[c];
        }
      }
      for (unsigned d = G / 2; d > 0; d /= 2) before += __shfl_xor_sync(0xffffffffu, before, d, G);
      if (i < listed && c == 0) write_place(p, r, begin, i + before, x);
    }
  }
  if (me == 0)
    for (unsigned q = wanted + t; q < p.k; q += blockDim.x) write_place(p, r, begin, q, 0ull);
}

}  // namespace radixmesh::detail::topk_gpu
