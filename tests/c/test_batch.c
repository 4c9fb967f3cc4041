/*
 * nrt_interned_string_db_intern_batch from C: the same ids as one call per
 * name, the count interned before a failure, and bad input. Run by
 * capi/tests/c_api.rs (cargo test) and by .ci/run under valgrind and
 * AddressSanitizer. Prints "N passed, M failed" and exits non-zero on any
 * failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interned_string_db.h"
#include "check.h"


#define COUNT 1000

int main(void) {
    NrtInternedStringDb *db = nrt_interned_string_db_create(4, 0);
    CHECK(db != NULL);

    /* 1,000 names, each twice: ids as one call per name would give. */
    static char storage[COUNT][48];
    const char *names[COUNT];
    uint64_t ids[COUNT];
    for (int i = 0; i < COUNT; i++) {
        snprintf(storage[i], sizeof storage[i], "model_%d/layer_%d/tensor_%d", i % 7, i % 97, i / 2);
        names[i] = storage[i];
    }
    size_t interned = 0;
    CHECK(nrt_interned_string_db_intern_batch(db, 1, names, COUNT, ids, &interned) == NRT_SUCCESS);
    CHECK(interned == COUNT);
    int same = 1;
    for (int i = 0; i < COUNT; i++) {
        uint64_t one = 0;
        same &= nrt_interned_string_db_intern(db, 1, names[i], &one) == NRT_SUCCESS;
        same &= one == ids[i] && ids[i] == nrt_interned_string_db_get_id(names[i]);
    }
    CHECK(same);

    /* A bad name stops the batch there; the names before it are interned. */
    const char *bad[4] = {"fresh-0", "fresh-1", "\xff\xfe", "fresh-3"};
    uint64_t bad_ids[4] = {0};
    CHECK(nrt_interned_string_db_intern_batch(db, 2, bad, 4, bad_ids, &interned) == NRT_INVALID);
    CHECK(interned == 2);
    CHECK(bad_ids[0] == nrt_interned_string_db_get_id("fresh-0"));
    CHECK(bad_ids[1] == nrt_interned_string_db_get_id("fresh-1"));
    const char *with_null[2] = {"fresh-4", NULL};
    CHECK(nrt_interned_string_db_intern_batch(db, 2, with_null, 2, bad_ids, NULL) == NRT_INVALID);
    const char *empty[2] = {"fresh-5", ""};
    CHECK(nrt_interned_string_db_intern_batch(db, 2, empty, 2, bad_ids, &interned) == NRT_INVALID);
    CHECK(interned == 1);

    /* Bad arguments. */
    CHECK(nrt_interned_string_db_intern_batch(NULL, 0, names, 1, ids, NULL) == NRT_INVALID);
    CHECK(nrt_interned_string_db_intern_batch(db, 0, NULL, 1, ids, NULL) == NRT_INVALID);
    CHECK(nrt_interned_string_db_intern_batch(db, 0, names, 1, NULL, NULL) == NRT_INVALID);
    CHECK(nrt_interned_string_db_intern_batch(db, 0, NULL, 0, NULL, &interned) == NRT_SUCCESS);
    CHECK(interned == 0);
    CHECK(nrt_interned_string_db_intern_batch(db, 4, names, 1, ids, &interned) == NRT_INVALID);
    CHECK(interned == 0);
    CHECK(nrt_interned_string_db_close_nc(db, 3) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_intern_batch(db, 3, names, 1, ids, &interned) == NRT_INVALID_HANDLE);

    nrt_interned_string_db_destroy(db);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
