/* radixmesh.h — the C API of radixmesh (shared library libradixmesh_c), for C and for every
 * language that calls C (Python's ctypes, Rust, Go, Julia...). Plain C types only; every call
 * returns an rxm_status, and on failure rxm_last_error() gives the message (the problem and its
 * fix) of this thread's last failed call. Nothing is written when a call fails.
 *
 *   rxm_context* ctx;
 *   if (rxm_context_create_cpu(0, &ctx) != RXM_OK) { puts(rxm_last_error()); return 1; }
 *   rxm_sort(ctx, RXM_F32, keys, n, -1, NULL, 0, NULL);          (host keys, in place)
 *   rxm_context_destroy(ctx);
 *
 * Memory: a `device` argument of -1 means host memory, d >= 0 memory of CUDA device d (the
 * context must use it). Options structs begin with their own size (set it with the RXM_*_INIT
 * macros, or to sizeof the struct): a later, longer struct keeps old callers working, and fields
 * past a caller's size take their defaults. Symbols carry the version RXM_C_1 (a linker version
 * script); rxm_c_api_version() is RXM_C_API_VERSION of the library that is loaded.
 * Semantics of each operation: the C++ headers named beside it. */
#ifndef RADIXMESH_RADIXMESH_H
#define RADIXMESH_RADIXMESH_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define RXM_C_API __declspec(dllexport)
#else
#define RXM_C_API __attribute__((visibility("default")))
#endif

/* In C++ the enums get int as their fixed underlying type (the size C gives them), so that any int
 * a C caller passes is a value of the enum, checked by the library, never undefined behaviour. */
#ifdef __cplusplus
#define RXM_C_ENUM_BASE : int
#else
#define RXM_C_ENUM_BASE
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define RXM_C_API_VERSION 2 /* 2: rxm_sort_rows_device, rxm_topk_device */

typedef enum rxm_status RXM_C_ENUM_BASE {
  RXM_OK = 0,
  RXM_INVALID_ARGUMENT = 1, /* a caller's argument is wrong (k > n, null pointers, ...) */
  RXM_IO = 2,               /* a file could not be read or written */
  RXM_OUT_OF_MEMORY = 3,    /* not enough host or device memory; the message says needed vs free */
  RXM_UNSUPPORTED = 4,      /* a type, option or device this build or machine does not support */
  RXM_DEVICE = 5,           /* a CUDA, NCCL or driver call failed */
  RXM_INTERNAL = 6          /* a bug in radixmesh: please report it */
} rxm_status;

/* Key types (radixmesh/key_types.hpp); f16 and bf16 are 16-bit storage. */
typedef enum rxm_key_type RXM_C_ENUM_BASE {
  RXM_U8 = 0, RXM_U16, RXM_U32, RXM_U64, RXM_I8, RXM_I16, RXM_I32, RXM_I64, RXM_F16, RXM_BF16, RXM_F32, RXM_F64
} rxm_key_type;

typedef enum rxm_backend RXM_C_ENUM_BASE { RXM_BACKEND_AUTO = 0, RXM_BACKEND_CPU = 1, RXM_BACKEND_CUDA = 2 } rxm_backend;

typedef struct rxm_context rxm_context; /* opaque; one per rxm_context_create_* */

/* ---- library ---- */
RXM_C_API int rxm_c_api_version(void);
RXM_C_API const char* rxm_version(void);    /* the library's version, "0.1.0" */
RXM_C_API const char* rxm_last_error(void); /* this thread's last failure, "" if none */
RXM_C_API size_t rxm_key_type_size(rxm_key_type type); /* bytes per key; 0 for an unknown type */

/* ---- contexts (radixmesh/context.hpp) ---- */
/* The CPU backend with `threads` host threads (0: every hardware thread). */
RXM_C_API rxm_status rxm_context_create_cpu(unsigned threads, rxm_context** out);
/* CUDA devices by ordinal (count 0: every visible GPU); an ordinal listed again is a logical
 * device of that GPU. backend AUTO takes the CPU where no GPU is usable. */
RXM_C_API rxm_status rxm_context_create_local(const int* devices, size_t count, rxm_backend backend,
                                              rxm_context** out);
/* n CPU mesh devices in this process (the threads transport). */
RXM_C_API rxm_status rxm_context_create_cpu_mesh(unsigned n, unsigned threads_per_device, rxm_context** out);
RXM_C_API void rxm_context_destroy(rxm_context* ctx); /* NULL is allowed */
RXM_C_API int rxm_context_mesh_size(const rxm_context* ctx);   /* mesh devices of the whole mesh */
RXM_C_API int rxm_context_local_count(const rxm_context* ctx); /* mesh devices this process drives */
RXM_C_API rxm_backend rxm_context_backend(const rxm_context* ctx);

/* ---- sort (radixmesh/sort.hpp) ---- */
typedef struct rxm_sort_options {
  size_t size;     /* sizeof(rxm_sort_options) */
  int descending;  /* 0: ascending */
  int begin_bit;   /* bits [begin_bit, end_bit) of the order-preserving encoding; 0 */
  int end_bit;     /* -1: the key's width */
} rxm_sort_options;
#define RXM_SORT_OPTIONS_INIT {sizeof(rxm_sort_options), 0, 0, -1}

/* Stable sort of n keys in place, with values (value_bytes 4 or 8; 0 and NULL for keys only) that
 * move with their keys. device -1: host memory; else keys and values on that CUDA device. On a
 * context of several mesh devices, host keys are cut into even slices that the devices sort
 * together. options may be NULL. */
RXM_C_API rxm_status rxm_sort(rxm_context* ctx, rxm_key_type type, void* keys, size_t n, int device, void* values,
                              size_t value_bytes, const rxm_sort_options* options);

/* Every row of a host-resident batch sorted on its own (numpy.sort along the last axis): n keys
 * in rows of row_length, row-major, stable, with values as for rxm_sort. A context of one device. */
RXM_C_API rxm_status rxm_sort_rows(rxm_context* ctx, rxm_key_type type, void* keys, size_t n, size_t row_length,
                                   void* values, size_t value_bytes, const rxm_sort_options* options);

/* One shard per local mesh device, sorted together in place (rxm::sort_shards): afterwards every
 * key on device i is <= every key on device i + 1 and each device keeps its count. devices NULL:
 * host shards; else devices[i] is the CUDA device of shard i. values NULL for keys only. */
RXM_C_API rxm_status rxm_sort_shards(rxm_context* ctx, rxm_key_type type, void* const* shards, const size_t* sizes,
                                     const int* devices, void* const* values, size_t value_bytes,
                                     const rxm_sort_options* options);

/* ---- top-k (radixmesh/topk.hpp, radixmesh/topk_shards.hpp) ---- */
typedef struct rxm_topk_options {
  size_t size;      /* sizeof(rxm_topk_options) */
  int largest;      /* 1: the k largest; 0: the k smallest */
  int sorted;       /* 1: best first; 0: ascending input index */
  int include_nan;  /* 1: NaN ranks above +inf; 0: below every number */
} rxm_topk_options;
#define RXM_TOPK_OPTIONS_INIT {sizeof(rxm_topk_options), 1, 0, 0}

/* The top-k of each row of `values` (n values; device -1: host, else a CUDA device). Rows:
 * row_offsets NULL gives `rows` equal rows of n / rows values; else rows + 1 offsets (host memory).
 * Outputs in host memory, rows * k entries each: out_values of the key type, out_indices of
 * index_bytes (4: int32, 8: int64). options may be NULL. */
RXM_C_API rxm_status rxm_topk(rxm_context* ctx, rxm_key_type type, const void* values, size_t n, int device,
                              size_t rows, const uint64_t* row_offsets, size_t k, const rxm_topk_options* options,
                              void* out_values, void* out_indices, size_t index_bytes);

/* The top-k over one shard per local mesh device (devices NULL: host shards). batched 0: the
 * shards are one array, rows must be 1; batched 1: each shard holds `rows` rows of its own columns
 * (row-major) and row r of the whole is row r of every shard side by side. Indices are global.
 * Every process of an MPI context gets the whole result. */
RXM_C_API rxm_status rxm_topk_shards(rxm_context* ctx, rxm_key_type type, const void* const* shards,
                                     const size_t* sizes, const int* devices, size_t rows, int batched, size_t k,
                                     const rxm_topk_options* options, void* out_values, void* out_indices,
                                     size_t index_bytes);

/* ---- stream-ordered calls on one CUDA device (API version 2) ----
 * Arrays live on CUDA device `device`, one of the context's devices. The work is queued on
 * `stream` (a cudaStream_t; NULL: the legacy default stream) and the call returns without waiting
 * for the GPU; temporary memory comes from the context's pool for the device, taken and given back
 * on `stream`. Errors in the arguments are found before anything is queued. */

/* Sorts every row of a batch out of place: n keys in rows of row_length (n for one array) from
 * keys_in to keys_out, each row on its own, stable. keys_in may equal keys_out (in place). Values
 * (value_bytes 4 or 8) go from values_in to values_out; values_in NULL with values_out given
 * writes each key's position in its row instead (int32 for value_bytes 4, int64 for 8: an
 * argsort); both NULL with value_bytes 0 sorts keys only. options may be NULL. */
RXM_C_API rxm_status rxm_sort_rows_device(rxm_context* ctx, rxm_key_type type, int device, const void* keys_in,
                                          void* keys_out, const void* values_in, void* values_out,
                                          size_t value_bytes, size_t n, size_t row_length,
                                          const rxm_sort_options* options, void* stream);

/* The top-k of each of `rows` rows of row_length values that start row_stride values apart (0:
 * row_length, rows packed), with out_values (of the key type) and out_indices (index_bytes 4:
 * int32, 8: int64; positions in the row) on the same device, rows * k entries each. options may be
 * NULL. Captures in a CUDA graph for 16- and 32-bit keys, rows of at most 2^18 values and
 * k <= 1024 (radixmesh/device/topk.cuh says which problems do). */
RXM_C_API rxm_status rxm_topk_device(rxm_context* ctx, rxm_key_type type, int device, const void* values,
                                     size_t rows, size_t row_length, size_t row_stride, size_t k,
                                     const rxm_topk_options* options, void* out_values, void* out_indices,
                                     size_t index_bytes, void* stream);

/* ---- multisplit (radixmesh/multisplit.hpp, radixmesh/buckets.hpp) ---- */
typedef enum rxm_bucket_kind RXM_C_ENUM_BASE {
  RXM_BUCKETS_RADIX = 0,    /* the digit [shift, shift + bits) of the key's encoding: 2^bits buckets */
  RXM_BUCKETS_HASH = 1,     /* splitmix64's finalizer of the key's bits, mod m */
  RXM_BUCKETS_IDENTITY = 2  /* the key itself (integer keys below m) */
} rxm_bucket_kind;

typedef struct rxm_buckets {
  size_t size;          /* sizeof(rxm_buckets) */
  rxm_bucket_kind kind;
  int shift, bits;      /* RADIX */
  uint32_t m;           /* HASH, IDENTITY: the bucket count */
  int checked;          /* 1: an id >= m is an error; 0: such keys go to bucket m - 1 */
} rxm_buckets;
#define RXM_BUCKETS_INIT {sizeof(rxm_buckets), RXM_BUCKETS_RADIX, 0, 8, 1, 1}

/* Stable multisplit of n keys (and values, value_bytes 4 or 8, or 0 and NULL) from keys_in to
 * keys_out, bucket by bucket; offsets receives m + 1 entries (host memory) where m is the bucket
 * count. device -1: host memory; else every array on that CUDA device. */
RXM_C_API rxm_status rxm_multisplit(rxm_context* ctx, rxm_key_type type, const void* keys_in, void* keys_out,
                                    const void* values_in, void* values_out, size_t value_bytes, size_t n, int device,
                                    const rxm_buckets* buckets, size_t* offsets, size_t offsets_count);

#ifdef __cplusplus
}
#endif

#endif /* RADIXMESH_RADIXMESH_H */
