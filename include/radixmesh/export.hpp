// radixmesh/export.hpp — which symbols libradixmesh.so exports.
//
// The shared library is built with hidden visibility (C++ and CUDA host code, inline functions
// included), so only what carries RXM_API is part of its ABI: the public functions and classes of
// these headers, the type-erased detail:: entries that the public templates call, and the
// device-level entries whose definitions are compiled into the library. The static library
// (RXM_BUILD_SHARED=OFF) defines RXM_STATIC, and RXM_API is empty there.
#pragma once

#if defined(RXM_STATIC)
#define RXM_API
#else
#define RXM_API __attribute__((visibility("default")))
#endif
