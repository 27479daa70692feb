// radixmesh/radixmesh.hpp — everything a user includes.
#pragma once
#include "radixmesh/buckets.hpp"
#include "radixmesh/context.hpp"
#include "radixmesh/device_span.hpp"
#include "radixmesh/error.hpp"
#include "radixmesh/generate.hpp"
#include "radixmesh/io.hpp"
#include "radixmesh/key_types.hpp"
#include "radixmesh/keys.hpp"
#include "radixmesh/memory.hpp"
#include "radixmesh/multisplit.hpp"
#include "radixmesh/sort.hpp"
#include "radixmesh/topk.hpp"
