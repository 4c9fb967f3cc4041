/*
 * The C ABI, from C: every shim, every bad input, 256 threads registering
 * into one shard at once, a 100,000-entry round trip, the process-level
 * API, deltas through a cursor, and saving a snapshot or a delta to a file.
 * Run by capi/tests/c_api.rs (cargo test) and by .ci/run under valgrind and
 * AddressSanitizer. Prints "N passed, M failed" and exits non-zero on any
 * failure.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interned_string_db.h"
#include "check.h"


/* Known ids from the reference. */
static void test_get_id(void) {
    CHECK(nrt_interned_string_db_get_id("a") == 933183196555764ULL);
    CHECK(nrt_interned_string_db_get_id("model") == 402710577667408ULL);
    CHECK(nrt_interned_string_db_get_id("tensor_0") == 635820126496557ULL);
    CHECK(nrt_interned_string_db_get_id("Invalid interned string") == 162418631006079ULL);
    CHECK(nrt_interned_string_db_get_id("h\xc3\xa9llo") == 588180410841216ULL);
    CHECK(nrt_interned_string_db_get_id("") == 121655548788208ULL); /* real id */
    CHECK(nrt_interned_string_db_get_id(NULL) == 0);
    CHECK(nrt_interned_string_db_get_id("\xff\xfe") == 0); /* invalid UTF-8 */
    CHECK(nrt_interned_string_db_get_id("\xc3") == 0);     /* truncated UTF-8 */
}

static size_t find(const uint64_t *ids, size_t count, uint64_t id) {
    for (size_t i = 0; i < count; i++)
        if (ids[i] == id) return i;
    return count;
}

static void test_register_and_export(void) {
    InternedDataShard *shard = nrt_interned_string_db_shard_alloc();
    CHECK(shard != NULL);

    /* Bad input. */
    CHECK(nrt_interned_string_db_register_entry(NULL, 1, shard) == NRT_INVALID);
    CHECK(nrt_interned_string_db_register_entry("", 1, shard) == NRT_INVALID);
    CHECK(nrt_interned_string_db_register_entry("\xff", 1, shard) == NRT_INVALID);
    CHECK(nrt_interned_string_db_register_entry("x", 1, NULL) == NRT_INVALID);

    /* The id is the caller's, stored as given; repeats are idempotent; a
     * different string under a stored id succeeds and keeps the first. */
    CHECK(nrt_interned_string_db_register_entry("model", 402710577667408ULL, shard) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_register_entry("model", 402710577667408ULL, shard) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_register_entry("not hashed", 7, shard) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_register_entry("other", 7, shard) == NRT_SUCCESS);

    uint64_t *ids = NULL;
    char **names = NULL;
    size_t count = 99;
    CHECK(nrt_interned_string_db_get_entries(NULL, &ids, &names, &count) == NRT_INVALID);
    CHECK(nrt_interned_string_db_get_entries(shard, NULL, &names, &count) == NRT_INVALID);
    CHECK(nrt_interned_string_db_get_entries(shard, &ids, NULL, &count) == NRT_INVALID);
    CHECK(nrt_interned_string_db_get_entries(shard, &ids, &names, NULL) == NRT_INVALID);
    CHECK(nrt_interned_string_db_get_entries(shard, &ids, &names, &count) == NRT_SUCCESS);
    CHECK(count == 2);
    size_t at = find(ids, count, 7);
    CHECK(at < count && strcmp(names[at], "not hashed") == 0);
    at = find(ids, count, 402710577667408ULL);
    CHECK(at < count && strcmp(names[at], "model") == 0);
    nrt_interned_string_db_free_entries(ids, names, count);

    /* The conflict was recorded, with both strings. */
    uint64_t *cids;
    char **kept, **rejected;
    CHECK(nrt_interned_string_db_get_conflicts(shard, &cids, &kept, &rejected, &count) == NRT_SUCCESS);
    CHECK(count == 1);
    if (count == 1) {
        CHECK(cids[0] == 7);
        CHECK(strcmp(kept[0], "not hashed") == 0);
        CHECK(strcmp(rejected[0], "other") == 0);
    }
    nrt_interned_string_db_free_conflicts(cids, kept, rejected, count);
    CHECK(nrt_interned_string_db_get_conflicts(NULL, &cids, &kept, &rejected, &count) == NRT_INVALID);
    CHECK(nrt_interned_string_db_get_conflicts_dropped(shard) == 0);
    CHECK(nrt_interned_string_db_get_conflicts_dropped(NULL) == 0);

    /* Many strings under one id: the conflict log stores what fits its
     * 64 KiB budget and counts the rest; none is lost, none replaces the
     * first string. */
    char name[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(name, sizeof name, "flood_%d", i);
        CHECK(nrt_interned_string_db_register_entry(name, 7, shard) == NRT_SUCCESS);
    }
    CHECK(nrt_interned_string_db_get_conflicts(shard, &cids, &kept, &rejected, &count) == NRT_SUCCESS);
    uint64_t dropped = nrt_interned_string_db_get_conflicts_dropped(shard);
    CHECK(count > 1 && dropped > 0 && count + dropped == 2001);
    nrt_interned_string_db_free_conflicts(cids, kept, rejected, count);
    CHECK(nrt_interned_string_db_get_entries(shard, &ids, &names, &count) == NRT_SUCCESS);
    at = find(ids, count, 7);
    CHECK(count == 2 && at < count && strcmp(names[at], "not hashed") == 0);
    nrt_interned_string_db_free_entries(ids, names, count);

    /* NULL frees are logged no-ops. */
    nrt_interned_string_db_free_entries(NULL, NULL, 3);
    nrt_interned_string_db_free_conflicts(NULL, NULL, NULL, 3);
    nrt_interned_string_db_shard_free(shard);
    nrt_interned_string_db_shard_free(NULL);
}

static void test_empty_shard(void) {
    InternedDataShard *shard = nrt_interned_string_db_shard_alloc();
    uint64_t *ids = NULL;
    char **names = NULL;
    size_t count = 99;
    CHECK(nrt_interned_string_db_get_entries(shard, &ids, &names, &count) == NRT_SUCCESS);
    CHECK(count == 0);
    CHECK(ids != NULL && names != NULL); /* arrays free_entries accepts */
    nrt_interned_string_db_free_entries(ids, names, count);
    nrt_interned_string_db_shard_free(shard);
}

#define THREADS 256
#define PER_THREAD 200

struct worker {
    InternedDataShard *shard;
    int index;
    int failures;
};

static void *register_many(void *arg) {
    struct worker *w = arg;
    char name[64];
    for (int i = 0; i < PER_THREAD; i++) {
        /* Half shared by every thread, half the thread's own. */
        if (i % 2 == 0)
            snprintf(name, sizeof name, "shared/tensor_%d", i);
        else
            snprintf(name, sizeof name, "thread_%d/tensor_%d", w->index, i);
        uint64_t id = nrt_interned_string_db_get_id(name);
        if (nrt_interned_string_db_register_entry(name, id, w->shard) != NRT_SUCCESS) w->failures++;
        if (i % 50 == 0) { /* readers race the writers */
            uint64_t *ids;
            char **names;
            size_t count;
            if (nrt_interned_string_db_get_entries(w->shard, &ids, &names, &count) != NRT_SUCCESS)
                w->failures++;
            else
                nrt_interned_string_db_free_entries(ids, names, count);
        }
    }
    return NULL;
}

static void test_concurrent_register(void) {
    InternedDataShard *shard = nrt_interned_string_db_shard_alloc();
    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (struct worker){shard, t, 0};
        CHECK(pthread_create(&threads[t], NULL, register_many, &workers[t]) == 0);
    }
    int failures = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        failures += workers[t].failures;
    }
    CHECK(failures == 0);
    uint64_t *ids;
    char **names;
    size_t count;
    CHECK(nrt_interned_string_db_get_entries(shard, &ids, &names, &count) == NRT_SUCCESS);
    /* PER_THREAD/2 shared names, plus PER_THREAD/2 private ones per thread. */
    CHECK(count == PER_THREAD / 2 + (size_t)THREADS * (PER_THREAD / 2));
    int wrong = 0;
    for (size_t i = 0; i < count; i++)
        if (nrt_interned_string_db_get_id(names[i]) != ids[i]) wrong++;
    CHECK(wrong == 0);
    nrt_interned_string_db_free_entries(ids, names, count);
    nrt_interned_string_db_shard_free(shard);
}

#define ROUND_TRIP 100000

static void test_round_trip(void) {
    InternedDataShard *shard = nrt_interned_string_db_shard_alloc();
    char name[64];
    int bad = 0;
    for (int i = 0; i < ROUND_TRIP; i++) {
        snprintf(name, sizeof name, "model_%d/layer_%d/tensor_%d", i % 7, i % 97, i);
        if (nrt_interned_string_db_register_entry(name, nrt_interned_string_db_get_id(name), shard) != NRT_SUCCESS)
            bad++;
    }
    CHECK(bad == 0);
    uint64_t *ids;
    char **names;
    size_t count;
    CHECK(nrt_interned_string_db_get_entries(shard, &ids, &names, &count) == NRT_SUCCESS);
    CHECK(count == ROUND_TRIP);
    int wrong = 0;
    for (size_t i = 0; i < count; i++)
        if (nrt_interned_string_db_get_id(names[i]) != ids[i]) wrong++;
    CHECK(wrong == 0);
    nrt_interned_string_db_free_entries(ids, names, count);
    nrt_interned_string_db_shard_free(shard);
}

static void test_db_api(void) {
    NrtInternedStringDb *db = nrt_interned_string_db_create(4, 0);
    CHECK(db != NULL);
    uint64_t id = 0;
    CHECK(nrt_interned_string_db_intern(db, 0, "model", &id) == NRT_SUCCESS);
    CHECK(id == 402710577667408ULL);
    CHECK(nrt_interned_string_db_intern(db, 1, "model", &id) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_intern(db, 2, "tensor_0", &id) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_intern(db, 3, "on nc 3", &id) == NRT_SUCCESS);

    /* Bad input. */
    CHECK(nrt_interned_string_db_intern(NULL, 0, "x", &id) == NRT_INVALID);
    CHECK(nrt_interned_string_db_intern(db, 0, NULL, &id) == NRT_INVALID);
    CHECK(nrt_interned_string_db_intern(db, 0, "", &id) == NRT_INVALID);
    CHECK(nrt_interned_string_db_intern(db, 0, "\xff", &id) == NRT_INVALID);
    CHECK(nrt_interned_string_db_intern(db, 0, "x", NULL) == NRT_INVALID);
    CHECK(nrt_interned_string_db_intern(db, 4, "x", &id) == NRT_INVALID);
    CHECK(nrt_interned_string_db_close_nc(NULL, 0) == NRT_INVALID);
    CHECK(nrt_interned_string_db_close_nc(db, 4) == NRT_INVALID);
    CHECK(nrt_interned_string_db_snapshot(NULL, NULL) == NRT_INVALID);

    /* A closed NC refuses strings and is skipped by the snapshot. */
    CHECK(nrt_interned_string_db_close_nc(db, 3) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_intern(db, 3, "late", &id) == NRT_INVALID_HANDLE);

    InternedDataShard *snapshot = NULL;
    CHECK(nrt_interned_string_db_snapshot(db, NULL) == NRT_INVALID);
    CHECK(nrt_interned_string_db_snapshot(db, &snapshot) == NRT_SUCCESS);
    uint64_t *ids;
    char **names;
    size_t count;
    CHECK(nrt_interned_string_db_get_entries(snapshot, &ids, &names, &count) == NRT_SUCCESS);
    CHECK(count == 2); /* model (on two NCs, once) and tensor_0 */
    CHECK(find(ids, count, nrt_interned_string_db_get_id("on nc 3")) == count);
    nrt_interned_string_db_free_entries(ids, names, count);
    nrt_interned_string_db_shard_free(snapshot);

    CHECK(nrt_interned_string_db_open_nc(db, 3) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_snapshot(db, &snapshot) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_get_entries(snapshot, &ids, &names, &count) == NRT_SUCCESS);
    CHECK(count == 3);
    nrt_interned_string_db_free_entries(ids, names, count);
    nrt_interned_string_db_shard_free(snapshot);
    nrt_interned_string_db_destroy(db);
    nrt_interned_string_db_destroy(NULL);

    /* A real 50-bit collision (docs/design.md, "Collisions"): both names
     * get one id; the first stays, the other is reported by the snapshot. */
    db = nrt_interned_string_db_create(1, 0);
    uint64_t first = 0;
    CHECK(nrt_interned_string_db_intern(db, 0, "tensor_207462", &first) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_intern(db, 0, "tensor_63532661", &id) == NRT_SUCCESS);
    CHECK(first == 886535195763261ULL && id == first);
    CHECK(nrt_interned_string_db_snapshot(db, &snapshot) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_get_entries(snapshot, &ids, &names, &count) == NRT_SUCCESS);
    CHECK(count == 1 && strcmp(names[0], "tensor_207462") == 0);
    nrt_interned_string_db_free_entries(ids, names, count);
    char **kept, **rejected;
    CHECK(nrt_interned_string_db_get_conflicts(snapshot, &ids, &kept, &rejected, &count) == NRT_SUCCESS);
    CHECK(count == 1 && strcmp(rejected[0], "tensor_63532661") == 0);
    nrt_interned_string_db_free_conflicts(ids, kept, rejected, count);
    nrt_interned_string_db_shard_free(snapshot);
    nrt_interned_string_db_destroy(db);

    /* An absurd NC count is NULL (memory is allocated fallibly), never an
     * abort. */
    CHECK(nrt_interned_string_db_create((size_t)1 << 40, 0) == NULL);

    /* A byte cap reached is NRT_RESOURCE, and loses nothing stored. */
    db = nrt_interned_string_db_create(1, 10);
    CHECK(nrt_interned_string_db_intern(db, 0, "0123456789", &id) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_intern(db, 0, "x", &id) == NRT_RESOURCE);
    CHECK(nrt_interned_string_db_intern(db, 0, "0123456789", &id) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_snapshot(db, &snapshot) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_get_entries(snapshot, &ids, &names, &count) == NRT_SUCCESS);
    CHECK(count == 1 && strcmp(names[0], "0123456789") == 0);
    nrt_interned_string_db_free_entries(ids, names, count);
    nrt_interned_string_db_shard_free(snapshot);
    nrt_interned_string_db_destroy(db);
}

/* The number of entries a shard exports (freeing them), or -1 on an error. */
static long exported(InternedDataShard *shard) {
    uint64_t *ids;
    char **names;
    size_t count;
    if (nrt_interned_string_db_get_entries(shard, &ids, &names, &count) != NRT_SUCCESS)
        return -1;
    nrt_interned_string_db_free_entries(ids, names, count);
    return (long)count;
}

static void test_deltas(void) {
    NrtInternedStringDb *db = nrt_interned_string_db_create(2, 0);
    NrtInternedStringDbCursor *cursor = nrt_interned_string_db_cursor_create();
    CHECK(db != NULL && cursor != NULL);
    uint64_t id;
    InternedDataShard *delta = NULL;
    CHECK(nrt_interned_string_db_delta(NULL, cursor, &delta) == NRT_INVALID);
    CHECK(nrt_interned_string_db_delta(db, NULL, &delta) == NRT_INVALID);
    CHECK(nrt_interned_string_db_delta(db, cursor, NULL) == NRT_INVALID);
    CHECK(delta == NULL);

    CHECK(nrt_interned_string_db_intern(db, 0, "a", &id) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_delta(db, cursor, &delta) == NRT_SUCCESS);
    CHECK(exported(delta) == 1);
    nrt_interned_string_db_shard_free(delta);
    /* "a" again on another NC is not delivered again; "b" is new. */
    CHECK(nrt_interned_string_db_intern(db, 1, "a", &id) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_intern(db, 1, "b", &id) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_delta(db, cursor, &delta) == NRT_SUCCESS);
    uint64_t *ids;
    char **names;
    size_t count;
    CHECK(nrt_interned_string_db_get_entries(delta, &ids, &names, &count) == NRT_SUCCESS);
    CHECK(count == 1 && strcmp(names[0], "b") == 0);
    nrt_interned_string_db_free_entries(ids, names, count);
    nrt_interned_string_db_shard_free(delta);
    /* A closed NC's entries arrive once it reopens. */
    CHECK(nrt_interned_string_db_intern(db, 1, "c", &id) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_close_nc(db, 1) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_delta(db, cursor, &delta) == NRT_SUCCESS);
    CHECK(exported(delta) == 0);
    nrt_interned_string_db_shard_free(delta);
    CHECK(nrt_interned_string_db_open_nc(db, 1) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_delta(db, cursor, &delta) == NRT_SUCCESS);
    CHECK(exported(delta) == 1);
    nrt_interned_string_db_shard_free(delta);

    nrt_interned_string_db_cursor_free(cursor);
    nrt_interned_string_db_cursor_free(NULL);
    nrt_interned_string_db_destroy(db);
}

static void test_save_snapshot(void) {
    const char *path = "target/c-api-test-snapshot.isdb";
    NrtInternedStringDb *db = nrt_interned_string_db_create(2, 0);
    uint64_t id;
    CHECK(nrt_interned_string_db_intern(db, 0, "model", &id) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_save_snapshot(NULL, path) == NRT_INVALID);
    CHECK(nrt_interned_string_db_save_snapshot(db, NULL) == NRT_INVALID);
    CHECK(nrt_interned_string_db_save_snapshot(db, "") == NRT_INVALID);
    CHECK(nrt_interned_string_db_save_snapshot(db, "\xff") == NRT_INVALID);
    CHECK(nrt_interned_string_db_save_snapshot(db, "target/no/such/dir/x.isdb") == NRT_RESOURCE);
    remove(path);
    CHECK(nrt_interned_string_db_save_snapshot(db, path) == NRT_SUCCESS);
    FILE *file = fopen(path, "rb");
    CHECK(file != NULL);
    if (file) {
        char magic[8] = {0};
        CHECK(fread(magic, 1, 8, file) == 8 && memcmp(magic, "ISDBSNAP", 8) == 0);
        CHECK(fseek(file, 0, SEEK_END) == 0);
        /* Header 64, one entry record 16 + 5 bytes, two section checksums. */
        CHECK(ftell(file) == 64 + 16 + 5 + 4 + 4);
        fclose(file);
    }
    remove(path);
    nrt_interned_string_db_destroy(db);
}

/* The size of the file at `path`, or -1. */
static long file_size(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file)
        return -1;
    long size = fseek(file, 0, SEEK_END) == 0 ? ftell(file) : -1;
    fclose(file);
    return size;
}

static void test_save_delta(void) {
    const char *path = "target/c-api-test-delta.isdb";
    NrtInternedStringDb *db = nrt_interned_string_db_create(2, 0);
    NrtInternedStringDbCursor *cursor = nrt_interned_string_db_cursor_create();
    CHECK(db != NULL && cursor != NULL);
    uint64_t id;
    CHECK(nrt_interned_string_db_intern(db, 0, "model", &id) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_intern(db, 1, "model", &id) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_save_delta(NULL, cursor, path) == NRT_INVALID);
    CHECK(nrt_interned_string_db_save_delta(db, NULL, path) == NRT_INVALID);
    CHECK(nrt_interned_string_db_save_delta(db, cursor, NULL) == NRT_INVALID);
    CHECK(nrt_interned_string_db_save_delta(db, cursor, "") == NRT_INVALID);
    CHECK(nrt_interned_string_db_save_delta(db, cursor, "\xff") == NRT_INVALID);
    CHECK(nrt_interned_string_db_save_delta(db, cursor, "target/no/such/dir/x.isdb") == NRT_RESOURCE);
    /* The failed save lost nothing: the next delta holds "model" (once). */
    remove(path);
    CHECK(nrt_interned_string_db_save_delta(db, cursor, path) == NRT_SUCCESS);
    /* Header 64, one entry record 16 + 5 bytes, two section checksums. */
    CHECK(file_size(path) == 64 + 16 + 5 + 4 + 4);
    CHECK(nrt_interned_string_db_save_delta(db, cursor, path) == NRT_SUCCESS);
    CHECK(file_size(path) == 64 + 4 + 4);
    CHECK(nrt_interned_string_db_intern(db, 1, "b", &id) == NRT_SUCCESS);
    CHECK(nrt_interned_string_db_save_delta(db, cursor, path) == NRT_SUCCESS);
    CHECK(file_size(path) == 64 + 16 + 1 + 4 + 4);
    remove(path);
    nrt_interned_string_db_cursor_free(cursor);
    nrt_interned_string_db_destroy(db);
}

int main(void) {
    test_get_id();
    test_register_and_export();
    test_empty_shard();
    test_concurrent_register();
    test_round_trip();
    test_db_api();
    test_deltas();
    test_save_snapshot();
    test_save_delta();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
