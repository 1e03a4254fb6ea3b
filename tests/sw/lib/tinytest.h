/* SPDX-License-Identifier: BSD-2-Clause */
/* tinytest.h - checks and a runner for the C unit tests: `test_x` runs every case,
 * `test_x NAME` one, `test_x --list` names them. Prints PASS/FAIL per case. */
#ifndef TINYTEST_H
#define TINYTEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int tt_failures;

/* ASan: also catch use of a returned stack frame (a callback into a finished sync call). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_stack_use_after_return=1";
}

#define CHECK(c) do { \
    if (!(c)) { \
        fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); \
        tt_failures++; \
    } \
} while (0)

#define CHECK_EQ(a, b) do { \
    unsigned long long va_ = (unsigned long long)(a), vb_ = (unsigned long long)(b); \
    if (va_ != vb_) { \
        fprintf(stderr, "%s:%d: %s == %s failed: 0x%llx != 0x%llx\n", __FILE__, __LINE__, \
                #a, #b, va_, vb_); \
        tt_failures++; \
    } \
} while (0)

#define CHECK_STR(hay, needle) do { \
    const char *h_ = (hay), *n_ = (needle); \
    if (!h_ || !strstr(h_, n_)) { \
        fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, \
                h_ ? h_ : "(null)", n_); \
        tt_failures++; \
    } \
} while (0)

struct tt_case {
    const char *name;
    void (*fn)(void);
};

#define TT_CASE(f) {#f, f}

static inline int tt_main(int argc, char **argv, const struct tt_case *cases, size_t n)
{
    int ran = 0;
    for (size_t i = 0; i < n; i++) {
        if (argc > 1 && !strcmp(argv[1], "--list")) {
            printf("%s\n", cases[i].name);
            continue;
        }
        if (argc > 1 && strcmp(argv[1], cases[i].name))
            continue;
        int before = tt_failures;
        cases[i].fn();
        printf("%s %s\n", tt_failures == before ? "PASS" : "FAIL", cases[i].name);
        fflush(stdout);
        ran++;
    }
    if (argc > 1 && strcmp(argv[1], "--list") && ran == 0) {
        fprintf(stderr, "no test case %s\n", argv[1]);
        return 2;
    }
    return tt_failures ? 1 : 0;
}

#define TT_MAIN(...) \
    int main(int argc, char **argv) \
    { \
        static const struct tt_case cases_[] = {__VA_ARGS__}; \
        return tt_main(argc, argv, cases_, sizeof(cases_) / sizeof(cases_[0])); \
    }

#endif /* TINYTEST_H */
