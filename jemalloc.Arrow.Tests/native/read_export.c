/*
 * A consumer of the Arrow C Data Interface that shares no code with Arrow or jemalloc.NET: the two
 * structures below are declared from the interface's specification (their layout is the ABI), and
 * read_export reads one exported primitive array the way any C library would, then releases it.
 * The test compiles it with gcc into a shared library and calls it through NativeLibrary.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};

/* What the consumer saw; the test compares it with what it computed in C#. */
struct read_result {
    int64_t length;
    int64_t null_count;          /* counted from the validity bitmap */
    int64_t declared_null_count; /* the producer's null_count */
    int64_t int_sum;             /* format "l": the sum of the valid values */
    double double_sum;           /* format "g": likewise */
    const void *values_address;  /* buffers[1] */
    const void *validity_address;/* buffers[0], NULL when the producer gave no bitmap */
    int32_t zero_copy;           /* buffers[1] is the address the caller named */
    int32_t released;            /* both release callbacks ran and marked their structure released */
    char format[8];
    char error[128];
    uint64_t wide_sum_low;       /* format "d:p,s": the low 64 bits of the sum of the valid decimal128 values;
                                    "w:n": the sum of the valid values' bytes */
    int64_t wide_sum_high;       /* format "d:p,s": the high 64 bits of that 128-bit sum */
};

static int fail(struct read_result *out, const char *message)
{
    snprintf(out->error, sizeof out->error, "%s", message);
    return 1;
}

static int is_valid(const uint8_t *validity, int64_t index)
{
    return validity == NULL || ((validity[index >> 3] >> (index & 7)) & 1) != 0;
}

/* Adds a little-endian 128-bit two's complement value to the result's 128-bit sum. */
static void add_decimal128(struct read_result *out, const uint8_t *value)
{
    uint64_t low;
    int64_t high;
    memcpy(&low, value, sizeof low);
    memcpy(&high, value + 8, sizeof high);
    uint64_t sum = out->wide_sum_low + low;
    out->wide_sum_high = (int64_t)((uint64_t)out->wide_sum_high + (uint64_t)high + (sum < low ? 1u : 0u));
    out->wide_sum_low = sum;
}

/*
 * Reads an exported int64 ("l"), double ("g"), decimal128 ("d:p,s") or fixed-size binary ("w:n") array: sums its valid values, counts its nulls,
 * checks that its value buffer is expected_values (no copy was made), and calls both release
 * callbacks exactly once. Returns 0, or 1 with out->error saying what was wrong (the structures
 * are still released when they were not released already).
 */
int read_export(struct ArrowSchema *schema, struct ArrowArray *array, const void *expected_values, struct read_result *out)
{
    memset(out, 0, sizeof *out);
    if (schema == NULL || array == NULL || schema->release == NULL || array->release == NULL) {
        return fail(out, "the schema or the array is missing or released already");
    }

    int status = 0;
    snprintf(out->format, sizeof out->format, "%s", schema->format);
    int is_int64 = strcmp(schema->format, "l") == 0;
    int is_double = strcmp(schema->format, "g") == 0;
    /* "d:p,s" and "d:p,s,128" are decimal128; a third field of another width is not. */
    const char *third = strchr(schema->format, ',') == NULL ? NULL : strchr(strchr(schema->format, ',') + 1, ',');
    int is_decimal = strncmp(schema->format, "d:", 2) == 0 && (third == NULL || strcmp(third, ",128") == 0);
    long width = strncmp(schema->format, "w:", 2) == 0 ? strtol(schema->format + 2, NULL, 10) : 0;
    if (!is_int64 && !is_double && !is_decimal && width <= 0) {
        status = fail(out, "the format is not int64 (l), double (g), decimal128 (d:p,s) or fixed-size binary (w:n)");
    } else if (array->n_buffers != 2 || array->n_children != 0 || schema->n_children != 0) {
        status = fail(out, "a primitive array has two buffers and no children");
    } else if (array->null_count != 0 && array->buffers[0] == NULL) {
        status = fail(out, "an array with nulls has no validity bitmap");
    } else {
        const uint8_t *validity = (const uint8_t *)array->buffers[0];
        out->length = array->length;
        out->declared_null_count = array->null_count;
        out->values_address = array->buffers[1];
        out->validity_address = validity;
        out->zero_copy = array->buffers[1] == expected_values;
        for (int64_t i = 0; i < array->length; i++) {
            int64_t index = array->offset + i;
            if (!is_valid(validity, index)) {
                out->null_count++;
            } else if (is_int64) {
                out->int_sum += ((const int64_t *)array->buffers[1])[index];
            } else if (is_decimal) {
                add_decimal128(out, (const uint8_t *)array->buffers[1] + index * 16);
            } else if (width > 0) {
                const uint8_t *value = (const uint8_t *)array->buffers[1] + index * width;
                for (long b = 0; b < width; b++) {
                    out->wide_sum_low += value[b];
                }
            } else {
                out->double_sum += ((const double *)array->buffers[1])[index];
            }
        }
    }

    /* The consumer owns both structures now: release each once; a release marks its structure released. */
    array->release(array);
    schema->release(schema);
    out->released = array->release == NULL && schema->release == NULL;
    return status;
}

/* What the consumer saw of a string or binary array. */
struct string_result {
    int64_t length;
    int64_t null_count;          /* counted from the validity bitmap */
    int64_t bytes;               /* bytes of the valid values */
    uint32_t hash;               /* FNV-1a over the valid values in row order, 0x100 for a null, 0x1FF after a value */
    int32_t zero_copy;           /* buffers[2] (the data) is the address the caller named */
    int32_t released;
    char format[8];
    char error[128];
};

static uint32_t fnv(uint32_t hash, uint32_t value)
{
    return (hash ^ value) * 16777619u;
}

/*
 * Reads an exported utf8 ("u"), large utf8 ("U"), binary ("z") or large binary ("Z") array in place:
 * three buffers (validity, offsets, data), 32- or 64-bit offsets by the format. Checks that the data
 * buffer is expected_data and that every offset lies inside the bytes the last offset declares, hashes
 * the values, and releases both structures once.
 */
int read_string_export(struct ArrowSchema *schema, struct ArrowArray *array, const void *expected_data, struct string_result *out)
{
    memset(out, 0, sizeof *out);
    if (schema == NULL || array == NULL || schema->release == NULL || array->release == NULL) {
        snprintf(out->error, sizeof out->error, "the schema or the array is missing or released already");
        return 1;
    }

    int status = 0;
    snprintf(out->format, sizeof out->format, "%s", schema->format);
    int large = strcmp(schema->format, "U") == 0 || strcmp(schema->format, "Z") == 0;
    int small = strcmp(schema->format, "u") == 0 || strcmp(schema->format, "z") == 0;
    if (!large && !small) {
        snprintf(out->error, sizeof out->error, "the format %s is no string or binary format", schema->format);
        status = 1;
    } else if (array->n_buffers != 3 || array->n_children != 0) {
        snprintf(out->error, sizeof out->error, "a string array has three buffers and no children");
        status = 1;
    } else {
        const uint8_t *validity = (const uint8_t *)array->buffers[0];
        const uint8_t *data = (const uint8_t *)array->buffers[2];
        out->length = array->length;
        out->zero_copy = array->buffers[2] == expected_data;
        out->hash = 2166136261u;
        int64_t first = large ? ((const int64_t *)array->buffers[1])[array->offset] : ((const int32_t *)array->buffers[1])[array->offset];
        int64_t last = large ? ((const int64_t *)array->buffers[1])[array->offset + array->length] : ((const int32_t *)array->buffers[1])[array->offset + array->length];
        for (int64_t i = 0; i < array->length && status == 0; i++) {
            int64_t index = array->offset + i;
            if (!is_valid(validity, index)) {
                out->null_count++;
                out->hash = fnv(out->hash, 0x100);
                continue;
            }
            int64_t start = large ? ((const int64_t *)array->buffers[1])[index] : ((const int32_t *)array->buffers[1])[index];
            int64_t end = large ? ((const int64_t *)array->buffers[1])[index + 1] : ((const int32_t *)array->buffers[1])[index + 1];
            if (start < first || end < start || end > last) {
                snprintf(out->error, sizeof out->error, "row %lld's offsets leave the data", (long long)i);
                status = 1;
                break;
            }
            for (int64_t b = start; b < end; b++) {
                out->hash = fnv(out->hash, data[b]);
            }
            out->hash = fnv(out->hash, 0x1FF);
            out->bytes += end - start;
        }
    }

    array->release(array);
    schema->release(schema);
    out->released = array->release == NULL && schema->release == NULL;
    return status;
}
