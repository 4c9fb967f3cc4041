/*
 * interned-string-db from C: intern a few names on two NeuronCores, take a
 * snapshot, print the id -> name map. Build and run: see examples/c/README.md.
 */
#include <inttypes.h>
#include <stdio.h>

#include "interned_string_db.h"

int main(void) {
    NrtInternedStringDb *db = nrt_interned_string_db_create(0, 0); /* 256 NCs, no cap */
    if (db == NULL) return 1;

    const char *names[] = {"model", "model_3/layer_41/tensor_1207", "span/forward"};
    for (size_t nc = 0; nc < 2; nc++) {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            uint64_t id;
            NRT_STATUS status = nrt_interned_string_db_intern(db, nc, names[i], &id);
            if (status != NRT_SUCCESS) {
                fprintf(stderr, "intern failed: %d\n", (int)status);
                return 1;
            }
        }
    }

    /* Ids are a pure function of the bytes: no table needed to compute one. */
    printf("id of \"model\" without the db: %" PRIu64 "\n", nrt_interned_string_db_get_id("model"));

    InternedDataShard *snapshot;
    uint64_t *ids;
    char **strings;
    size_t count;
    if (nrt_interned_string_db_snapshot(db, &snapshot) != NRT_SUCCESS ||
        nrt_interned_string_db_get_entries(snapshot, &ids, &strings, &count) != NRT_SUCCESS)
        return 1;
    printf("snapshot: %zu entries (the same names on two NCs merge into one)\n", count);
    for (size_t i = 0; i < count; i++) printf("%" PRIu64 "\t%s\n", ids[i], strings[i]);

    nrt_interned_string_db_free_entries(ids, strings, count); /* never free() them */
    nrt_interned_string_db_shard_free(snapshot);
    nrt_interned_string_db_destroy(db);
    return 0;
}
