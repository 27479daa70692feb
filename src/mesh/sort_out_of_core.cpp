// The out-of-core sort: MSD radix partitioning through the devices, level by level.
//
// One level sorts n host-resident elements from `in` into `out`, with `tmp` (n more) as scratch:
//  1. count: every chunk of `in` goes up to a device, whose split counts its keys by the level's
//     digit (8 bits of the encoding, below the bits fixed by the levels above);
//  2. partition: every chunk goes up again, is split by the digit on the device, comes back to its
//     own place in `in` (free once it is up), and host threads copy each bucket's piece to its
//     final place in `tmp`, which then holds the keys bucket-major, stable (chunk order, then
//     order within the chunk);
//  3. sort: runs of consecutive buckets that fit a device go up, are sorted on the bits left, and
//     come down to their place in `out`. A bucket too large for a device is the next level's input:
//     in = its range of tmp, out = its range of out, tmp = its range of in (free since step 2), so
//     the levels never need more than the one extra array. A bucket with no bits left holds equal
//     keys, already in stable order.
// Chunks and groups are handed to the local devices as each becomes free (one host thread per
// device where the devices take concurrent calls), so several GPUs share the rounds.
#include "core/backends.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mesh/device_backend.hpp"
#include "mesh/digit_source.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::detail {
namespace {

constexpr int digit_bits = 8;
// Device memory per element of the in-memory sorts, of the element's bytes: one device's sort
// holds its input and a second buffer plus its temp; the mesh sort its input, the split copy and
// the received keys.
constexpr double one_device_bytes_per_byte = 2.2, mesh_bytes_per_byte = 3.2;
// Out of core, a device holds a chunk and its split (steps 1 and 2), or a group and its sort's
// second buffer and temp (step 3).
constexpr double chunk_bytes_per_byte = 2.1, group_bytes_per_byte = 2.4;

std::size_t budget_of(mesh::DeviceBackend& backend, int local, const SortOptions& options) {
  const std::size_t free = backend.memory_budget(local);
  return options.device_memory_limit ? std::min(free, options.device_memory_limit) : free;
}

struct HostArrays {
  std::byte* keys = nullptr;
  std::byte* values = nullptr;
};

struct Level {
  HostArrays in, out, tmp;
  std::size_t n = 0;
  int end_bit = 0;  // the bits still to sort are [plan.begin_bit, end_bit)
  int depth = 0;
};

class OutOfCoreSort {
 public:
  OutOfCoreSort(Context& ctx, const SortPlan& plan, const SortOptions& options)
      : plan_(plan), options_(options), backend_(mesh::device_backend_for(ctx)),
        locals_(ctx.local_mesh_devices().count), key_bytes_(size_of(plan.type)),
        elem_bytes_(key_bytes_ + plan.value_bytes),
        host_threads_(std::max(1u, ctx.cpu_threads() / unsigned(locals_))) {
    std::size_t budget = SIZE_MAX;
    for (int i = 0; i < locals_; ++i) budget = std::min(budget, budget_of(*backend_, i, options));
    chunk_cap_ = std::size_t(double(budget) / (chunk_bytes_per_byte * double(elem_bytes_)));
    group_cap_ = std::size_t(double(budget) / (group_bytes_per_byte * double(elem_bytes_)));
    chunk_cap_ = std::min(chunk_cap_, std::size_t(1) << 31);  // a GPU split takes below 2^32 - 2^16 keys
    require(chunk_cap_ >= 1024 && group_cap_ >= 1024,
            "sort: " + std::to_string(budget) + " bytes of device memory per device for an out-of-core sort",
            "free device memory or raise SortOptions::device_memory_limit (at least " +
                std::to_string(std::size_t(2.4 * 1024 * double(elem_bytes_))) + " bytes)");
  }

  void run(const Level& lv) {
    if (lv.n == 0) return;
    const int begin_bit = plan_.begin_bit;
    if (lv.end_bit <= begin_bit) {  // equal keys in the bits sorted: already in stable order
      copy_host(lv.in, lv.out, 0, lv.n);
      return;
    }
    if (lv.n <= group_cap_) {  // what is left fits one device
      const auto sorting = now();
      for_each_item(1, [&](int i, std::size_t) { sort_group(i, lv.in, lv.out, 0, lv.n, lv.end_bit); });
      if (phases()) {
        phases()->local_sort_ms += ms_since(sorting);
        phases()->out_of_core_groups += 1;
      }
      return;
    }
    const int bits = std::min(digit_bits, lv.end_bit - begin_bit), shift = lv.end_bit - bits;
    const std::uint32_t m = std::uint32_t(1) << bits;
    if (phases()) {
      phases()->passes = std::max(phases()->passes, lv.depth + 1);
      phases()->digit_bits = bits;
    }
    const std::vector<std::uint32_t> remap = digit_order(m, plan_.order);
    const DigitSource source{plan_.type, {shift, bits}};
    const std::size_t chunks = (lv.n + chunk_cap_ - 1) / chunk_cap_;
    auto chunk_begin = [&](std::size_t c) { return lv.n * c / chunks; };
    std::vector<std::vector<std::size_t>> counted(chunks, std::vector<std::size_t>(m + 1, 0));

    // The split of one chunk on device i, already uploaded to its buffers (counts only without keys_out).
    auto split_chunk = [&](int i, std::size_t count, std::byte* keys_out, std::byte* values_out,
                           std::size_t* offsets) {
      mesh::LocalSplit split = digit_split(source, remap);
      split.args.n = count;
      split.args.keys_in = chunk_[std::size_t(i)].keys.get();
      split.args.keys_out = keys_out;
      if (keys_out && plan_.value_bytes) {
        split.args.values_in = chunk_[std::size_t(i)].values.get();
        split.args.values_out = values_out;
        split.args.value_bytes = plan_.value_bytes;
      }
      split.args.offsets = offsets;
      backend_->start_split(i, 0, split);
      backend_->finish_split(i, 0);
      backend_->after_split(i, 0);
    };
    auto upload_chunk = [&](int i, std::size_t c, bool with_values) {
      const std::size_t from = chunk_begin(c), count = chunk_begin(c + 1) - from;
      backend_->upload(i, lv.in.keys + from * key_bytes_, chunk_[std::size_t(i)].keys.get(), count * key_bytes_);
      if (with_values && plan_.value_bytes)
        backend_->upload(i, lv.in.values + from * plan_.value_bytes, chunk_[std::size_t(i)].values.get(),
                         count * plan_.value_bytes);
      return count;
    };

    const auto started = now();
    allocate_chunks();
    // 1. Count.
    for_each_item(chunks, [&](int i, std::size_t c) {
      split_chunk(i, upload_chunk(i, c, false), nullptr, nullptr, counted[c].data());
      report("counting", lv, c + 1, chunks);
    });
    // Where each chunk's piece of each bucket goes in tmp: bucket-major, then chunk order.
    std::vector<std::uint64_t> bucket_begin(m + 1, 0);
    for (std::uint32_t p = 0; p < m; ++p) {
      std::uint64_t total = 0;
      for (std::size_t c = 0; c < chunks; ++c) total += counted[c][p + 1] - counted[c][p];
      bucket_begin[p + 1] = bucket_begin[p] + total;
    }
    std::vector<std::vector<std::uint64_t>> place(chunks, std::vector<std::uint64_t>(m));
    for (std::uint32_t p = 0; p < m; ++p) {
      std::uint64_t at = bucket_begin[p];
      for (std::size_t c = 0; c < chunks; ++c) {
        place[c][p] = at;
        at += counted[c][p + 1] - counted[c][p];
      }
    }
    // 2. Partition. Once a chunk is on its device, its place in `in` is free (nothing reads `in`
    // after this step): the split chunk comes back there in one transfer, and host threads copy
    // its buckets to their places in tmp (hundreds of small transfers measured 1.6 s against
    // 0.3 s of transfer time for 2e9 u32 keys on one H200).
    for_each_item(chunks, [&](int i, std::size_t c) {
      const std::size_t count = upload_chunk(i, c, true);
      Buffers& b = chunk_[std::size_t(i)];
      std::vector<std::size_t> offsets(m + 1, 0);
      split_chunk(i, count, b.split_keys.get(), b.split_values.get(), offsets.data());
      require(offsets == counted[c], "sort: a chunk split differently the second time",
              "report this as a bug in radixmesh");
      const HostArrays back = offset(lv.in, chunk_begin(c));
      backend_->download(i, b.split_keys.get(), back.keys, count * key_bytes_);
      if (plan_.value_bytes) backend_->download(i, b.split_values.get(), back.values, count * plan_.value_bytes);
      backend_->synchronize(i);  // the split is home, and the device's buffers take its next chunk
      scatter(back, lv.tmp, offsets, place[c]);
      report("partitioning", lv, c + 1, chunks);
    });
    release_chunks();
    if (phases()) {
      phases()->partition_ms += ms_since(started);
      phases()->out_of_core_chunks += chunks;
    }

    // 3. Sort: runs of consecutive buckets that fit a device; a bucket that does not is the next
    // level's input.
    struct Group {
      std::uint32_t first, last;  // buckets [first, last)
    };
    std::vector<Group> groups;
    std::vector<std::uint32_t> large;
    for (std::uint32_t p = 0; p < m;) {
      if (bucket_begin[p + 1] - bucket_begin[p] > group_cap_) {
        large.push_back(p++);
        continue;
      }
      std::uint32_t q = p;
      while (q < m && bucket_begin[q + 1] - bucket_begin[p] <= group_cap_) ++q;
      if (bucket_begin[q] > bucket_begin[p]) groups.push_back({p, q});
      p = q;
    }
    const auto sorting = now();
    for_each_item(groups.size(), [&](int i, std::size_t g) {
      const Group& group = groups[g];
      const std::uint64_t from = bucket_begin[group.first], count = bucket_begin[group.last] - from;
      // One bucket shares this level's digit: only the bits below it are left.
      sort_group(i, lv.tmp, lv.out, from, count, group.last - group.first == 1 ? shift : lv.end_bit);
      report("sorting", lv, g + 1, groups.size());
    });
    if (phases()) {
      phases()->local_sort_ms += ms_since(sorting);
      phases()->out_of_core_groups += groups.size();
    }
    for (std::uint32_t p : large) {
      const std::uint64_t from = bucket_begin[p], count = bucket_begin[p + 1] - from;
      run(Level{offset(lv.tmp, from), offset(lv.out, from), offset(lv.in, from), count, shift, lv.depth + 1});
    }
  }

 private:
  struct Buffers {
    std::shared_ptr<std::byte> keys, values, split_keys, split_values;
  };

  SortPhases* phases() const { return options_.phases; }
  static std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }
  static double ms_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(now() - t).count();
  }

  HostArrays offset(const HostArrays& a, std::uint64_t elements) const {
    return {a.keys + elements * key_bytes_, a.values ? a.values + elements * plan_.value_bytes : nullptr};
  }

  void copy_host(const HostArrays& from, const HostArrays& to, std::uint64_t at, std::uint64_t count) const {
    if (from.keys == to.keys) return;
    std::memcpy(to.keys + at * key_bytes_, from.keys + at * key_bytes_, count * key_bytes_);
    if (plan_.value_bytes)
      std::memcpy(to.values + at * plan_.value_bytes, from.values + at * plan_.value_bytes, count * plan_.value_bytes);
  }

  // Bucket p of a split chunk at `from` (offsets[p] to offsets[p + 1]) to `to` at places[p], by
  // host threads (this device's share of the host's threads), each taking a run of buckets.
  void scatter(const HostArrays& from, const HostArrays& to, const std::vector<std::size_t>& offsets,
               const std::vector<std::uint64_t>& places) const {
    const std::size_t m = places.size(), total = offsets[m];
    const unsigned threads = unsigned(std::min<std::size_t>(host_threads_, std::max<std::size_t>(1, total >> 16)));
    auto copy_buckets = [&](std::size_t first, std::size_t last) {
      for (std::size_t p = first; p < last; ++p) {
        const std::size_t count = offsets[p + 1] - offsets[p];
        if (count == 0) continue;
        std::memcpy(to.keys + places[p] * key_bytes_, from.keys + offsets[p] * key_bytes_, count * key_bytes_);
        if (plan_.value_bytes)
          std::memcpy(to.values + places[p] * plan_.value_bytes, from.values + offsets[p] * plan_.value_bytes,
                      count * plan_.value_bytes);
      }
    };
    if (threads <= 1) return copy_buckets(0, m);
    // Runs of buckets of about equal bytes, one per thread.
    std::vector<std::thread> pool;
    std::size_t first = 0;
    for (unsigned t = 0; t < threads && first < m; ++t) {
      const std::size_t goal = total * (t + 1) / threads;
      std::size_t last = first;
      while (last < m && (offsets[last + 1] <= goal || last == first)) ++last;
      if (t + 1 == threads) last = m;
      pool.emplace_back(copy_buckets, first, last);
      first = last;
    }
    for (auto& th : pool) th.join();
  }

  void allocate_chunks() {
    chunk_.assign(std::size_t(locals_), {});
    for (int i = 0; i < locals_; ++i) {
      Buffers& b = chunk_[std::size_t(i)];
      b.keys = backend_->allocate(i, chunk_cap_ * key_bytes_, "sort: an out-of-core chunk");
      b.split_keys = backend_->allocate(i, chunk_cap_ * key_bytes_, "sort: an out-of-core chunk's split");
      if (plan_.value_bytes) {
        b.values = backend_->allocate(i, chunk_cap_ * plan_.value_bytes, "sort: an out-of-core chunk's values");
        b.split_values = backend_->allocate(i, chunk_cap_ * plan_.value_bytes, "sort: an out-of-core chunk's split values");
      }
    }
  }
  void release_chunks() {
    for (int i = 0; i < locals_; ++i) backend_->synchronize(i);
    chunk_.clear();
  }

  // Elements [at, at + count) of `from` up to device i, sorted on bits [begin_bit, end_bit), and
  // down to the same range of `to`.
  void sort_group(int i, const HostArrays& from, const HostArrays& to, std::uint64_t at, std::uint64_t count,
                  int end_bit) {
    auto keys = backend_->allocate(i, count * key_bytes_, "sort: an out-of-core group");
    std::shared_ptr<std::byte> values;
    backend_->upload(i, from.keys + at * key_bytes_, keys.get(), count * key_bytes_);
    if (plan_.value_bytes) {
      values = backend_->allocate(i, count * plan_.value_bytes, "sort: an out-of-core group's values");
      backend_->upload(i, from.values + at * plan_.value_bytes, values.get(), count * plan_.value_bytes);
    }
    SortPlan group = plan_;
    group.n = count;
    group.end_bit = end_bit;
    if (count > 1 && group.begin_bit < group.end_bit) backend_->sort_local(i, group, keys.get(), values.get());
    backend_->download(i, keys.get(), to.keys + at * key_bytes_, count * key_bytes_);
    if (plan_.value_bytes) backend_->download(i, values.get(), to.values + at * plan_.value_bytes, count * plan_.value_bytes);
    backend_->synchronize(i);
  }

  // job(local, item) for items [0, count): each local device takes the next item when it is free,
  // from a host thread of its own where the devices take concurrent calls. The first error is
  // rethrown once every device has stopped.
  void for_each_item(std::size_t count, const std::function<void(int, std::size_t)>& job) {
    std::atomic<std::size_t> next{0};
    std::exception_ptr failed;
    std::mutex failed_mutex;
    auto worker = [&](int i) {
      try {
        for (std::size_t item; (item = next.fetch_add(1)) < count;) job(i, item);
      } catch (...) {
        std::lock_guard lock(failed_mutex);
        if (!failed) failed = std::current_exception();
        next = count;  // the other devices stop after their current item
      }
    };
    const int workers = int(std::min<std::size_t>(std::size_t(locals_), count));
    if (workers > 1 && backend_->concurrent_local_calls()) {
      std::vector<std::thread> threads;
      for (int i = 0; i < workers; ++i) threads.emplace_back(worker, i);
      for (auto& t : threads) t.join();
    } else {
      worker(0);
    }
    if (failed) std::rethrow_exception(failed);
  }

  void report(const char* step, const Level& lv, std::size_t done, std::size_t total) {
    if (!options_.progress) return;
    std::lock_guard lock(progress_mutex_);
    options_.progress(SortProgress{step, lv.depth, done, total});
  }

  SortPlan plan_;
  const SortOptions& options_;
  std::unique_ptr<mesh::DeviceBackend> backend_;
  int locals_;
  std::size_t key_bytes_, elem_bytes_;
  unsigned host_threads_;  // host threads per device for its copies between host arrays
  std::size_t chunk_cap_ = 0, group_cap_ = 0;  // elements per chunk (steps 1, 2) and per group (step 3)
  std::vector<Buffers> chunk_;
  std::mutex progress_mutex_;
};

}  // namespace

bool takes_out_of_core(Context& ctx, const SortPlan& plan, const SortOptions& options) {
  const MeshDevices local = ctx.local_mesh_devices();
  if (local.count != ctx.mesh_size() || plan.n < 2) return false;  // MPI: sort_shards decides (rank_out_of_core_wish)
  if (options.out_of_core == OutOfCoreMode::never) return false;
  // One CPU device sorts in host memory: there is no device to run out of.
  if (ctx.mesh_size() == 1 && ctx.mesh_backend(local.first) != Backend::cuda) return false;
  if (options.out_of_core == OutOfCoreMode::always) return true;
  auto backend = mesh::device_backend_for(ctx);
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

void sort_out_of_core_with(Context& ctx, const SortPlan& plan, void* keys, void* values, void* tmp_keys,
                           void* tmp_values, const SortOptions& options) {
  OutOfCoreSort sort(ctx, plan, options);
  HostArrays data{static_cast<std::byte*>(keys), static_cast<std::byte*>(values)};
  HostArrays tmp{static_cast<std::byte*>(tmp_keys), static_cast<std::byte*>(tmp_values)};
  sort.run(Level{data, data, tmp, plan.n, plan.end_bit, 0});
}

void sort_out_of_core(Context& ctx, const SortPlan& plan, void* keys, void* values, const SortOptions& options) {
  const std::size_t elem_bytes = size_of(plan.type) + plan.value_bytes;
  require_host_memory_within(plan.n * elem_bytes, options.host_memory_limit,
                             "sort: the out-of-core sort's second host array");
  std::unique_ptr<std::byte[]> tmp_keys(new std::byte[plan.n * size_of(plan.type)]);
  std::unique_ptr<std::byte[]> tmp_values(plan.value_bytes ? new std::byte[plan.n * plan.value_bytes] : nullptr);
  if (options.phases) {
    *options.phases = SortPhases{};
    options.phases->out_of_core = true;
  }
  sort_out_of_core_with(ctx, plan, keys, values, tmp_keys.get(), tmp_values.get(), options);
}

}  // namespace radixmesh::detail
