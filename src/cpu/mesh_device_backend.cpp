// The CPU mesh device: host memory, the host multisplit and sort, memcpy.
#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "core/backends.hpp"
#include "core/topk_plan.hpp"
#include "mesh/device_backend.hpp"
#include "mesh/sorted_runs.hpp"
#include "radixmesh/error.hpp"

namespace radixmesh::mesh {
namespace {

// The user's bucket function followed by the remap table; ids >= m (the function's) go to
// `out_of_range`: past every bucket in the checked mode, so that the split reports them.
struct RemappedSource {
  detail::BucketSource inner;
  const std::uint32_t* remap;
  std::uint32_t m, out_of_range;
  static void ids(const void* self, const void* keys, std::size_t begin, std::size_t count, std::uint32_t* out) {
    const auto& s = *static_cast<const RemappedSource*>(self);
    s.inner.ids(s.inner.functor, keys, begin, count, out);
    for (std::size_t i = 0; i < count; ++i) out[i] = out[i] < s.m ? s.remap[out[i]] : s.out_of_range;
  }
};

template <class K> std::vector<Run<K>> host_runs(std::span<const SortedRun> runs) {
  std::vector<Run<K>> out;
  for (const SortedRun& r : runs) out.push_back({static_cast<const K*>(r.keys), static_cast<const std::byte*>(r.values), r.n});
  return out;
}

class CpuDeviceBackend final : public DeviceBackend {
 public:
  explicit CpuDeviceBackend(unsigned threads) : threads_(threads) {}
  comm::Location location(int) const override { return {}; }
  std::size_t memory_budget(int) const override { return SIZE_MAX; }
  std::shared_ptr<std::byte> allocate(int, std::size_t bytes, const char* what) override {
    require_host_memory(bytes, what);
    return std::shared_ptr<std::byte>(new std::byte[bytes ? bytes : 1], std::default_delete<std::byte[]>());
  }
  void start_split(int local, int ticket, const LocalSplit& split) override {
    const std::uint32_t m = split.ids();
    RemappedSource source{split.source, split.remap, m, split.args.checked ? ~0u : split.remap[m - 1]};
    detail::BadBucket bad = detail::cpu_multisplit(split.args, {&source, &RemappedSource::ids}, threads_);
    if (bad.found())  // the function's own id, not the remapped one
      split.source.ids(split.source.functor, split.args.keys_in, bad.index, 1, &bad.id);
    finished_[{local, ticket}] = bad;
  }
  detail::BadBucket finish_split(int local, int ticket) override {
    const auto it = finished_.find({local, ticket});
    require(it != finished_.end(), "finish_split on mesh device " + std::to_string(local) + " without start_split",
            "start the split first (a bug in radixmesh)");
    const detail::BadBucket bad = it->second;
    finished_.erase(it);
    return bad;
  }
  void after_split(int, int) override {}
  void synchronize(int, Lane) override {}
  void key_range(int, const detail::SortPlan& plan, const void* keys, std::uint64_t range[2]) override {
    const int bits = plan.end_bit - plan.begin_bit;
    const std::uint64_t mask = bits >= 64 ? ~0ull : (std::uint64_t(1) << bits) - 1;
    range[0] = ~0ull;
    range[1] = 0;
    visit_key_type(plan.type, [&](auto tag) {
      using K = decltype(tag);
      const K* k = static_cast<const K*>(keys);
      for (std::size_t i = 0; i < plan.n; ++i) {
        const std::uint64_t key = (std::uint64_t(encode_key(k[i], plan.order)) >> plan.begin_bit) & mask;
        range[0] = std::min(range[0], key);
        range[1] = std::max(range[1], key);
      }
    });
  }
  void sort_local(int, const detail::SortPlan& plan, void* keys, void* values) override {
    detail::cpu_sort(plan, keys, values, threads_);
  }
  bool reads_local_peers() const override { return true; }
  void cuts_of_runs(int, const detail::SortPlan& plan, std::span<const SortedRun> runs,
                    std::span<const std::uint64_t> places, std::uint64_t* cuts) override {
    visit_key_type(plan.type, [&](auto tag) {
      using K = decltype(tag);
      const std::vector<std::vector<std::uint64_t>> cut =
          mesh::cuts_of_runs(host_runs<K>(runs), std::vector<std::uint64_t>(places.begin(), places.end()),
                             SortKey<K>{plan.order, plan.begin_bit, plan.end_bit});
      for (std::size_t p = 0; p < places.size(); ++p)
        for (std::size_t r = 0; r < runs.size(); ++r) cuts[p * runs.size() + r] = cut[r][p];
    });
  }
  void merge_two(int, const detail::SortPlan& plan, const SortedRun& a, const SortedRun& b, void* keys_out,
                 void* values_out) override {
    visit_key_type(plan.type, [&](auto tag) {
      using K = decltype(tag);
      const SortedRun both[] = {a, b};
      merge_runs(host_runs<K>(both), static_cast<K*>(keys_out), static_cast<std::byte*>(values_out), plan.value_bytes,
                 SortKey<K>{plan.order, plan.begin_bit, plan.end_bit}, threads_);
    });
  }
  bool concurrent_local_calls() const override { return false; }  // each call uses every thread
  bool has_topk_select() const override { return true; }
  void topk_select_count(int, const detail::TopkSelectScan& scan, std::uint64_t* counts) override {
    detail::cpu_topk_select_count(scan, counts, threads_);
  }
  void topk_select_take(int, const detail::TopkSelectTake& take) override { detail::cpu_topk_select_take(take); }
  void topk_local(int, const detail::TopkRequest& rq) override {
    require(rq.input_indices_device < 0 && rq.outputs_device < 0, "topk: device memory on a CPU mesh device",
            "pass host memory (a bug in radixmesh)");
    const detail::TopkPlan plan = detail::validate_topk(rq, rq.rows.offsets);
    detail::cpu_topk(plan, rq.values, rq.input_indices, rq.out_values, rq.out_indices, threads_);
    const std::size_t places = plan.rows * plan.k;
    if (rq.index_base != 0 && rq.index_bytes == 4)
      for (std::size_t e = 0; e < places; ++e) static_cast<std::int32_t*>(rq.out_indices)[e] += std::int32_t(rq.index_base);
    else if (rq.index_base != 0)
      for (std::size_t e = 0; e < places; ++e) static_cast<std::int64_t*>(rq.out_indices)[e] += rq.index_base;
  }
  void copy_rows(const RowCopy& c) override {
    for (std::size_t r = 0; r < c.rows; ++r)
      std::memcpy(static_cast<std::byte*>(c.dst) + r * c.dst_pitch, static_cast<const std::byte*>(c.src) + r * c.src_pitch,
                  c.width);
  }
  void upload(int, const void* host, void* device, std::size_t bytes, Lane) override {
    if (bytes) std::memcpy(device, host, bytes);
  }
  void download(int, const void* device, void* host, std::size_t bytes, Lane) override {
    if (bytes) std::memcpy(host, device, bytes);
  }
  LaneMark mark(int, Lane) override { return nullptr; }  // every step is done when its call returns
  void wait_for(int, Lane, const LaneMark&) override {}
  void copy_lanes_at_once(int, int) override {}
  bool reaches_directly(const void*) const override { return true; }
  void copy_chunks(int, const void* src, void* dst, std::span<const Chunk> chunks, std::size_t elem_bytes) override {
    const auto* from = static_cast<const std::byte*>(src);
    auto* to = static_cast<std::byte*>(dst);
    for (const Chunk& c : chunks)
      if (c.count) std::memcpy(to + c.to * elem_bytes, from + c.from * elem_bytes, c.count * elem_bytes);
  }

 private:
  unsigned threads_;
  std::map<std::pair<int, int>, detail::BadBucket> finished_;  // splits run by start_split, by (device, ticket)
};

}  // namespace

std::unique_ptr<DeviceBackend> make_cpu_device_backend(unsigned threads) {
  return std::make_unique<CpuDeviceBackend>(threads);
}

}  // namespace radixmesh::mesh
