/*
 * A consumer of the Arrow C Data Interface that shares no code with Arrow or jemalloc.NET: the two
 * structures below are declared from the interface's specification (their layout is the ABI), and
 * read_export, read_string_export and read_dictionary_export each read one exported array (primitive,
 * string or binary, dictionary-encoded strings) the way any C library would, then release it.
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

/* Folds one value's bytes into the hash, then the marker that ends a value. */
static uint32_t fnv_value(uint32_t hash, const uint8_t *data, int64_t start, int64_t end)
{
    for (int64_t b = start; b < end; b++) {
        hash = fnv(hash, data[b]);
    }
    return fnv(hash, 0x1FF);
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
            out->hash = fnv_value(out->hash, data, start, end);
            out->bytes += end - start;
        }
    }

    array->release(array);
    schema->release(schema);
    out->released = array->release == NULL && schema->release == NULL;
    return status;
}

/* The schema flags the specification defines. */
#define FLAG_DICTIONARY_ORDERED 1
#define FLAG_NULLABLE 2
#define FLAG_MAP_KEYS_SORTED 4

/* What the consumer saw of a dictionary-encoded string or binary array. */
struct dictionary_result {
    int64_t length;
    int64_t null_count;          /* rows null by the indices' validity bitmap */
    int64_t declared_null_count; /* the producer's null_count of the indices (-1: not computed) */
    int64_t null_value_rows;     /* rows whose bit is set but whose dictionary value is null: null rows as well */
    int64_t dictionary_length;
    int64_t bytes;               /* bytes of the rows' values, counted once a row */
    const void *indices_address; /* buffers[1] of the indices */
    const void *validity_address;/* buffers[0] of the indices, NULL when the producer gave no bitmap */
    uint32_t hash;               /* as string_result's, over the rows' values in row order */
    int32_t zero_copy;           /* buffers[1] is the address the caller named */
    int32_t released;
    int32_t ordered;             /* the schema's dictionary-ordered flag */
    char format[8];              /* the indices' format */
    char value_format[8];        /* the dictionary's format */
    char error[128];
};

static int64_t offset_at(const void *offsets, int large, int64_t index)
{
    return large ? ((const int64_t *)offsets)[index] : ((const int32_t *)offsets)[index];
}

/* Checks the two schemas: int32 indices naming a utf8, large utf8, binary or large binary dictionary. */
static int check_dictionary_schema(const struct ArrowSchema *schema, struct dictionary_result *out, int *large)
{
    const struct ArrowSchema *values = schema->dictionary;
    if (strcmp(schema->format, "i") != 0) {
        snprintf(out->error, sizeof out->error, "the index format %s is not int32 (i)", schema->format);
        return 1;
    }
    if (values == NULL || values->release == NULL) {
        snprintf(out->error, sizeof out->error, "a dictionary-encoded schema names its value type in dictionary; it has none");
        return 1;
    }
    snprintf(out->value_format, sizeof out->value_format, "%s", values->format);
    *large = strcmp(values->format, "U") == 0 || strcmp(values->format, "Z") == 0;
    if (!*large && strcmp(values->format, "u") != 0 && strcmp(values->format, "z") != 0) {
        snprintf(out->error, sizeof out->error, "the dictionary's format %s is no string or binary format", values->format);
        return 1;
    }
    /* Dictionary-ordered belongs to the dictionary-encoded (index) schema, map-keys-sorted to maps only. */
    if ((schema->flags & ~(int64_t)(FLAG_DICTIONARY_ORDERED | FLAG_NULLABLE)) != 0) {
        snprintf(out->error, sizeof out->error, "the index schema's flags %lld are not dictionary-ordered and nullable", (long long)schema->flags);
        return 1;
    }
    if ((values->flags & ~(int64_t)FLAG_NULLABLE) != 0) {
        snprintf(out->error, sizeof out->error, "the value schema's flags %lld: a string type is neither ordered nor a map", (long long)values->flags);
        return 1;
    }
    if (schema->n_children != 0 || values->n_children != 0 || values->dictionary != NULL) {
        snprintf(out->error, sizeof out->error, "a dictionary of strings has no children and no nested dictionary");
        return 1;
    }
    out->ordered = (schema->flags & FLAG_DICTIONARY_ORDERED) != 0;
    return 0;
}

/* Checks the dictionary array's shape and every offset it has (so that no row's read leaves its data). */
static int check_dictionary_values(const struct ArrowArray *values, int large, struct dictionary_result *out)
{
    if (values == NULL || values->release == NULL) {
        snprintf(out->error, sizeof out->error, "the array has no dictionary, or a released one");
        return 1;
    }
    if (values->n_buffers != 3 || values->n_children != 0 || values->dictionary != NULL) {
        snprintf(out->error, sizeof out->error, "the dictionary has %lld buffers; a string array has three and no children", (long long)values->n_buffers);
        return 1;
    }
    if (values->length < 0 || values->offset < 0 || values->length > INT64_MAX - 1 - values->offset) {
        snprintf(out->error, sizeof out->error, "the dictionary's length or offset is negative");
        return 1;
    }
    if (values->null_count != 0 && values->length > 0 && values->buffers[0] == NULL) {
        snprintf(out->error, sizeof out->error, "the dictionary has nulls and no validity bitmap");
        return 1;
    }
    out->dictionary_length = values->length;
    if (values->length == 0 && values->buffers[1] == NULL) {
        return 0;
    }
    if (values->buffers[1] == NULL) {
        snprintf(out->error, sizeof out->error, "the dictionary has values and no offsets");
        return 1;
    }
    int64_t first = offset_at(values->buffers[1], large, values->offset);
    int64_t last = offset_at(values->buffers[1], large, values->offset + values->length);
    if (first < 0 || last < first || (last > first && values->buffers[2] == NULL)) {
        snprintf(out->error, sizeof out->error, "the dictionary's offsets run from %lld to %lld", (long long)first, (long long)last);
        return 1;
    }
    for (int64_t k = 0; k < values->length; k++) {
        int64_t start = offset_at(values->buffers[1], large, values->offset + k);
        int64_t end = offset_at(values->buffers[1], large, values->offset + k + 1);
        if (start < first || end < start || end > last) {
            snprintf(out->error, sizeof out->error, "dictionary value %lld's offsets leave the data", (long long)k);
            return 1;
        }
    }
    return 0;
}

/*
 * Reads an exported dictionary array in place: int32 indices (format "i", two buffers: validity and
 * indices) whose schema->dictionary is a utf8 ("u"), large utf8 ("U"), binary ("z") or large binary ("Z")
 * type and whose array->dictionary is that array (three buffers). Honours the offset of both arrays and
 * both validity bitmaps (a row naming a null value is null). Every valid row's index is checked against
 * the dictionary before its value is read: an index outside it is an error, never a read. Hashes the rows'
 * values as read_string_export does, checks that the index buffer is expected_indices, and releases both
 * structures once (the parents only: their releases release the dictionaries).
 */
int read_dictionary_export(struct ArrowSchema *schema, struct ArrowArray *array, const void *expected_indices, struct dictionary_result *out)
{
    memset(out, 0, sizeof *out);
    if (schema == NULL || array == NULL || schema->release == NULL || array->release == NULL) {
        snprintf(out->error, sizeof out->error, "the schema or the array is missing or released already");
        return 1;
    }

    int large = 0;
    snprintf(out->format, sizeof out->format, "%s", schema->format);
    int status = check_dictionary_schema(schema, out, &large);
    if (status == 0) {
        if (array->n_buffers != 2 || array->n_children != 0) {
            snprintf(out->error, sizeof out->error, "the indices have %lld buffers; an int32 array has two and no children", (long long)array->n_buffers);
            status = 1;
        } else if (array->length < 0 || array->offset < 0 || array->length > INT64_MAX - array->offset) {
            snprintf(out->error, sizeof out->error, "the indices' length or offset is negative");
            status = 1;
        } else if (array->null_count != 0 && array->length > 0 && array->buffers[0] == NULL) {
            snprintf(out->error, sizeof out->error, "the indices have nulls and no validity bitmap");
            status = 1;
        } else if (array->length > 0 && array->buffers[1] == NULL) {
            snprintf(out->error, sizeof out->error, "the indices have rows and no index buffer");
            status = 1;
        } else {
            status = check_dictionary_values(array->dictionary, large, out);
        }
    }

    if (status == 0) {
        const struct ArrowArray *values = array->dictionary;
        const uint8_t *validity = (const uint8_t *)array->buffers[0];
        const int32_t *indices = (const int32_t *)array->buffers[1];
        const uint8_t *value_validity = (const uint8_t *)values->buffers[0];
        const uint8_t *data = (const uint8_t *)values->buffers[2];
        out->length = array->length;
        out->declared_null_count = array->null_count;
        out->indices_address = indices;
        out->validity_address = validity;
        out->zero_copy = (const void *)indices == expected_indices;
        out->hash = 2166136261u;
        for (int64_t i = 0; i < array->length; i++) {
            int64_t row = array->offset + i;
            if (!is_valid(validity, row)) {
                out->null_count++;
                out->hash = fnv(out->hash, 0x100);
                continue;
            }
            int32_t index = indices[row];
            if (index < 0 || index >= values->length) {
                snprintf(out->error, sizeof out->error, "row %lld's index %d names no value of the dictionary's %lld",
                         (long long)i, (int)index, (long long)values->length);
                status = 1;
                break;
            }
            int64_t value = values->offset + index;
            if (!is_valid(value_validity, value)) {
                out->null_value_rows++;
                out->hash = fnv(out->hash, 0x100);
                continue;
            }
            int64_t start = offset_at(values->buffers[1], large, value);
            int64_t end = offset_at(values->buffers[1], large, value + 1);
            out->hash = fnv_value(out->hash, data, start, end);
            out->bytes += end - start;
        }
    }

    /* The dictionaries belong to their parents: the parents' releases release them. */
    array->release(array);
    schema->release(schema);
    out->released = array->release == NULL && schema->release == NULL;
    return status;
}
