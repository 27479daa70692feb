// bench_mesh_sort --host: keys (and values) in pinned host memory, one slice per GPU, sorted by
// rxm::sort_shards on host spans (each GPU uploads its slice, the mesh sorts, each GPU downloads its
// share of the result): RMG's setting, pinned host -> GPUs -> host. Beside it, in the same run,
// one GPU sorting all the keys from pinned host memory with rxm::sort (the one-GPU point), the
// mesh's sort of the same slices in pageable memory (a diagnostic), and every result compared with
// the one GPU's byte for byte.
//
// Floors: the upload and the download are each the busiest GPU's bytes over the rate measured in
// this run with every GPU copying its slice at once (the host link, and host memory, shared as in
// the sort); the device steps' floors are bench_mesh_sort's device-resident ones (run it for them).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_resources.hpp"
#include "harness/harness.hpp"
#include "mesh_sort_benchmark.hpp"
#include "radixmesh/radixmesh.hpp"

namespace radixmesh::bench {

namespace {

// Copies `bytes` from `from` to `to` with several host threads (restoring 8 GB of input with one
// thread would take seconds per repetition).
void parallel_copy(void* to, const void* from, std::size_t bytes) {
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  const std::size_t piece = (bytes + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) {
    const std::size_t at = t * piece;
    if (at >= bytes) break;
    pool.emplace_back([=] {
      std::memcpy(static_cast<std::byte*>(to) + at, static_cast<const std::byte*>(from) + at, std::min(piece, bytes - at));
    });
  }
  for (auto& th : pool) th.join();
}

// Milliseconds for every GPU to copy its slice (`slice` bytes) between pinned host memory and its
// own memory at once, in the direction `kind`; cudaMemcpyDefault: both directions at once, a
// slice up and another down (`host` then holds two slices per GPU).
double all_gpus_copy_ms(const std::vector<int>& gpus, std::byte* host, std::size_t slice, cudaMemcpyKind kind, int reps) {
  const bool both = kind == cudaMemcpyDefault;
  std::vector<DeviceBuffer> device;
  std::vector<cudaStream_t> streams(2 * gpus.size());
  for (std::size_t d = 0; d < gpus.size(); ++d) {
    device.emplace_back(gpus[d], both ? 2 * slice : slice);
    detail::DeviceGuard guard(gpus[d]);
    for (std::size_t s = 0; s < 2; ++s) RXM_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[2 * d + s], cudaStreamNonBlocking));
  }
  const Stats s = time_ms([] {}, [&] {
    for (std::size_t d = 0; d < gpus.size(); ++d) {
      detail::DeviceGuard guard(gpus[d]);
      auto* dev = static_cast<std::byte*>(device[d].data());
      std::byte* h = host + d * (both ? 2 * slice : slice);
      if (kind != cudaMemcpyDeviceToHost)
        RXM_CUDA_CHECK(cudaMemcpyAsync(dev, h, slice, cudaMemcpyHostToDevice, streams[2 * d]));
      if (kind != cudaMemcpyHostToDevice)
        RXM_CUDA_CHECK(cudaMemcpyAsync(h + (both ? slice : 0), dev + (both ? slice : 0), slice, cudaMemcpyDeviceToHost,
                                       streams[2 * d + 1]));
    }
    for (cudaStream_t stream : streams) RXM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }, reps);
  for (std::size_t d = 0; d < gpus.size(); ++d) {
    detail::DeviceGuard guard(gpus[d]);
    for (std::size_t s = 0; s < 2; ++s) cudaStreamDestroy(streams[2 * d + s]);
  }
  return s.median_ms;
}

// Writes every byte of [p, p + bytes) with the host's threads (fresh pages fault in at once).
void parallel_fill(void* p, std::size_t bytes) {
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 64);
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back([=] {
      const std::size_t from = bytes * t / threads, to = bytes * (t + 1) / threads;
      std::memset(static_cast<std::byte*>(p) + from, 0, to - from);
    });
  for (auto& th : pool) th.join();
}

}  // namespace

template <class K> int run_mesh_sort_host(const MeshSortOptions& o, int argc, char** argv) {
  std::vector<int> gpus = o.devices;
  std::sort(gpus.begin(), gpus.end());
  require(std::adjacent_find(gpus.begin(), gpus.end()) == gpus.end(),
          "bench_mesh_sort --host: every GPU once (logical devices share one host link, so the mode measures nothing)",
          "list distinct GPUs, e.g. --devices 0,1,2,3");
  auto ctx = Context::local(o.devices, Backend::cuda);
  const std::size_t p = o.devices.size(), vb = std::size_t(o.value_bytes);
  const std::size_t per_device = std::size_t(o.keys / p), total = per_device * p;
  const std::size_t key_bytes = total * sizeof(K), value_bytes = total * vb;

  // The pristine input (pageable), the mesh's pinned arrays and the one GPU's pinned arrays.
  std::vector<K> pristine(total);
  {
    GenerateOptions g;
    g.distribution = *distribution_from_name(o.distribution);
    g.seed = 7;
    generate(std::span(pristine), g);
  }
  std::vector<std::byte> pristine_values(value_bytes);
  for (std::size_t i = 0; i < (vb ? total : 0); ++i) {
    const std::uint64_t index = i;
    std::memcpy(pristine_values.data() + i * vb, &index, vb);  // the global index (little-endian low half for 4 bytes)
  }
  PinnedBuffer keys(key_bytes), values(value_bytes), one_keys(key_bytes), one_values(value_bytes);
  auto* k = static_cast<K*>(keys.data());
  auto* v = static_cast<std::byte*>(values.data());
  // The restore step of a timing: the pristine input copied into the given pinned arrays (their
  // addresses held by value: the returned step outlives this call).
  auto restore = [&](const PinnedBuffer& to_keys, const PinnedBuffer& to_values) {
    return [&, keys_at = to_keys.data(), values_at = to_values.data()] {
      parallel_copy(keys_at, pristine.data(), key_bytes);
      if (vb) parallel_copy(values_at, pristine_values.data(), value_bytes);
    };
  };

  // One slice per GPU of host arrays of keys and values, sorted by sort_shards.
  auto mesh_sort_of = [&](K* keys_at, std::byte* values_at, const SortOptions& opt) {
    std::vector<std::span<K>> key_spans;
    std::vector<std::span<std::uint32_t>> v4;
    std::vector<std::span<std::uint64_t>> v8;
    for (std::size_t d = 0; d < p; ++d) {
      key_spans.emplace_back(keys_at + d * per_device, per_device);
      if (vb == 4) v4.emplace_back(reinterpret_cast<std::uint32_t*>(values_at) + d * per_device, per_device);
      if (vb == 8) v8.emplace_back(reinterpret_cast<std::uint64_t*>(values_at) + d * per_device, per_device);
    }
    using KS = std::span<const std::span<K>>;
    if (vb == 0) sort_shards(ctx, KS(key_spans), opt);
    if (vb == 4) sort_shards(ctx, KS(key_spans), std::span<const std::span<std::uint32_t>>(v4), opt);
    if (vb == 8) sort_shards(ctx, KS(key_spans), std::span<const std::span<std::uint64_t>>(v8), opt);
  };
  SortOptions options;
  options.mesh_digit_bits = o.digit_bits;
  auto mesh_sort = [&](const SortOptions& opt) { mesh_sort_of(k, v, opt); };
  const Stats ours = time_ms(restore(keys, values), [&] { mesh_sort(options); }, o.reps);
  // The same from pageable memory, the common case (a diagnostic: the GPUs stage it through their
  // pinned rings at once, host threads copying).
  std::vector<K> pageable_keys(total);
  std::vector<std::byte> pageable_values(value_bytes);
  const Stats pageable = time_ms(
      [&] {
        parallel_copy(pageable_keys.data(), pristine.data(), key_bytes);
        if (vb) parallel_copy(pageable_values.data(), pristine_values.data(), value_bytes);
      },
      [&] { mesh_sort_of(pageable_keys.data(), pageable_values.data(), options); }, o.reps);
  SortPhases phases;
  restore(keys, values)();
  SortOptions with_phases = options;
  with_phases.phases = &phases;
  mesh_sort(with_phases);

  // One GPU, all keys, from pinned host memory to pinned host memory.
  auto solo = Context::local({o.devices[0]}, Backend::cuda);
  const Stats single = time_ms(restore(one_keys, one_values), [&] {
    const std::span<K> all(static_cast<K*>(one_keys.data()), total);
    if (vb == 0) sort(solo, all);
    if (vb == 4) sort(solo, all, std::span(static_cast<std::uint32_t*>(one_values.data()), total));
    if (vb == 8) sort(solo, all, std::span(static_cast<std::uint64_t*>(one_values.data()), total));
  }, o.reps);
  require(std::memcmp(keys.data(), one_keys.data(), key_bytes) == 0 &&
              (!vb || std::memcmp(values.data(), one_values.data(), value_bytes) == 0),
          "bench_mesh_sort --host: the mesh's result differs from one GPU's", "report this as a bug");
  require(std::memcmp(pageable_keys.data(), one_keys.data(), key_bytes) == 0 &&
              (!vb || std::memcmp(pageable_values.data(), one_values.data(), value_bytes) == 0),
          "bench_mesh_sort --host: the mesh's result from pageable memory differs from one GPU's", "report this as a bug");
  pageable_keys = {};
  pageable_values = {};

  // Out of core (--out-of-core BYTES): the same keys sorted in rounds with each GPU limited to
  // BYTES, and the CPU backend's sort of them on every host thread.
  Stats out_of_core, cpu_peer;
  SortPhases ooc_phases;
  const auto whole_sort = [&](Context& on, const SortOptions& opt) {
    const std::span<K> all(k, total);
    if (vb == 0) sort(on, all, opt);
    if (vb == 4) sort(on, all, std::span(reinterpret_cast<std::uint32_t*>(v), total), opt);
    if (vb == 8) sort(on, all, std::span(reinterpret_cast<std::uint64_t*>(v), total), opt);
  };
  if (o.out_of_core) {
    SortOptions limited;
    limited.out_of_core = OutOfCoreMode::always;
    limited.device_memory_limit = std::size_t(o.out_of_core);
    out_of_core = time_ms(restore(keys, values), [&] { whole_sort(ctx, limited); }, o.reps);
    restore(keys, values)();
    limited.phases = &ooc_phases;
    whole_sort(ctx, limited);
    require(std::memcmp(keys.data(), one_keys.data(), key_bytes) == 0 &&
                (!vb || std::memcmp(values.data(), one_values.data(), value_bytes) == 0),
            "bench_mesh_sort --out-of-core: the out-of-core result differs from one GPU's", "report this as a bug");
    auto cpu = Context::cpu();
    cpu_peer = time_ms(restore(keys, values), [&] { whole_sort(cpu, {}); }, std::min(o.reps, 2));
  }

  // The host link's floors: every GPU copying its slice of keys at once, each way; the rates
  // measured there carry the values too.
  const std::size_t key_slice = per_device * sizeof(K), slice = per_device * (sizeof(K) + vb);
  auto* host = static_cast<std::byte*>(one_keys.data());
  const double scale = double(slice) / double(key_slice);
  const double up_floor = scale * all_gpus_copy_ms(o.devices, host, key_slice, cudaMemcpyHostToDevice, o.reps);
  const double down_floor = scale * all_gpus_copy_ms(o.devices, host, key_slice, cudaMemcpyDeviceToHost, o.reps);

  std::string device_list;
  for (int d : o.devices) device_list += (device_list.empty() ? "" : ",") + std::to_string(d);
  Case c("mesh_sort",
         {{"devices", device_list}, {"keys", total}, {"type", o.type}, {"values", o.value_bytes},
          {"distribution", o.distribution}, {"digit_bits", phases.digit_bits}, {"passes", phases.passes},
          {"resident", "pinned host"}, {"out_of_core_limit", o.out_of_core}},
         double(total), "keys");
  c.add("radixmesh sort_shards, pinned host -> GPUs -> host", ours, true);
  c.add("rxm::sort on one device, all keys, pinned host -> GPU -> host", single);
  c.add_diagnostic("radixmesh sort_shards, pageable host -> GPUs -> host (diagnostic)", pageable);
  const double link_bytes = 2.0 * double(slice);
  c.set_floor(link_bytes, link_bytes / ((up_floor + down_floor) / 1e3),
              "every GPU's slice (keys and values) up and down its host link, at the rates measured in this run with "
              "every GPU copying at once (device steps not counted: their floors are the device-resident run's)");
  if (o.out_of_core) {
    c.add_diagnostic("rxm::sort out of core, every GPU limited to " + std::to_string(o.out_of_core) + " bytes (diagnostic)",
          out_of_core);
    c.add("rxm::sort on the CPU backend, " + std::to_string(std::thread::hardware_concurrency()) + " threads",
          cpu_peer);
  }
  c.print();
  if (o.out_of_core) {
    // Partitioning and the groups each send everything up and down, the two directions at once:
    // the floor is twice the time of a slice going up while another comes down (half a slice each
    // way measured, for room in `host`).
    const double both_ms = 2 * scale * all_gpus_copy_ms(o.devices, host, key_slice / 2, cudaMemcpyDefault, o.reps);
    const double ooc_floor = 2 * both_ms;
    std::printf("out of core: %.3f ms, floor %.3f ms (keys and values up and down twice, the directions overlapped, "
                "at the rate measured with both moving; %.3f ms one direction at a time); %d level(s), %llu chunks "
                "partitioned in %.3f ms, %llu groups sorted in %.3f ms; %.2fx the CPU backend's sort; result identical "
                "to one GPU's\n",
                out_of_core.median_ms, ooc_floor, 2 * (up_floor + down_floor), ooc_phases.passes,
                static_cast<unsigned long long>(ooc_phases.out_of_core_chunks), ooc_phases.partition_ms,
                static_cast<unsigned long long>(ooc_phases.out_of_core_groups), ooc_phases.local_sort_ms,
                cpu_peer.median_ms / out_of_core.median_ms);
  }
  std::printf("steps: upload %.3f ms (floor %.3f), partition %.3f ms, refine %.3f ms over %d passes, exchange %.3f ms, "
              "local sort %.3f ms, download %.3f ms (floor %.3f)%s\n",
              phases.upload_ms, up_floor, phases.partition_ms, phases.refine_ms, phases.passes, phases.exchange_ms,
              phases.local_sort_ms, phases.download_ms, down_floor,
              phases.plan_text.find("in groups") != std::string::npos
                  ? " (in groups: the download runs beside the local sort, and its time here is what is left after it)"
                  : "");
  std::printf("sort_shards / one GPU's rxm::sort = %.3f / %.3f = %.2fx; result identical to one GPU's\n",
              ours.median_ms, single.median_ms, ours.median_ms / single.median_ms);
  if (o.explain) std::printf("%s", phases.plan_text.c_str());
  cudaDeviceProp prop{};
  RXM_CUDA_CHECK(cudaGetDeviceProperties(&prop, o.devices[0]));
  append_results("mesh_sort.jsonl", run_info(argc, argv, prop.name), c);
  return 0;
}

// --host --large: keys larger than the GPUs in host memory, sorted out of core by rxm::sort on the
// context (its automatic choice) from pageable memory (the common case; on a fresh machine the
// first repetition also pays the hypervisor's first touch of whatever memory the sort takes) and
// from page-locked memory (cudaHostRegister, its time printed apart), and for each the general way
// through the extra host array, forced by a device limit (SortOptions::host_scratch, written once
// before, as a caller that sorts often keeps it). Beside them the CPU backend's sort of the same
// keys on every host thread. No pristine copy and no in-memory peer: the input, the scratch array
// and nothing else fit the host (12e9 u32 keys: 48 GB twice). Every result is checked sorted and
// equal to the CPU backend's by a hash of every key in order.
// Floors, over the pinned rates measured in this run with every GPU copying at once: a level the
// GPUs hold once (every key up, then down) and the way through the host array (two passes up and
// down, the directions overlapped at the rate each way measured with both directions moving).
template <class K> int run_mesh_sort_large(const MeshSortOptions& o, int argc, char** argv) {
  auto ctx = Context::local(o.devices, Backend::cuda);
  const std::size_t total = std::size_t(o.keys), bytes = total * sizeof(K);
  std::unique_ptr<K[]> keys(new K[total]);  // not value-initialized: generate writes every key
  GenerateOptions g;
  g.distribution = *distribution_from_name(o.distribution);
  g.seed = 7;
  auto fill = [&] { generate(std::span<K>(keys.get(), total), g); };
  // Sorted, and a hash of the keys in order (equal for equal results).
  auto checked = [&](const std::string& who) {
    const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 64);
    std::vector<std::uint64_t> hash(threads, 0);
    std::vector<char> sorted(threads, 1);
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const std::size_t from = total * t / threads, to = total * (t + 1) / threads;
        std::uint64_t h = 0;
        for (std::size_t i = from; i < to; ++i) {
          if (i > 0 && keys[i] < keys[i - 1]) sorted[t] = 0;
          h = h * 1099511628211ull + std::uint64_t(keys[i]);
        }
        hash[t] = h;
      });
    for (auto& th : pool) th.join();
    require(std::all_of(sorted.begin(), sorted.end(), [](char c) { return c != 0; }),
            "bench_mesh_sort --large: " + who + "'s result is not sorted", "report this as a bug");
    std::uint64_t h = 0;
    for (std::uint64_t x : hash) h = h * 31 + x;
    return h;
  };
  std::printf("sorting %zu keys (%.1f GB) in host memory out of core on %zu GPU(s)\n", total, double(bytes) / 1e9,
              o.devices.size());
  struct Way {
    std::string name;
    Stats stats;
    SortPhases phases;
  };
  std::vector<Way> ways;
  std::uint64_t want_hash = 0;
  auto sort_way = [&](const std::string& name, SortOptions options, int reps) {
    Way w{name, {}, {}};
    options.phases = &w.phases;
    // No warm-up repetition: one sort of this size takes seconds, and the first one pays what a user's does.
    w.stats = time_host(fill, [&] { sort(ctx, std::span<K>(keys.get(), total), options); }, 0, reps);
    require(w.phases.out_of_core, "bench_mesh_sort --large: the input fit the GPUs and was sorted in memory",
            "pass more --keys than the GPUs hold (--large measures the out-of-core sort)");
    const std::uint64_t h = checked(name);
    require(ways.empty() || h == want_hash, "bench_mesh_sort --large: " + name + " differs from the first way's result",
            "report this as a bug");
    want_hash = h;
    ways.push_back(w);
  };
  sort_way("rxm::sort out of core, pageable keys", SortOptions{}, o.reps);
  double register_s = 0;
  {
    // The general way, through the extra host array, forced by a device limit of a third of the
    // keys' bytes (the GPU then holds no level once).
    const std::size_t scratch_bytes = out_of_core_scratch_bytes(total, sizeof(K), 0);
    std::unique_ptr<std::byte[]> scratch(new std::byte[scratch_bytes]);
    parallel_fill(scratch.get(), scratch_bytes);
    SortOptions through;
    through.host_scratch = std::span(scratch.get(), scratch_bytes);
    through.device_memory_limit = bytes / 3;
    sort_way("rxm::sort out of core through the host array (device limited to a third), pageable keys, the caller's "
             "scratch array",
             through, 1);
    const auto t = std::chrono::steady_clock::now();
    RXM_CUDA_CHECK(cudaHostRegister(keys.get(), bytes, cudaHostRegisterDefault));
    RXM_CUDA_CHECK(cudaHostRegister(scratch.get(), scratch_bytes, cudaHostRegisterDefault));
    register_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    sort_way("rxm::sort out of core, page-locked keys", SortOptions{}, 1);
    sort_way("rxm::sort out of core through the host array (device limited to a third), page-locked keys and scratch",
             through, 1);
    RXM_CUDA_CHECK(cudaHostUnregister(scratch.get()));
    RXM_CUDA_CHECK(cudaHostUnregister(keys.get()));
  }
  auto cpu = Context::cpu();
  const Stats cpu_peer = time_host(fill, [&] { sort(cpu, std::span<K>(keys.get(), total)); }, 0, std::min(o.reps, 2));
  require(checked("the CPU backend") == want_hash, "bench_mesh_sort --large: the out-of-core result differs from the CPU backend's",
          "report this as a bug");

  const std::size_t probe = std::size_t(1) << 30;
  PinnedBuffer staging(2 * probe * o.devices.size());
  auto* host = static_cast<std::byte*>(staging.data());
  const double up = all_gpus_copy_ms(o.devices, host, probe, cudaMemcpyHostToDevice, 3) / 1e3;  // s per GiB a GPU
  const double down = all_gpus_copy_ms(o.devices, host, probe, cudaMemcpyDeviceToHost, 3) / 1e3;
  const double both = all_gpus_copy_ms(o.devices, host, probe, cudaMemcpyDefault, 3) / 1e3;  // a GiB each way
  const double gibs = double(bytes) / double(probe) / double(o.devices.size());
  // Resident on the GPUs (the input fits 1/1.25 of their memory): every key up once, then down
  // once. Through the host array: two passes up and down, the directions overlapped.
  const double resident_floor_ms = (up + down) * gibs * 1e3, overlapped_floor_ms = 2 * both * gibs * 1e3;

  std::string device_list;
  for (int d : o.devices) device_list += (device_list.empty() ? "" : ",") + std::to_string(d);
  Case c("mesh_sort",
         {{"devices", device_list}, {"keys", total}, {"type", o.type}, {"values", 0}, {"distribution", o.distribution},
          {"resident", "pageable host"}, {"out_of_core", "automatic, larger than the GPUs"}},
         double(total), "keys");
  c.add(ways[0].name, ways[0].stats, true);
  for (std::size_t w = 1; w < ways.size(); ++w) c.add_diagnostic(ways[w].name, ways[w].stats);
  c.add("rxm::sort on the CPU backend, " + std::to_string(std::thread::hardware_concurrency()) + " threads", cpu_peer);
  c.set_floor(2.0 * double(bytes), 2.0 * double(bytes) / (resident_floor_ms / 1e3),
              "every key up the host links once and down once, one direction after the other, at the pinned rates "
              "measured in this run with every GPU copying at once (a level the GPUs hold once)");
  c.print();
  std::printf("floors: %.3f ms for a level the GPUs hold once (up %.1f, down %.1f GB/s), %.3f ms through the host "
              "array (two passes, both directions at once at %.1f GB/s each way); page-locking the keys and the "
              "scratch took %.3f s (not counted)\n",
              resident_floor_ms, double(probe) / up / 1e9, double(probe) / down / 1e9, overlapped_floor_ms,
              double(probe) / both / 1e9, register_s);
  for (const Way& w : ways)
    std::printf("%s: median %.3f ms, min %.3f ms (last repetition: %d level(s), %llu chunks partitioned in %.3f ms, "
                "%llu groups sorted in %.3f ms; %s)\n",
                w.name.c_str(), w.stats.median_ms, w.stats.min_ms, w.phases.passes,
                static_cast<unsigned long long>(w.phases.out_of_core_chunks), w.phases.partition_ms,
                static_cast<unsigned long long>(w.phases.out_of_core_groups), w.phases.local_sort_ms,
                w.phases.plan_text.substr(0, w.phases.plan_text.find('\n')).c_str());
  std::printf("%.2fx the CPU backend's sort; every result sorted and equal to the CPU backend's\n",
              cpu_peer.median_ms / ways[0].stats.median_ms);
  cudaDeviceProp prop{};
  RXM_CUDA_CHECK(cudaGetDeviceProperties(&prop, o.devices[0]));
  append_results("mesh_sort.jsonl", run_info(argc, argv, prop.name), c);
  return 0;
}

template int run_mesh_sort_host<std::uint32_t>(const MeshSortOptions&, int, char**);
template int run_mesh_sort_host<std::uint64_t>(const MeshSortOptions&, int, char**);
template int run_mesh_sort_large<std::uint32_t>(const MeshSortOptions&, int, char**);
template int run_mesh_sort_large<std::uint64_t>(const MeshSortOptions&, int, char**);

}  // namespace radixmesh::bench
