// Benchmark-only stand-in: HailoRT's utils.hpp includes xxhash for hashing helpers the ops never call.
#pragma once
#include <cstddef>
#include <cstdint>
typedef uint64_t XXH64_hash_t;
typedef uint32_t XXH32_hash_t;
struct XXH3_state_t { int unused; };
inline XXH64_hash_t XXH3_64bits(const void*, size_t) { return 0; }
enum XXH_errorcode { XXH_OK = 0, XXH_ERROR };
inline XXH3_state_t* XXH3_createState() { return nullptr; }
inline XXH_errorcode XXH3_freeState(XXH3_state_t*) { return XXH_OK; }
inline XXH_errorcode XXH3_64bits_reset(XXH3_state_t*) { return XXH_OK; }
inline XXH_errorcode XXH3_64bits_update(XXH3_state_t*, const void*, size_t) { return XXH_OK; }
inline XXH64_hash_t XXH3_64bits_digest(const XXH3_state_t*) { return 0; }
