// A downstream program built against an installed radixmesh: sort, multisplit and top-k on the
// CPU backend through the one public header.
#include <radixmesh/radixmesh.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

int main() {
  namespace rxm = radixmesh;
  auto ctx = rxm::Context::cpu();
  std::vector<float> keys = {3.5f, -1.0f, 0.0f, -0.0f, 2.0f, 7.25f, -8.0f};
  std::vector<float> sorted = keys;
  rxm::sort(ctx, std::span<float>(sorted));
  bool ok = std::is_sorted(sorted.begin(), sorted.end(), rxm::key_less<float>{});

  std::vector<float> split(keys.size());
  std::vector<std::size_t> offsets(3);
  rxm::multisplit(ctx, std::span<const float>(keys), std::span<float>(split), rxm::buckets::radix_digit{31, 1},
                  std::span<std::size_t>(offsets));
  ok = ok && offsets[2] == keys.size() && offsets[1] == 4;  // 4 negative keys (-0.0 included) first

  auto top = rxm::topk(ctx, std::span<const float>(keys), 2);
  ok = ok && top.values.size() == 2;
  std::printf("consumer: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
