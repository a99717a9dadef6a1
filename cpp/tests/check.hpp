// The C++ tests' one check harness (each test program is one translation unit): CHECK counts a
// check and prints the ones that fail, throws() tells whether a call refuses with a message that
// names what it should, report() prints the closing "N passed, M failed" line and gives the exit code.
#pragma once

#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>

static int failures = 0, checks = 0;

#define CHECK(cond)                                                     \
    do {                                                                \
        ++checks;                                                       \
        if (!(cond)) {                                                  \
            ++failures;                                                 \
            std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
        }                                                               \
    } while (0)

// True when f throws std::invalid_argument whose message contains needle (else prints the message).
inline bool throws(const std::function<void()>& f, const char* needle) {
    try {
        f();
    } catch (const std::invalid_argument& e) {
        if (std::strstr(e.what(), needle)) return true;
        std::printf("  message was: %s\n", e.what());
        return false;
    }
    return false;
}

inline int report() {
    std::printf("%d passed, %d failed\n", checks - failures, failures);
    return failures == 0 ? 0 : 1;
}
