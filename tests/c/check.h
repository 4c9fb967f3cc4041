/*
 * The C tests' one assertion: counts passes and failures, and names a
 * failure's file and line on stderr. Each test program prints
 * "N passed, M failed" and exits non-zero on any failure.
 */
#ifndef INTERNED_STRING_DB_TESTS_CHECK_H
#define INTERNED_STRING_DB_TESTS_CHECK_H

#include <stdio.h>

static int passed, failed;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (cond) {                                                        \
            passed++;                                                      \
        } else {                                                           \
            failed++;                                                      \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
        }                                                                  \
    } while (0)

#endif
