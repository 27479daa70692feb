/* The C API from a C program (C11, no C++): version, contexts, sort of keys and pairs against
 * qsort, top-k against a naive selection, multisplit offsets, the mesh calls on a CPU mesh against
 * one device, and the error paths (status, message, nothing written). Exits 0 when every check
 * passes; prints each failure. Label cpu. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "radixmesh/radixmesh.h"

static int failures = 0;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
      ++failures;                                          \
    }                                                      \
  } while (0)
#define CHECK_OK(call) CHECK((call) == RXM_OK, "%s: %s", #call, rxm_last_error())

static uint64_t state = 12345;
static uint32_t next_random(void) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(state >> 33);
}
static int cmp_u32(const void* a, const void* b) {
  uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
  return (x > y) - (x < y);
}

static void library_and_contexts(void) {
  CHECK(rxm_c_api_version() == RXM_C_API_VERSION, "api version %d", rxm_c_api_version());
  CHECK(strcmp(rxm_version(), "0.1.0") == 0, "version %s", rxm_version());
  CHECK(rxm_key_type_size(RXM_BF16) == 2 && rxm_key_type_size(RXM_F64) == 8, "key sizes");
  CHECK(rxm_key_type_size((rxm_key_type)99) == 0, "unknown key type size");
  rxm_context* ctx = NULL;
  CHECK_OK(rxm_context_create_cpu(2, &ctx));
  CHECK(rxm_context_mesh_size(ctx) == 1 && rxm_context_backend(ctx) == RXM_BACKEND_CPU, "cpu context");
  rxm_context_destroy(ctx);
  rxm_context_destroy(NULL);
  CHECK(rxm_context_create_cpu(2, NULL) == RXM_INVALID_ARGUMENT, "NULL output accepted");
  CHECK(strstr(rxm_last_error(), "output pointer is NULL") != NULL, "message: %s", rxm_last_error());
}

static void sort_keys_and_pairs(rxm_context* ctx) {
  const size_t n = 100003;
  uint32_t* keys = malloc(n * sizeof *keys);
  uint32_t* want = malloc(n * sizeof *want);
  uint64_t* values = malloc(n * sizeof *values);
  for (size_t i = 0; i < n; ++i) keys[i] = want[i] = next_random() % 1000, values[i] = i;
  qsort(want, n, sizeof *want, cmp_u32);
  CHECK_OK(rxm_sort(ctx, RXM_U32, keys, n, -1, values, 8, NULL));
  CHECK(memcmp(keys, want, n * sizeof *keys) == 0, "sorted keys differ from qsort");
  int stable = 1;
  for (size_t i = 1; i < n; ++i)
    if (keys[i] == keys[i - 1] && values[i] < values[i - 1]) stable = 0;
  CHECK(stable, "equal keys lost their order");
  rxm_sort_options desc = RXM_SORT_OPTIONS_INIT;
  desc.descending = 1;
  CHECK_OK(rxm_sort(ctx, RXM_U32, keys, n, -1, NULL, 0, &desc));
  CHECK(keys[0] == want[n - 1] && keys[n - 1] == want[0], "descending");
  /* Bad input: nothing written, a clear message. */
  memcpy(keys, want, n * sizeof *keys);
  CHECK(rxm_sort(ctx, RXM_U32, keys, n, -1, values, 3, NULL) == RXM_INVALID_ARGUMENT, "value_bytes 3 accepted");
  CHECK(strstr(rxm_last_error(), "value_bytes is 3") != NULL, "message: %s", rxm_last_error());
  CHECK(rxm_sort(ctx, RXM_U32, NULL, n, -1, NULL, 0, NULL) == RXM_INVALID_ARGUMENT, "NULL keys accepted");
  CHECK(rxm_sort(ctx, (rxm_key_type)42, keys, n, -1, NULL, 0, NULL) == RXM_INVALID_ARGUMENT, "bad type accepted");
  rxm_sort_options zero = {0, 1, 0, -1};
  CHECK(rxm_sort(ctx, RXM_U32, keys, n, -1, NULL, 0, &zero) == RXM_INVALID_ARGUMENT, "options.size 0 accepted");
  CHECK(strstr(rxm_last_error(), "rxm_sort_options.size is 0") != NULL, "message: %s", rxm_last_error());
  CHECK(rxm_sort(NULL, RXM_U32, keys, n, -1, NULL, 0, NULL) == RXM_INVALID_ARGUMENT, "NULL context accepted");
  CHECK(memcmp(keys, want, n * sizeof *keys) == 0, "a failed call wrote the keys");
  /* A caller built against a shorter options struct: the missing fields keep their defaults. */
  rxm_sort_options shorter = RXM_SORT_OPTIONS_INIT;
  shorter.size = sizeof(size_t) + sizeof(int);
  shorter.descending = 1;
  shorter.end_bit = 3; /* past the caller's size: ignored */
  CHECK_OK(rxm_sort(ctx, RXM_U32, keys, n, -1, NULL, 0, &shorter));
  CHECK(keys[0] == want[n - 1], "short options struct");
  CHECK_OK(rxm_sort(ctx, RXM_U32, keys, 0, -1, NULL, 0, NULL));
  /* Rows sorted on their own. */
  int16_t rows[2 * 4] = {4, -1, 3, 0, 9, 9, -7, 2};
  const int16_t want_rows[2 * 4] = {-1, 0, 3, 4, -7, 2, 9, 9};
  CHECK_OK(rxm_sort_rows(ctx, RXM_I16, rows, 8, 4, NULL, 0, NULL));
  CHECK(memcmp(rows, want_rows, sizeof rows) == 0, "sort_rows");
  CHECK(rxm_sort_rows(ctx, RXM_I16, rows, 8, 3, NULL, 0, NULL) == RXM_INVALID_ARGUMENT, "8 keys in rows of 3");
  free(keys), free(want), free(values);
}

static void topk_and_multisplit(rxm_context* ctx) {
  const size_t n = 5000, k = 10;
  float* x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; ++i) x[i] = (float)(next_random() % 100000) / 7.0f;
  x[17] = NAN;
  float top[10];
  int64_t where[10];
  rxm_topk_options o = RXM_TOPK_OPTIONS_INIT;
  o.sorted = 1;
  CHECK_OK(rxm_topk(ctx, RXM_F32, x, n, -1, 1, NULL, k, &o, top, where, 8));
  /* Naive check: each winner is x[where], best first, and no loser beats the last winner. */
  for (size_t j = 0; j < k; ++j) CHECK(x[where[j]] == top[j], "value %zu is not x[index]", j);
  for (size_t j = 1; j < k; ++j) CHECK(top[j] <= top[j - 1], "not best first at %zu", j);
  size_t better = 0;
  for (size_t i = 0; i < n; ++i)
    if (!isnan(x[i]) && x[i] > top[k - 1]) ++better;
  CHECK(better < k, "%zu values beat the last winner", better);
  int32_t where32[2 * 3];
  float rows_top[2 * 3];
  CHECK_OK(rxm_topk(ctx, RXM_F32, x, 4000, -1, 2, NULL, 3, NULL, rows_top, where32, 4));
  CHECK(rxm_topk(ctx, RXM_F32, x, n, -1, 1, NULL, n + 1, NULL, top, where, 8) == RXM_INVALID_ARGUMENT, "k > n");
  CHECK(strstr(rxm_last_error(), "k = 5001 is larger than n = 5000") != NULL, "message: %s", rxm_last_error());
  CHECK(rxm_topk(ctx, RXM_F32, x, n, -1, 3, NULL, 1, NULL, top, where, 8) == RXM_INVALID_ARGUMENT, "3 rows of 5000");
  CHECK(rxm_topk(ctx, RXM_F32, x, n, -1, 1, NULL, 1, NULL, top, where, 2) == RXM_INVALID_ARGUMENT, "index_bytes 2");

  uint32_t keys[1000], out[1000];
  size_t offsets[17];
  for (size_t i = 0; i < 1000; ++i) keys[i] = next_random();
  rxm_buckets radix = RXM_BUCKETS_INIT;
  radix.shift = 28;
  radix.bits = 4;
  CHECK_OK(rxm_multisplit(ctx, RXM_U32, keys, out, NULL, NULL, 0, 1000, -1, &radix, offsets, 17));
  CHECK(offsets[0] == 0 && offsets[16] == 1000, "offsets span the keys");
  for (size_t b = 0; b < 16; ++b)
    for (size_t i = offsets[b]; i < offsets[b + 1]; ++i) CHECK((out[i] >> 28) == b, "key %zu in bucket %zu", i, b);
  rxm_buckets hash = {sizeof(rxm_buckets), RXM_BUCKETS_HASH, 0, 0, 7, 1};
  CHECK(rxm_multisplit(ctx, RXM_U32, keys, out, NULL, NULL, 0, 1000, -1, &hash, offsets, 17) == RXM_INVALID_ARGUMENT,
        "17 offsets for 7 buckets");
  CHECK_OK(rxm_multisplit(ctx, RXM_U32, keys, out, NULL, NULL, 0, 1000, -1, &hash, offsets, 8));
  rxm_buckets ident = {sizeof(rxm_buckets), RXM_BUCKETS_IDENTITY, 0, 0, 4, 1};
  CHECK(rxm_multisplit(ctx, RXM_F32, x, x, NULL, NULL, 0, 10, -1, &ident, offsets, 5) == RXM_INVALID_ARGUMENT,
        "identity buckets over floats");
  CHECK(rxm_multisplit(ctx, RXM_U32, keys, out, NULL, NULL, 0, 1000, -1, &ident, offsets, 5) == RXM_INVALID_ARGUMENT,
        "keys above m with checked identity buckets");
  /* The stream-ordered device calls refuse a CPU context before touching any pointer. */
  CHECK(rxm_topk_device(ctx, RXM_F32, 0, x, 1, 10, 0, 1, NULL, top, where, 8, NULL) == RXM_INVALID_ARGUMENT,
        "device top-k on a CPU context");
  CHECK(strstr(rxm_last_error(), "context is on the CPU backend") != NULL, "message: %s", rxm_last_error());
  CHECK(rxm_sort_rows_device(ctx, RXM_U32, 0, keys, out, NULL, NULL, 0, 1000, 100, NULL, NULL) ==
            RXM_INVALID_ARGUMENT,
        "device sort on a CPU context");
  CHECK(strstr(rxm_last_error(), "context is on the CPU backend") != NULL, "message: %s", rxm_last_error());
  CHECK(rxm_sort_rows_device(ctx, RXM_U32, -1, keys, out, NULL, NULL, 0, 1000, 100, NULL, NULL) ==
            RXM_INVALID_ARGUMENT,
        "device -1");
  CHECK(rxm_sort_rows_device(ctx, RXM_U32, 0, keys, out, keys, NULL, 0, 1000, 100, NULL, NULL) ==
            RXM_INVALID_ARGUMENT,
        "values_in without values_out");
  CHECK(strstr(rxm_last_error(), "values_in given with values_out NULL") != NULL, "message: %s", rxm_last_error());
  free(x);
}

static void mesh(void) {
  rxm_context *mesh = NULL, *one = NULL;
  CHECK_OK(rxm_context_create_cpu_mesh(3, 1, &mesh));
  CHECK_OK(rxm_context_create_cpu(1, &one));
  CHECK(rxm_context_mesh_size(mesh) == 3 && rxm_context_local_count(mesh) == 3, "cpu mesh of 3");
  enum { N = 30011 };
  static uint32_t all[N], want[N];
  for (size_t i = 0; i < N; ++i) all[i] = want[i] = next_random();
  CHECK_OK(rxm_sort(one, RXM_U32, want, N, -1, NULL, 0, NULL));
  size_t sizes[3] = {10000, 0, N - 10000};
  void* shards[3] = {all, all + 10000, all + 10000};
  CHECK_OK(rxm_sort_shards(mesh, RXM_U32, shards, sizes, NULL, NULL, 0, NULL));
  CHECK(memcmp(all, want, sizeof all) == 0, "sort_shards differs from one device");
  /* top-k over the shards of fresh keys against one device's top-k. */
  for (size_t i = 0; i < N; ++i) all[i] = next_random() % 5000;
  uint32_t got_v[100], want_v[100];
  int64_t got_i[100], want_i[100];
  const void* cshards[3] = {all, all + 10000, all + 10000};
  CHECK_OK(rxm_topk_shards(mesh, RXM_U32, cshards, sizes, NULL, 1, 0, 100, NULL, got_v, got_i, 8));
  CHECK_OK(rxm_topk(one, RXM_U32, all, N, -1, 1, NULL, 100, NULL, want_v, want_i, 8));
  CHECK(memcmp(got_v, want_v, sizeof got_v) == 0 && memcmp(got_i, want_i, sizeof got_i) == 0,
        "topk_shards differs from one device");
  CHECK(rxm_topk_shards(mesh, RXM_U32, cshards, sizes, NULL, 2, 0, 1, NULL, got_v, got_i, 8) == RXM_INVALID_ARGUMENT,
        "rows 2 without batched");
  CHECK(rxm_sort_shards(mesh, RXM_U32, NULL, sizes, NULL, NULL, 0, NULL) == RXM_INVALID_ARGUMENT, "NULL shards");
  rxm_context_destroy(mesh);
  rxm_context_destroy(one);
}

int main(void) {
  library_and_contexts();
  rxm_context* ctx = NULL;
  if (rxm_context_create_cpu(2, &ctx) != RXM_OK) {
    fprintf(stderr, "no CPU context: %s\n", rxm_last_error());
    return 1;
  }
  sort_keys_and_pairs(ctx);
  topk_and_multisplit(ctx);
  rxm_context_destroy(ctx);
  mesh();
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  else printf("test_capi: every check passed\n");
  return failures ? 1 : 0;
}
