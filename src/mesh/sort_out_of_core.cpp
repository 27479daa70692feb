// The out-of-core sort: MSD radix partitioning through the devices, level by level, two passes
// over each level's keys.
//
// Where one device holds a level's elements once with room to spare (resident_bytes_per_byte), the
// level stays on it and every element crosses the host link once each way:
//  1. partition: every chunk goes up and is split by the level's digit straight into its own
//     place in one device-resident array (the split gives its bucket counts);
//  2. sort: runs of consecutive buckets are gathered from their pieces on the device, sorted on
//     the bits left and come down to their place in `out`; a bucket too large to sort at once comes
//     down unsorted to its place in `out` and is the next level's input there.
// No host memory beyond the input is used. Otherwise (inputs larger than that, several devices)
// one level sorts n host-resident elements, its input (pieces of host arrays, in order), into a
// contiguous range `out` with the extra host array, every element going up and coming down once
// per pass:
//  1. partition: every chunk of the input goes up to a device, is split there by the level's
//     digit (8 bits of the encoding, below the bits fixed by the levels above) and comes back whole
//     to its own place in `parted`: the extra host array at the top level; deeper, the input
//     itself (a chunk's place is free once it is up). The split gives each chunk's bucket counts,
//     so nothing is counted beforehand and no host thread moves a key;
//  2. sort: runs of consecutive buckets that fit a device go up from their pieces in `parted`
//     (one per chunk), are sorted on the bits left (below the digit when the run is one bucket)
//     and come down to their place in `out`. A bucket too large for a device is the next level's
//     input: its pieces in `parted`, sorted into its range of `out`. A bucket with no bits left
//     holds equal keys, already in stable order (chunk order, then order within the chunk).
// Within a pass, each device takes the next item (chunk or group) when it is free. Where the
// devices take concurrent calls, each runs two host threads over two sets of buffers: one
// queues an item's upload (DeviceBackend's up lane) and its device work, the other downloads the
// item before (down lane), so the host link carries both directions at once.
#include "core/backends.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mesh/bucket_runs.hpp"
#include "mesh/device_backend.hpp"
#include "mesh/digit_source.hpp"
#include "mesh/extra_host_array.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {
namespace {

using mesh::Lane;

constexpr int digit_bits = 8;
// Device memory per element of the in-memory sorts, of the element's bytes: one device's sort
// holds its input and a second buffer plus its temp; the mesh sort its input, the split copy and
// the received keys.
constexpr double one_device_bytes_per_byte = 2.2, mesh_bytes_per_byte = 3.2;
// Out of core, a device holds two items at once: two chunks and their splits (pass 1), or two
// groups and one sort's second buffer and temp (pass 2). A level resident on the device holds its
// elements, and beside them two chunks (pass 1) or two groups and a sort's buffers (pass 2) of at
// least 1/13 of the elements each.
constexpr double chunk_bytes_per_byte = 4.2, group_bytes_per_byte = 3.4, resident_bytes_per_byte = 1.25;
// Items per device and pass, so that the first upload and the last download, which nothing
// overlaps, are a small part of a pass; but no item below 2^24 elements, whose per-item costs
// (launches, the host threads' handoffs) would show.
constexpr std::size_t items_per_device = 16, min_item = std::size_t(1) << 24;
// The fewest elements per chunk and group that a device's memory must hold.
constexpr std::size_t min_cap = 256;
// From this many elements a level that one device holds once runs resident even where a single
// group would fit (upload, sort, download one after another): the splits and sorts then hide
// behind the transfers, and one GPU's host sort takes the same way (takes_out_of_core).
constexpr std::size_t resident_min = std::size_t(1) << 26;

std::size_t budget_of(mesh::DeviceBackend& backend, int local, const SortOptions& options) {
  const std::size_t free = backend.memory_budget(local);
  return options.device_memory_limit ? std::min(free, options.device_memory_limit) : free;
}

struct HostArrays {
  std::byte* keys = nullptr;
  std::byte* values = nullptr;
};

// A run of elements in host arrays.
struct Piece {
  HostArrays at;
  std::uint64_t count = 0;
};

struct Level {
  std::vector<Piece> input;   // the level's elements, in order
  std::vector<Piece> parted;  // where the split chunks go: the same total, in order
  HostArrays out;             // where the sorted elements go, contiguous
  std::uint64_t n = 0;
  int end_bit = 0;  // the bits still to sort are [plan.begin_bit, end_bit)
  int depth = 0;
};

// A run of consecutive buckets sorted on one device: its pieces, the place of its result.
struct Group {
  std::vector<Piece> pieces;
  HostArrays out;
  std::uint64_t count = 0;
  int end_bit = 0;
};

class OutOfCoreSort {
 public:
  OutOfCoreSort(Context& ctx, const SortPlan& plan, const SortOptions& options)
      : plan_(plan), options_(options), backend_(mesh::device_backend_for(ctx)),
        locals_(ctx.local_mesh_devices().count), key_bytes_(size_of(plan.type)),
        elem_bytes_(key_bytes_ + plan.value_bytes) {
    std::size_t budget = SIZE_MAX;
    for (int i = 0; i < locals_; ++i) budget = std::min(budget, budget_of(*backend_, i, options));
    budget_ = budget;
    chunk_cap_ = std::size_t(double(budget) / (chunk_bytes_per_byte * double(elem_bytes_)));
    group_cap_ = std::size_t(double(budget) / (group_bytes_per_byte * double(elem_bytes_)));
    chunk_cap_ = std::min(chunk_cap_, std::size_t(1) << 31);  // a GPU split takes below 2^32 - 2^16 keys
    require(chunk_cap_ >= min_cap && group_cap_ >= min_cap,
            "sort: " + std::to_string(budget) + " bytes of device memory per device for an out-of-core sort",
            "free device memory or raise SortOptions::device_memory_limit (at least " +
                std::to_string(std::size_t(std::max(chunk_bytes_per_byte, group_bytes_per_byte) * double(min_cap) *
                                           double(elem_bytes_)) + 1) +
                " bytes)");
  }

  // Whether a sort of n elements needs the extra host array: not when it fits one device, or its
  // top level stays resident on one (its deeper levels are smaller, so they do too). Devices
  // whose memory is the host's (an unbounded budget) take it, so that it is refused up front.
  bool needs_extra_host_array(std::uint64_t n) const {
    return budget_ == SIZE_MAX || (n > group_cap_ && !fits_resident(n));
  }
  // On device 0 alone: where the mesh sort's 3.2x over several devices is out of reach, 1.25x on
  // one device is too from three devices on, and with two it moves the same bytes over half the
  // links without the host array. An unbounded budget is the host's memory (CPU devices without
  // a device_memory_limit): holding the level there would be the host array again.
  bool fits_resident(std::uint64_t n) const {
    return budget_ != SIZE_MAX && double(n) * double(elem_bytes_) * resident_bytes_per_byte <= double(budget_);
  }

  void run(const Level& lv) {
    if (lv.n == 0) return;
    if (lv.end_bit <= plan_.begin_bit) {  // equal keys in the bits sorted: already in stable order
      gather(lv.input, lv.out);
      return;
    }
    const bool resident = fits_resident(lv.n);
    if (lv.n <= group_cap_ && !(resident && lv.n >= resident_min)) {  // what is left fits one device
      sort_groups({Group{lv.input, lv.out, lv.n, lv.end_bit}}, lv.depth);
      return;
    }
    if (resident) return run_resident(lv);
    require(!lv.parted.empty(), "sort: an out-of-core level without its second host array",
            "report this as a bug in radixmesh");
    const auto [bits, shift] = level_digit(lv, "through the extra host array");
    const std::uint32_t m = std::uint32_t(1) << bits;
    // 1. Partition: counted[c] holds chunk c's bucket offsets once it is split.
    const std::size_t chunks = items_for(lv.n, chunk_cap_);
    auto chunk_begin = [&](std::size_t c) { return lv.n * c / chunks; };
    const std::vector<std::vector<std::size_t>> counted = partition(lv, shift, bits, chunks);

    // 2. Sort: runs of consecutive buckets of about an item's size that fit a device; a bucket
    // that does not is the next level's input.
    const std::vector<std::uint64_t> bucket_begin = bucket_begins(counted, m);
    // Bucket run [first, last)'s pieces in `parted`: one per chunk (more where a chunk's run
    // crosses a piece of `parted`).
    auto pieces_of = [&](std::uint32_t first, std::uint32_t last) {
      std::vector<Piece> pieces;
      for (std::size_t c = 0; c < chunks; ++c)
        append_range(lv.parted, chunk_begin(c) + counted[c][first], counted[c][last] - counted[c][first], pieces);
      return pieces;
    };
    std::vector<Group> groups;
    std::vector<std::uint32_t> large;
    for (const mesh::BucketRun& r : mesh::bucket_runs(bucket_begin, items_for_size(lv.n, group_cap_), group_cap_)) {
      if (r.alone) {
        large.push_back(r.first);
        continue;
      }
      // One bucket shares this level's digit: only the bits below it are left.
      groups.push_back({pieces_of(r.first, r.last), offset(lv.out, bucket_begin[r.first]),
                        bucket_begin[r.last] - bucket_begin[r.first], r.last - r.first == 1 ? shift : lv.end_bit});
    }
    sort_groups(groups, lv.depth);
    // Deeper levels split their input in place: its pieces in `parted` are the next level's
    // input and `parted` both.
    for (std::uint32_t p : large) {
      std::vector<Piece> pieces = pieces_of(p, p + 1);
      run(Level{pieces, pieces, offset(lv.out, bucket_begin[p]), bucket_begin[p + 1] - bucket_begin[p], shift,
                lv.depth + 1});
    }
  }

 private:
  // The level's digit (its bits and shift), recorded in the phases with the way it goes (`how`).
  std::pair<int, int> level_digit(const Level& lv, const char* how) {
    const int bits = std::min(digit_bits, lv.end_bit - plan_.begin_bit);
    if (phases()) {
      phases()->passes = std::max(phases()->passes, lv.depth + 1);
      phases()->digit_bits = bits;
      phases()->plan_text += "level " + std::to_string(lv.depth) + ": " + std::to_string(lv.n) + " elements " + how + "\n";
    }
    return {bits, lv.end_bit - bits};
  }
  // Where each of the m buckets begins, from every chunk's split offsets.
  static std::vector<std::uint64_t> bucket_begins(const std::vector<std::vector<std::size_t>>& counted, std::uint32_t m) {
    std::vector<std::uint64_t> begin(m + 1, 0);
    for (std::uint32_t p = 0; p < m; ++p) {
      std::uint64_t total = 0;
      for (const auto& chunk : counted) total += chunk[p + 1] - chunk[p];
      begin[p + 1] = begin[p] + total;
    }
    return begin;
  }

  // A level resident on device 0 (the file's comment): pass 1 splits each chunk into `resident`,
  // pass 2 sorts groups gathered there and brings every bucket down to lv.out; buckets too large to
  // sort there are the next levels' inputs, in place in lv.out.
  void run_resident(const Level& lv) {
    const auto [bits, shift] = level_digit(lv, "resident on the device");
    const std::uint32_t m = std::uint32_t(1) << bits;
    const std::size_t spare = budget_ - std::size_t(lv.n) * elem_bytes_;
    const std::size_t chunk_cap = std::min(spare / (2 * elem_bytes_), std::size_t(1) << 31);
    const std::size_t group_cap = std::size_t(double(spare) / (group_bytes_per_byte * double(elem_bytes_)));
    const std::size_t chunks = items_for(lv.n, chunk_cap);
    auto chunk_begin = [&](std::size_t c) { return lv.n * c / chunks; };
    const std::vector<std::uint32_t> remap = digit_order(m, plan_.order);
    const DigitSource source{plan_.type, {shift, bits}};
    std::vector<std::vector<std::size_t>> counted(chunks, std::vector<std::size_t>(m + 1, 0));
    const std::shared_ptr<std::byte> resident_keys =
        backend_->allocate(0, std::size_t(lv.n) * key_bytes_, "sort: an out-of-core level's keys on the device");
    const std::shared_ptr<std::byte> resident_values =
        plan_.value_bytes ? backend_->allocate(0, std::size_t(lv.n) * plan_.value_bytes,
                                               "sort: an out-of-core level's values on the device")
                          : nullptr;

    // 1. Partition: the uploads on the device's own lane (the other lanes are idle: this pass sends
    // nothing down), each chunk split behind its upload on the split stream.
    auto started = now();
    allocate_slots(std::size_t((lv.n + chunks - 1) / chunks), false, "sort: an out-of-core chunk", 1);
    pass(
        "partitioning", lv.depth, chunks,
        [&](int i, int s, std::size_t c) {
          const std::uint64_t from = chunk_begin(c), count = chunk_begin(c + 1) - from;
          upload_and_split(i, s, range_of(lv.input, from, count), count, Lane::device, digit_split(source, remap),
                           resident_keys.get() + from * key_bytes_,
                           plan_.value_bytes ? resident_values.get() + from * plan_.value_bytes : nullptr,
                           counted[c].data());
        },
        [&](int i, int s, std::size_t) { backend_->finish_split(i, s); }, 1);
    if (phases()) {
      phases()->partition_ms += ms_since(started);
      phases()->out_of_core_chunks += chunks;
    }

    // 2. Sort: runs of buckets of about an item's size gathered on the device; a bucket larger
    // than a group comes down unsorted.
    const std::vector<std::uint64_t> bucket_begin = bucket_begins(counted, m);
    const std::vector<mesh::BucketRun> runs = mesh::bucket_runs(bucket_begin, items_for_size(lv.n, group_cap), group_cap);
    std::uint64_t largest = 0;
    for (const mesh::BucketRun& r : runs)
      if (!r.alone) largest = std::max(largest, bucket_begin[r.last] - bucket_begin[r.first]);
    // Run r's pieces in the resident arrays, in elements: one per chunk.
    auto pieces_of = [&](const mesh::BucketRun& r) {
      std::vector<mesh::Chunk> pieces;
      std::uint64_t to = 0;
      for (std::size_t c = 0; c < chunks; ++c) {
        const std::uint64_t count = counted[c][r.last] - counted[c][r.first];
        if (count) pieces.push_back({chunk_begin(c) + counted[c][r.first], to, count});
        to += count;
      }
      return pieces;
    };
    started = now();
    std::size_t sorted_runs = 0;
    copy_lanes_at_once(1);  // only the down lane copies in this pass
    allocate_slots(std::size_t(largest), false, "sort: an out-of-core group", 1);
    pass(
        "sorting", lv.depth, runs.size(),
        [&](int i, int s, std::size_t r) {
          if (runs[r].alone) return;
          Slot& slot = slots_[std::size_t(i)][std::size_t(s)];
          const std::vector<mesh::Chunk> pieces = pieces_of(runs[r]);
          backend_->copy_chunks(i, resident_keys.get(), slot.keys.get(), pieces, key_bytes_);
          if (plan_.value_bytes)
            backend_->copy_chunks(i, resident_values.get(), slot.values.get(), pieces, plan_.value_bytes);
          SortPlan sub = plan_;
          sub.n = bucket_begin[runs[r].last] - bucket_begin[runs[r].first];
          sub.end_bit = runs[r].last - runs[r].first == 1 ? shift : lv.end_bit;
          if (sub.n > 1 && sub.begin_bit < sub.end_bit) backend_->sort_local(i, sub, slot.keys.get(), slot.values.get());
          slot.done = backend_->mark(i, Lane::device);
        },
        [&](int i, int s, std::size_t r) {
          Slot& slot = slots_[std::size_t(i)][std::size_t(s)];
          const std::uint64_t at = bucket_begin[runs[r].first];
          if (!runs[r].alone) {
            download(i, slot.done, slot.keys.get(), slot.values.get(),
                     {Piece{offset(lv.out, at), bucket_begin[runs[r].last] - at}});
            slot.done = nullptr;
            return;
          }
          // Unsorted, piece by piece (the splits are done: pass 1 waited for each).
          std::uint64_t to = at;
          for (const mesh::Chunk& piece : pieces_of(runs[r])) {
            download(i, nullptr, resident_keys.get() + piece.from * key_bytes_,
                     plan_.value_bytes ? resident_values.get() + piece.from * plan_.value_bytes : nullptr,
                     {Piece{offset(lv.out, to), piece.count}});
            to += piece.count;
          }
        },
        1);
    for (const mesh::BucketRun& r : runs) sorted_runs += r.alone ? 0 : 1;
    if (phases()) {
      phases()->local_sort_ms += ms_since(started);
      phases()->out_of_core_groups += sorted_runs;
    }
    // The device's arrays go back before the next levels take their own.
    backend_->synchronize(0, Lane::device);
    for (const mesh::BucketRun& r : runs) {
      if (!r.alone) continue;
      const std::uint64_t at = bucket_begin[r.first], count = bucket_begin[r.last] - at;
      const std::vector<Piece> here{Piece{offset(lv.out, at), count}};
      run(Level{here, {}, offset(lv.out, at), count, shift, lv.depth + 1});
    }
  }

  // One item's device buffers: a chunk and its split (pass 1) or a group (pass 2), and the mark of
  // the device work the item's download waits for.
  struct Slot {
    std::shared_ptr<std::byte> keys, values, split_keys, split_values;
    mesh::LaneMark done;
  };
  using Step = std::function<void(int local, int slot, std::size_t item)>;

  SortPhases* phases() const { return options_.phases; }
  static std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }
  static double ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(now() - t).count();
  }

  // Items of n elements for a pass: enough for every device to overlap its transfers, each at
  // most `cap`.
  std::size_t items_for(std::uint64_t n, std::size_t cap) const {
    const std::uint64_t size = items_for_size(n, cap);
    return std::size_t((n + size - 1) / size);
  }
  std::uint64_t items_for_size(std::uint64_t n, std::size_t cap) const {
    const std::uint64_t pipelined = (n + items_per_device * std::size_t(locals_) - 1) / (items_per_device * std::size_t(locals_));
    return std::max<std::uint64_t>(1, std::min<std::uint64_t>(cap, std::max<std::uint64_t>(pipelined, min_item)));
  }

  HostArrays offset(const HostArrays& a, std::uint64_t elements) const {
    return {a.keys + elements * key_bytes_, a.values ? a.values + elements * plan_.value_bytes : nullptr};
  }

  // Appends the pieces that hold elements [from, from + count) of `pieces` to `into`.
  void append_range(const std::vector<Piece>& pieces, std::uint64_t from, std::uint64_t count,
                    std::vector<Piece>& into) const {
    std::uint64_t at = 0;
    for (const Piece& p : pieces) {
      if (count == 0) return;
      if (from < at + p.count) {
        const std::uint64_t skip = from - at, take = std::min(count, p.count - skip);
        into.push_back({offset(p.at, skip), take});
        from += take;
        count -= take;
      }
      at += p.count;
    }
  }
  std::vector<Piece> range_of(const std::vector<Piece>& pieces, std::uint64_t from, std::uint64_t count) const {
    std::vector<Piece> into;
    append_range(pieces, from, count, into);
    return into;
  }

  // The pieces, in order, to `to` (host copies).
  void gather(const std::vector<Piece>& pieces, HostArrays to) const {
    for (const Piece& p : pieces) {
      if (p.at.keys != to.keys) {
        std::memmove(to.keys, p.at.keys, p.count * key_bytes_);
        if (plan_.value_bytes) std::memmove(to.values, p.at.values, p.count * plan_.value_bytes);
      }
      to = offset(to, p.count);
    }
  }

  // The pieces up to device i's buffers (keys, values), on `lane`.
  void upload(int i, const std::vector<Piece>& pieces, std::byte* keys, std::byte* values, Lane lane = Lane::up) {
    for (const Piece& p : pieces) {
      backend_->upload(i, p.at.keys, keys, p.count * key_bytes_, lane);
      keys += p.count * key_bytes_;
      if (plan_.value_bytes) {
        backend_->upload(i, p.at.values, values, p.count * plan_.value_bytes, lane);
        values += p.count * plan_.value_bytes;
      }
    }
  }
  // Device i's buffers down to the pieces, on the down lane, after the device's work `after`;
  // returns once they are there.
  void download(int i, const mesh::LaneMark& after, const std::byte* keys, const std::byte* values,
                const std::vector<Piece>& pieces) {
    backend_->wait_for(i, Lane::down, after);
    for (const Piece& p : pieces) {
      backend_->download(i, keys, p.at.keys, p.count * key_bytes_, Lane::down);
      keys += p.count * key_bytes_;
      if (plan_.value_bytes) {
        backend_->download(i, values, p.at.values, p.count * plan_.value_bytes, Lane::down);
        values += p.count * plan_.value_bytes;
      }
    }
    backend_->synchronize(i, Lane::down);
  }

  void copy_lanes_at_once(int lanes) {
    for (int i = 0; i < locals_; ++i) backend_->copy_lanes_at_once(i, lanes);
  }

  // A chunk (its pieces, `count` elements) up into slot s of device i on `lane`, then `split`
  // queued from the slot into keys_out (values_out), its offsets written by finish_split(i, s).
  void upload_and_split(int i, int s, const std::vector<Piece>& chunk, std::uint64_t count, Lane lane,
                        mesh::LocalSplit split, std::byte* keys_out, std::byte* values_out, std::size_t* offsets) {
    const Slot& slot = slots_[std::size_t(i)][std::size_t(s)];
    upload(i, chunk, slot.keys.get(), slot.values.get(), lane);
    if (lane != Lane::device) backend_->wait_for(i, Lane::device, backend_->mark(i, lane));  // the split follows it
    split.args.n = count;
    split.args.keys_in = slot.keys.get();
    split.args.keys_out = keys_out;
    if (plan_.value_bytes) {
      split.args.values_in = slot.values.get();
      split.args.values_out = values_out;
      split.args.value_bytes = plan_.value_bytes;
    }
    split.args.offsets = offsets;
    backend_->start_split(i, s, split);
  }

  // Two slots on each of the first `devices` local devices (0: all) with buffers of `elements`
  // (and split buffers when `with_split`); the copy lanes wait for the allocations, which are
  // ordered on the device's own lane.
  void allocate_slots(std::size_t elements, bool with_split, const char* what, int devices = 0) {
    slots_.assign(std::size_t(locals_), {});
    for (int i = 0; i < (devices ? devices : locals_); ++i) {
      for (Slot& s : slots_[std::size_t(i)]) {
        s.keys = backend_->allocate(i, elements * key_bytes_, what);
        if (plan_.value_bytes) s.values = backend_->allocate(i, elements * plan_.value_bytes, what);
        if (with_split) {
          s.split_keys = backend_->allocate(i, elements * key_bytes_, what);
          if (plan_.value_bytes) s.split_values = backend_->allocate(i, elements * plan_.value_bytes, what);
        }
      }
      const mesh::LaneMark allocated = backend_->mark(i, Lane::device);
      backend_->wait_for(i, Lane::up, allocated);
      backend_->wait_for(i, Lane::down, allocated);
    }
  }
  // Waits for every lane of every device, then gives the slots back (also after an error: no
  // copy may still use them).
  void release_slots() {
    for (int i = 0; i < locals_; ++i)
      for (Lane lane : {Lane::up, Lane::device, Lane::down}) backend_->synchronize(i, lane);
    slots_.clear();
  }

  // Pass 1 of a level: every chunk up, split by the digit [shift, shift + bits), and back to its
  // place in lv.parted. Returns each chunk's bucket offsets.
  std::vector<std::vector<std::size_t>> partition(const Level& lv, int shift, int bits, std::size_t chunks) {
    const std::uint32_t m = std::uint32_t(1) << bits;
    const std::vector<std::uint32_t> remap = digit_order(m, plan_.order);
    const DigitSource source{plan_.type, {shift, bits}};
    auto chunk_begin = [&](std::size_t c) { return lv.n * c / chunks; };
    std::vector<std::vector<std::size_t>> counted(chunks, std::vector<std::size_t>(m + 1, 0));
    const auto started = now();
    copy_lanes_at_once(2);
    allocate_slots(std::size_t((lv.n + chunks - 1) / chunks), true, "sort: an out-of-core chunk");
    pass(
        "partitioning", lv.depth, chunks,
        [&](int i, int s, std::size_t c) {
          const std::uint64_t from = chunk_begin(c), count = chunk_begin(c + 1) - from;
          const Slot& slot = slots_[std::size_t(i)][std::size_t(s)];
          upload_and_split(i, s, range_of(lv.input, from, count), count, Lane::up, digit_split(source, remap),
                           slot.split_keys.get(), slot.split_values.get(), counted[c].data());
        },
        [&](int i, int s, std::size_t c) {
          const std::uint64_t from = chunk_begin(c), count = chunk_begin(c + 1) - from;
          backend_->finish_split(i, s);  // the split is done, its offsets in counted[c]
          const Slot& slot = slots_[std::size_t(i)][std::size_t(s)];
          download(i, nullptr, slot.split_keys.get(), slot.split_values.get(), range_of(lv.parted, from, count));
        });
    if (phases()) {
      phases()->partition_ms += ms_since(started);
      phases()->out_of_core_chunks += chunks;
    }
    return counted;
  }

  // Pass 2 of a level at `depth`: each group up, sorted on its bits, and down to its place.
  void sort_groups(const std::vector<Group>& groups, int depth) {
    if (groups.empty()) return;
    std::uint64_t largest = 0;
    for (const Group& g : groups) largest = std::max(largest, g.count);
    const auto started = now();
    copy_lanes_at_once(2);
    allocate_slots(std::size_t(largest), false, "sort: an out-of-core group");
    pass(
        "sorting", depth, groups.size(),
        [&](int i, int s, std::size_t g) {
          const Group& group = groups[g];
          Slot& slot = slots_[std::size_t(i)][std::size_t(s)];
          upload(i, group.pieces, slot.keys.get(), slot.values.get());
          backend_->wait_for(i, Lane::device, backend_->mark(i, Lane::up));
          SortPlan sub = plan_;
          sub.n = group.count;
          sub.end_bit = group.end_bit;
          if (sub.n > 1 && sub.begin_bit < sub.end_bit) backend_->sort_local(i, sub, slot.keys.get(), slot.values.get());
          slot.done = backend_->mark(i, Lane::device);
        },
        [&](int i, int s, std::size_t g) {
          const Group& group = groups[g];
          Slot& slot = slots_[std::size_t(i)][std::size_t(s)];
          download(i, slot.done, slot.keys.get(), slot.values.get(), {Piece{group.out, group.count}});
          slot.done = nullptr;
        });
    if (phases()) {
      phases()->local_sort_ms += ms_since(started);
      phases()->out_of_core_groups += groups.size();
    }
  }

  // Items [0, count) through the local devices, each taken by whichever device is free: up(i,
  // slot, item) queues the item's upload and its device work into one of device i's two slots,
  // down(i, slot, item) brings its result down and returns once it is there. Devices that take
  // concurrent calls run up and down on two host threads of their own, so that one item goes up
  // while the one before comes down; others run both in turn on one thread. The first error is
  // rethrown once every thread has stopped and every lane is idle; the slots are released. Each
  // item down is reported as progress of `step`. Only the first `devices` local devices take part.
  void pass(const char* step, int depth, std::size_t count, const Step& up, const Step& down, int devices = 0) {
    std::size_t reported = 0;
    auto report = [&] {
      if (!options_.progress) return;
      std::lock_guard lock(progress_mutex_);
      options_.progress(SortProgress{step, depth, ++reported, count});
    };
    std::atomic<std::size_t> next{0};
    std::exception_ptr failed;
    std::mutex failed_mutex;
    auto fail = [&] {
      std::lock_guard lock(failed_mutex);
      if (!failed) failed = std::current_exception();
      next = count;  // every device stops taking items
    };
    struct Handoff {
      std::mutex mutex;
      std::condition_variable changed;
      std::deque<std::pair<int, std::size_t>> queued;  // (slot, item) up and waiting to come down
      std::array<bool, 2> busy{false, false};
      bool up_done = false, stopped = false;
    };
    const int workers = int(std::min<std::size_t>(std::size_t(devices ? devices : locals_), count));
    if (!backend_->concurrent_local_calls()) {
      try {
        for (std::size_t item; (item = next.fetch_add(1)) < count;) {
          up(0, 0, item);
          down(0, 0, item);
          report();
        }
      } catch (...) {
        fail();
      }
    } else {
      std::vector<Handoff> handoffs(static_cast<std::size_t>(workers));
      auto up_thread = [&](int i) {
        Handoff& h = handoffs[std::size_t(i)];
        for (;;) {
          int s = 0;
          {
            std::unique_lock lock(h.mutex);
            h.changed.wait(lock, [&] { return h.stopped || !h.busy[0] || !h.busy[1]; });
            if (h.stopped) break;
            s = h.busy[0] ? 1 : 0;
          }
          const std::size_t item = next.fetch_add(1);
          if (item >= count) break;
          {
            std::lock_guard lock(h.mutex);
            h.busy[std::size_t(s)] = true;
          }
          try {
            up(i, s, item);
          } catch (...) {
            fail();
            break;
          }
          std::lock_guard lock(h.mutex);
          h.queued.emplace_back(s, item);
          h.changed.notify_all();
        }
        std::lock_guard lock(h.mutex);
        h.up_done = true;
        h.changed.notify_all();
      };
      auto down_thread = [&](int i) {
        Handoff& h = handoffs[std::size_t(i)];
        for (;;) {
          std::pair<int, std::size_t> taken;
          {
            std::unique_lock lock(h.mutex);
            h.changed.wait(lock, [&] { return h.stopped || h.up_done || !h.queued.empty(); });
            if (h.stopped || h.queued.empty()) break;
            taken = h.queued.front();
            h.queued.pop_front();
          }
          try {
            down(i, taken.first, taken.second);
            report();
          } catch (...) {
            fail();
            std::lock_guard lock(h.mutex);
            h.stopped = true;  // the up thread waits for no slot any more
            h.changed.notify_all();
            break;
          }
          std::lock_guard lock(h.mutex);
          h.busy[std::size_t(taken.first)] = false;
          h.changed.notify_all();
        }
      };
      std::vector<std::thread> threads;
      for (int i = 0; i < workers; ++i) {
        threads.emplace_back(up_thread, i);
        threads.emplace_back(down_thread, i);
      }
      for (auto& t : threads) t.join();
    }
    try {
      release_slots();
    } catch (...) {
      if (!failed) throw;
    }
    if (failed) std::rethrow_exception(failed);
  }

  SortPlan plan_;
  const SortOptions& options_;
  std::unique_ptr<mesh::DeviceBackend> backend_;
  int locals_;
  std::size_t key_bytes_, elem_bytes_;
  std::size_t budget_ = 0;                     // device memory per device
  std::size_t chunk_cap_ = 0, group_cap_ = 0;  // elements per chunk (pass 1) and per group (pass 2)
  std::vector<std::array<Slot, 2>> slots_;     // per local device
  std::mutex progress_mutex_;
};

}  // namespace

bool takes_out_of_core(Context& ctx, const SortPlan& plan, const SortOptions& options, const void* keys,
                       const void* values) {
  const MeshDevices local = ctx.local_mesh_devices();
  if (local.count != ctx.mesh_size() || plan.n < 2) return false;  // MPI: sort_shards decides (rank_out_of_core_wish)
  if (options.out_of_core == OutOfCoreMode::never) return false;
  // One CPU device sorts in host memory: there is no device to run out of.
  if (ctx.mesh_size() == 1 && ctx.mesh_backend(local.first) != Backend::cuda) return false;
  if (options.out_of_core == OutOfCoreMode::always) return true;
  auto backend = mesh::device_backend_for(ctx);
  // One GPU sorts large pinned host inputs resident on it where it holds them 1.25x over, the
  // default host plan, engine and float path asked (the mesh devices' sorts take the defaults):
  // each chunk is split as it lands and each group sorted while the one before comes down, where
  // the in-memory host sort splits and sorts after its whole upload (2e9 pinned u32 on one H100:
  // 296.7 against 330.3 ms, calls BJ and BK). Pageable input stays with the host sort, whose
  // staging copies were the faster there (2e9 u32: split plan 373.8 against 412.7 ms, 2^28: 52.4
  // against 63.0, call BK); on H200 machines with the four-slot ring the two trade places from run
  // to run at 2e9 and 2^29, and the host sort stays ahead at 2^28 (calls DD-DF, docs/design/sort.md).
  const double bytes = double(plan.n) * double(size_of(plan.type) + plan.value_bytes);
  if (local.count == 1 && plan.host_plan == HostStagingPlan::automatic && options.engine == SortEngine::automatic &&
      options.float_path == FloatSortPath::automatic && plan.n >= resident_min && backend->reaches_directly(keys) &&
      (!values || backend->reaches_directly(values)) &&
      bytes * resident_bytes_per_byte <= double(budget_of(*backend, 0, options)))
    return true;
  const double per_device = double(plan.n) / double(local.count) * double(size_of(plan.type) + plan.value_bytes) *
                            (local.count == 1 ? one_device_bytes_per_byte : mesh_bytes_per_byte);
  for (int i = 0; i < local.count; ++i)
    if (per_device > double(budget_of(*backend, i, options))) return true;
  return false;
}

OutOfCoreWish rank_out_of_core_wish(Context& ctx, const SortPlan& plan, const SortOptions& options) {
  if (options.out_of_core == OutOfCoreMode::never) return OutOfCoreWish::never;
  if (options.out_of_core == OutOfCoreMode::always) return OutOfCoreWish::out_of_core;
  const MeshDevices local = ctx.local_mesh_devices();
  if (local.count != 1 || ctx.mesh_backend(local.first) != Backend::cuda || plan.n < 2) return OutOfCoreWish::in_memory;
  auto backend = mesh::device_backend_for(ctx);
  const double needed = double(plan.n) * double(size_of(plan.type) + plan.value_bytes) * mesh_bytes_per_byte;
  return needed > double(budget_of(*backend, 0, options)) ? OutOfCoreWish::out_of_core : OutOfCoreWish::in_memory;
}

namespace {

void sort_with(OutOfCoreSort& sort, const SortPlan& plan, void* keys, void* values, void* tmp_keys, void* tmp_values) {
  const HostArrays data{static_cast<std::byte*>(keys), static_cast<std::byte*>(values)};
  const HostArrays tmp{static_cast<std::byte*>(tmp_keys), static_cast<std::byte*>(tmp_values)};
  std::vector<Piece> parted;
  if (tmp.keys) parted.push_back({tmp, plan.n});
  sort.run(Level{{Piece{data, plan.n}}, parted, data, plan.n, plan.end_bit, 0});
}

}  // namespace

void sort_out_of_core_with(Context& ctx, const SortPlan& plan, void* keys, void* values, void* tmp_keys,
                           void* tmp_values, const SortOptions& options) {
  OutOfCoreSort sort(ctx, plan, options);
  sort_with(sort, plan, keys, values, tmp_keys, tmp_values);
}

// The extra host array is taken (or refused, before anything moves) only when the top level does
// not stay on a device.
void sort_out_of_core(Context& ctx, const SortPlan& plan, void* keys, void* values, const SortOptions& options) {
  OutOfCoreSort sort(ctx, plan, options);
  ExtraHostArray tmp;
  if (sort.needs_extra_host_array(plan.n))
    tmp = extra_host_array(plan, options, "sort: the out-of-core sort's second host array", ctx.cpu_threads());
  if (options.phases) {
    *options.phases = SortPhases{};
    options.phases->out_of_core = true;
  }
  sort_with(sort, plan, keys, values, tmp.keys, tmp.values);
}

}  // namespace radixmesh::detail
