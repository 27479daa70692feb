// Logits for the phase timers of bench/phases: sums of 4 uniforms (about normal, as bench_topk_llm's),
// from splitmix64 (fast on the host: 4096 rows of 128256 values in seconds), as the raw bits of U
// (16-bit: the float's top half, bf16).
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

template <class U> std::vector<U> phase_logits(std::size_t count) {
  std::vector<U> h(count);
  std::uint64_t state = 1;
  for (auto& x : h) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull, z = (z ^ (z >> 27)) * 0x94d049bb133111ebull, z ^= z >> 31;
    const float f = (float(z & 0xffff) + float((z >> 16) & 0xffff) + float((z >> 32) & 0xffff) + float(z >> 48)) / 65536.0f - 2.0f;
    unsigned b;
    std::memcpy(&b, &f, 4);
    x = sizeof(U) == 2 ? U(b >> 16) : U(b);
  }
  return h;
}
