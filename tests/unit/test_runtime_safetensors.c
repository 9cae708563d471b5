/* test_runtime_safetensors.c: the JSON parser and the safetensors reader/writer:
 * round trip, every kind of damage rejected with a message, fuzzed input
 * never crashing, and atomic replacement. */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/json.h"
#include "runtime/rng.h"
#include "runtime/safetensors.h"

/* ---- JSON ---- */

static int parse(plc_arena *a, const char *text, const plc_json **out, char *err)
{
    return plc_json_parse(a, text, strlen(text), out, err, 256);
}

static void test_json_valid(void)
{
    plc_arena a;
    plc_arena_init(&a);
    const plc_json *v;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(parse(&a, " {\"a\": [1, -2, 3.5e2, true, false, null], \"b\\n\\u00e9\\ud83d\\ude00\": "
                                    "\"x\\\"y\\\\z\\/\", \"big\": 9007199254740993, \"e\": {}} ",
                                &v, err),
                          0);
    CU_ASSERT_EQUAL(v->type, PLC_JSON_OBJECT);
    CU_ASSERT_EQUAL(v->n, 4);
    const plc_json *arr = plc_json_get(v, "a");
    CU_ASSERT_FATAL(arr && arr->type == PLC_JSON_ARRAY && arr->n == 6);
    CU_ASSERT(arr->child->is_int && arr->child->integer == 1);
    CU_ASSERT(arr->child->next->integer == -2);
    CU_ASSERT(!arr->child->next->next->is_int && arr->child->next->next->number == 350.0);
    CU_ASSERT(arr->child->next->next->next->type == PLC_JSON_BOOL && arr->child->next->next->next->boolean);
    CU_ASSERT(arr->child->next->next->next->next->next->type == PLC_JSON_NULL);
    const plc_json *s = plc_json_get(v, "b\n\xc3\xa9\xf0\x9f\x98\x80"); /* é and U+1F600 in UTF-8 */
    CU_ASSERT_FATAL(s != NULL);
    CU_ASSERT_STRING_EQUAL(s->str, "x\"y\\z/");
    CU_ASSERT_EQUAL(plc_json_get(v, "big")->integer, 9007199254740993LL); /* exact beyond 2^53 */
    CU_ASSERT_EQUAL(plc_json_get(v, "e")->n, 0);
    CU_ASSERT_PTR_NULL(plc_json_get(v, "missing"));
    CU_ASSERT_EQUAL(parse(&a, "-0.0", &v, err), 0);
    CU_ASSERT_EQUAL(parse(&a, "1e400", &v, err), 0); /* valid grammar; the value overflows to inf */
    CU_ASSERT_EQUAL(parse(&a, "99999999999999999999", &v, err), 0);
    CU_ASSERT_FALSE(v->is_int); /* too big for int64: a number, not an integer */
    plc_arena_free(&a);
}

static void test_json_invalid(void)
{
    static const char *const bad[] = {
        "", " ", "{", "}", "[1,]", "[1 2]", "{\"a\" 1}", "{\"a\":}", "{a:1}", "{\"a\":1,}", "01", "1.", ".5",
        "-", "+1", "1e", "1e+", "tru", "nul", "\"abc", "\"a\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00x\"",
        "\"a\x01\"", "\"\\u0000\"", "[1] x", "{\"a\":1}}", "\"\\", "\xff", "[\"\\ud800\\u0041\"]",
    };
    plc_arena a;
    plc_arena_init(&a);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const plc_json *v;
        char err[256] = "";
        int rc = parse(&a, bad[i], &v, err);
        CU_ASSERT_EQUAL(rc, -1);
        if (rc != -1) fprintf(stderr, "accepted invalid JSON: %s\n", bad[i]);
        CU_ASSERT(strncmp(err, "JSON byte ", 10) == 0);
    }
    /* nesting is limited, deep input fails cleanly instead of overflowing the stack */
    char deep[10001];
    memset(deep, '[', 10000);
    deep[10000] = 0;
    const plc_json *v;
    char err[256];
    CU_ASSERT_EQUAL(parse(&a, deep, &v, err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "nesting"));
    plc_arena_free(&a);
}

/* ---- safetensors ---- */

static char tmpdir[256];

static int suite_init(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/plc_st_test.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int suite_clean(void)
{
    DIR *d = opendir(tmpdir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)))
            if (e->d_name[0] != '.') {
                snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(tmpdir);
    return 0;
}

static int count_files(void)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    if (d) closedir(d);
    return n;
}

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    *size = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

static float wa[6] = {1, 2, 3, 4, 5, 6};
static int32_t wb[3] = {-7, 8, 2147483647};
static double wc[1] = {0.125};

static int write_sample(const char *path)
{
    plc_st_writer w;
    plc_st_writer_init(&w);
    char err[256];
    int64_t sa[2] = {2, 3}, sb[1] = {3}, sz[2] = {0, 4};
    int rc = plc_st_writer_add(&w, "zeta.weight", PLC_ST_F32, 2, sa, wa, err, sizeof err);
    rc |= plc_st_writer_add(&w, "alpha", PLC_ST_I32, 1, sb, wb, err, sizeof err);
    rc |= plc_st_writer_add(&w, "scalar", PLC_ST_F64, 0, NULL, wc, err, sizeof err);
    rc |= plc_st_writer_add(&w, "empty", PLC_ST_F32, 2, sz, NULL, err, sizeof err);
    plc_st_writer_meta(&w, "format", "pt");
    plc_st_writer_meta(&w, "step", "1");
    plc_st_writer_meta(&w, "step", "12"); /* the later value wins */
    plc_st_writer_meta(&w, "quote\"d", "line\nbreak");
    rc |= plc_st_writer_save(&w, path, err, sizeof err);
    if (rc) fprintf(stderr, "write_sample: %s\n", err);
    plc_st_writer_free(&w);
    return rc;
}

static void test_round_trip(void)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/rt.safetensors", tmpdir);
    CU_ASSERT_EQUAL_FATAL(write_sample(path), 0);
    plc_st_file f;
    CU_ASSERT_EQUAL_FATAL(plc_st_open(&f, path, err, sizeof err), 0);
    CU_ASSERT_EQUAL(f.n_tensors, 4);
    CU_ASSERT_STRING_EQUAL(f.tensors[0].name, "alpha"); /* sorted */
    CU_ASSERT_STRING_EQUAL(plc_st_meta_get(&f, "step"), "12");
    CU_ASSERT_STRING_EQUAL(plc_st_meta_get(&f, "format"), "pt");
    CU_ASSERT_STRING_EQUAL(plc_st_meta_get(&f, "quote\"d"), "line\nbreak");
    float a[6];
    int64_t sa[2] = {2, 3};
    CU_ASSERT_EQUAL(plc_st_read(&f, "zeta.weight", PLC_ST_F32, 2, sa, a, err, sizeof err), 0);
    CU_ASSERT_EQUAL(memcmp(a, wa, sizeof a), 0);
    int32_t b[3];
    int64_t sb[1] = {3};
    CU_ASSERT_EQUAL(plc_st_read(&f, "alpha", PLC_ST_I32, 1, sb, b, err, sizeof err), 0);
    CU_ASSERT_EQUAL(memcmp(b, wb, sizeof b), 0);
    const plc_st_tensor *t = plc_st_find(&f, "scalar");
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT(t->ndim == 0 && t->numel == 1 && t->dtype == PLC_ST_F64);
    double c;
    memcpy(&c, plc_st_data(&f, t), sizeof c);
    CU_ASSERT_EQUAL(c, 0.125);
    t = plc_st_find(&f, "empty");
    CU_ASSERT_FATAL(t != NULL);
    CU_ASSERT(t->numel == 0 && t->begin == t->end);
    /* the data section starts 8-byte aligned */
    CU_ASSERT_EQUAL(((const unsigned char *)f.data - (const unsigned char *)f.map) % 8, 0);
    /* wrong dtype, wrong shape, missing name: messages say which */
    CU_ASSERT_EQUAL(plc_st_read(&f, "alpha", PLC_ST_F32, 1, sb, b, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "dtype I32, expected F32"));
    int64_t wrong[2] = {3, 2};
    CU_ASSERT_EQUAL(plc_st_read(&f, "zeta.weight", PLC_ST_F32, 2, wrong, a, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "shape [2, 3], expected [3, 2]"));
    CU_ASSERT_EQUAL(plc_st_read(&f, "nope", PLC_ST_F32, 2, wrong, a, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "missing"));
    plc_st_close(&f);

    /* the header is the JSON we expect, byte for byte at the start */
    size_t size;
    unsigned char *raw = slurp(path, &size);
    CU_ASSERT_FATAL(raw != NULL);
    const char *expect = "{\"__metadata__\":{\"format\":\"pt\",\"quote\\\"d\":\"line\\u000abreak\",\"step\":\"12\"},"
                         "\"alpha\":{\"dtype\":\"I32\",\"shape\":[3],\"data_offsets\":[0,12]},";
    CU_ASSERT_EQUAL(memcmp(raw + 8, expect, strlen(expect)), 0);
    free(raw);
}

/* builds a file image from a header text and `data` zero bytes */
static unsigned char *image(const char *header, size_t data, size_t *size)
{
    size_t n = strlen(header);
    *size = 8 + n + data;
    unsigned char *b = calloc(1, *size);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)n >> (8 * i));
    memcpy(b + 8, header, n);
    return b;
}

static void expect_reject(const char *header, size_t data, const char *why)
{
    size_t size;
    unsigned char *b = image(header, data, &size);
    plc_st_file f;
    char err[512] = "";
    int rc = plc_st_parse(&f, b, size, err, sizeof err);
    CU_ASSERT_EQUAL(rc, -1);
    if (rc == 0) {
        fprintf(stderr, "accepted damaged header: %s\n", header);
        plc_st_close(&f);
    } else if (!strstr(err, why)) {
        fprintf(stderr, "message '%s' lacks '%s'\n", err, why);
        CU_FAIL("error message");
    }
    free(b);
}

static void test_damage_rejected(void)
{
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, "past the data section");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "needs more than the 8 bytes");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8, "needs 4 bytes but data_offsets span 8");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                  "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                  12, "overlaps");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "gap");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, "cover 4");
    expect_reject("{\"a\":{\"dtype\":\"Q7\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "unsupported dtype");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "non-negative");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4, "non-negative");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4, "reversed");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, "two non-negative");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "data_offsets");
    expect_reject("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "dtype");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4, "unknown field");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "twice");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                  "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                  8, "appears twice");
    expect_reject("{\"a\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,0]}}",
                  0, "needs more than the 0 bytes");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, "dimensions");
    expect_reject("{\"__metadata__\":{\"k\":1}}", 0, "not a string");
    expect_reject("{\"__metadata__\":[]}", 0, "not an object");
    expect_reject("{\"\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "empty name");
    expect_reject("[]", 0, "not a JSON object");
    expect_reject("{\"a\":[]}", 0, "not an object");
    expect_reject("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", 4, "header: JSON byte");

    /* length field: too short a file, past the end, absurdly large */
    plc_st_file f;
    char err[512];
    unsigned char small[5] = {0};
    CU_ASSERT_EQUAL(plc_st_parse(&f, small, sizeof small, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "too short"));
    size_t size;
    unsigned char *b = image("{}", 0, &size);
    b[0] = 200;
    CU_ASSERT_EQUAL(plc_st_parse(&f, b, size, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "past the end"));
    b[7] = 0x80;
    CU_ASSERT_EQUAL(plc_st_parse(&f, b, size, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "limit"));
    free(b);
    /* an empty file and a missing file, through plc_st_open */
    char path[512];
    snprintf(path, sizeof path, "%s/empty.safetensors", tmpdir);
    FILE *e = fopen(path, "wb");
    fclose(e);
    CU_ASSERT_EQUAL(plc_st_open(&f, path, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "empty.safetensors: file too short"));
    unlink(path);
    snprintf(path, sizeof path, "%s/none.safetensors", tmpdir);
    CU_ASSERT_EQUAL(plc_st_open(&f, path, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot open"));
    /* an empty file set is valid */
    b = image("{}", 0, &size);
    CU_ASSERT_EQUAL(plc_st_parse(&f, b, size, err, sizeof err), 0);
    CU_ASSERT_EQUAL(f.n_tensors, 0);
    plc_st_close(&f);
    free(b);
}

/* parses a private, exact-size copy so that the sanitizers see any overread;
 * an accepted file must describe bytes inside the buffer */
static void parse_copy(const unsigned char *src, size_t n, int *accepted)
{
    unsigned char *b = malloc(n ? n : 1);
    memcpy(b, src, n);
    plc_st_file f;
    char err[512];
    if (plc_st_parse(&f, b, n, err, sizeof err) == 0) {
        (*accepted)++;
        for (size_t i = 0; i < f.n_tensors; i++) {
            const unsigned char *p = plc_st_data(&f, &f.tensors[i]);
            CU_ASSERT(p >= b + 8 && p + (f.tensors[i].end - f.tensors[i].begin) <= b + n);
        }
        plc_st_close(&f);
    } else {
        CU_ASSERT(err[0] != '\0');
    }
    free(b);
}

static void test_fuzz(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/fuzz.safetensors", tmpdir);
    CU_ASSERT_EQUAL_FATAL(write_sample(path), 0);
    size_t size;
    unsigned char *good = slurp(path, &size);
    CU_ASSERT_FATAL(good != NULL);
    int accepted = 0;
    parse_copy(good, size, &accepted);
    CU_ASSERT_EQUAL(accepted, 1);
    /* every truncation is refused (the data section must be exactly covered) */
    accepted = 0;
    for (size_t n = 0; n < size; n++) parse_copy(good, n, &accepted);
    CU_ASSERT_EQUAL(accepted, 0);
    /* random byte changes: never a crash; what is accepted is in bounds */
    plc_rng_key k = {2024, 0, PLC_RNG_SYNTH_SAMPLE};
    unsigned char *mut = malloc(size);
    uint64_t ctr = 0;
    for (int trial = 0; trial < 20000; trial++) {
        memcpy(mut, good, size);
        int flips = 1 + (int)(plc_rng_u32(k, ctr++) % 4);
        for (int j = 0; j < flips; j++) {
            uint32_t r[4];
            plc_rng_block(k, ctr++, r);
            size_t at = r[0] % size;
            /* mostly printable JSON punctuation and digits, sometimes any byte */
            static const char pool[] = "{}[]\":,0123456789-.eE \\tfnu";
            mut[at] = (r[1] & 3) ? (unsigned char)pool[r[2] % (sizeof pool - 1)] : (unsigned char)r[2];
        }
        parse_copy(mut, size, &accepted);
    }
    /* pure garbage with a plausible length field */
    for (int trial = 0; trial < 2000; trial++) {
        size_t n = 8 + plc_rng_u32(k, ctr++) % 200;
        unsigned char g[256];
        for (size_t i = 0; i < n; i++) g[i] = (unsigned char)plc_rng_u32(k, ctr++);
        uint64_t hl = plc_rng_u32(k, ctr++) % (n - 7);
        for (int i = 0; i < 8; i++) g[i] = (unsigned char)(hl >> (8 * i));
        parse_copy(g, n, &accepted);
    }
    free(mut);
    free(good);
}

/* a failed save (here: the file-size limit hit mid-write) leaves the old
 * file intact and no temporary behind */
static void test_atomic_write(void)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/atomic.safetensors", tmpdir);
    int before = count_files();
    CU_ASSERT_EQUAL_FATAL(write_sample(path), 0);
    CU_ASSERT_EQUAL(count_files(), before + 1);
    size_t old_size;
    unsigned char *old = slurp(path, &old_size);

    size_t big_n = 1 << 20;
    float *big = calloc(big_n, sizeof(float));
    plc_st_writer w;
    plc_st_writer_init(&w);
    int64_t shape[1] = {(int64_t)big_n};
    CU_ASSERT_EQUAL(plc_st_writer_add(&w, "big", PLC_ST_F32, 1, shape, big, err, sizeof err), 0);
    CU_ASSERT_EQUAL(plc_st_writer_add(&w, "big", PLC_ST_F32, 1, shape, big, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "added twice"));

    struct rlimit saved, lim;
    getrlimit(RLIMIT_FSIZE, &saved);
    lim = saved;
    lim.rlim_cur = 64 * 1024;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    CU_ASSERT_EQUAL(setrlimit(RLIMIT_FSIZE, &lim), 0);
    int rc = plc_st_writer_save(&w, path, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, old_handler);
    CU_ASSERT_EQUAL(rc, -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "atomic.safetensors"));
    CU_ASSERT_EQUAL(count_files(), before + 1); /* no temporary left */
    size_t now_size;
    unsigned char *now = slurp(path, &now_size);
    CU_ASSERT(now_size == old_size && memcmp(now, old, old_size) == 0);
    free(now);

    /* a directory that does not exist: a clear error, nothing created */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.safetensors", tmpdir);
    CU_ASSERT_EQUAL(plc_st_writer_save(&w, bad, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot create"));

    /* and without the limit the same save succeeds and replaces the file */
    CU_ASSERT_EQUAL(plc_st_writer_save(&w, path, err, sizeof err), 0);
    plc_st_file f;
    CU_ASSERT_EQUAL(plc_st_open(&f, path, err, sizeof err), 0);
    CU_ASSERT_EQUAL(f.n_tensors, 1);
    plc_st_close(&f);
    CU_ASSERT_EQUAL(count_files(), before + 1);
    struct stat st;
    CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 0444) != 0);
    plc_st_writer_free(&w);
    free(big);
    free(old);
}

void register_test_runtime_safetensors(void);
void register_test_runtime_safetensors(void)
{
    CU_pSuite j = CU_add_suite("json", NULL, NULL);
    CU_add_test(j, "valid documents", test_json_valid);
    CU_add_test(j, "invalid documents", test_json_invalid);
    CU_pSuite s = CU_add_suite("safetensors", suite_init, suite_clean);
    CU_add_test(s, "round trip", test_round_trip);
    CU_add_test(s, "damage rejected", test_damage_rejected);
    CU_add_test(s, "fuzz", test_fuzz);
    CU_add_test(s, "atomic write", test_atomic_write);
}
