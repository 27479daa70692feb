#include <radixmesh/radixmesh.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

int main() {
  namespace rxm = radixmesh;
  auto ctx = rxm::Context::cpu();
  std::vector<float> keys = {3.5f, -1.0f, 0.0f, -0.0f, 2.0f};
  rxm::sort(ctx, std::span<float>(keys));
  bool ok = std::is_sorted(keys.begin(), keys.end(), rxm::key_less<float>{});
  std::printf("consumer: %s\n", ok ? "sorted" : "NOT sorted");
  return ok ? 0 : 1;
}
