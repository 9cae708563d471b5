/* test_runtime_ckpt_meta.c: the checks a resume makes (runtime/ckpt_meta.c) on a
 * checkpoint written here: accepted as written; every metadata change, a
 * flipped tensor byte and a changed setting refused with the right message;
 * an allowed change accepted. And the output checks of atomic_file.h. */
#include <CUnit/CUnit.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/crc32.h"
#include "common/atomic_file.h"
#include "runtime/ckpt_meta.h"
#include "runtime/safetensors.h"

static char dir[64];

static int suite_init(void)
{
    snprintf(dir, sizeof dir, "/tmp/plc_ckpt_meta_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int suite_clean(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void fill_plan(plc_plan *p)
{
    memset(p, 0, sizeof *p);
    p->model.layers = 2;
    p->model.hidden = 8;
    p->model.vocab = 16;
    p->train.seed = 7;
    p->train.lr_peak = 3e-4;
    p->train.lr_floor = 3e-4 / 10;
    p->train.global_batch = 4;
}

/* a checkpoint of one tensor "w" with the metadata plrun writes for plan;
 * `tamper` changes one metadata value after the checksum was computed */
static void write_ckpt(const char *path, const plc_plan *plan, const char *tamper_key, const char *tamper_value)
{
    static float w[6] = {1, 2, 3, 4, 5, 6};
    const char *kv[2 * 64];
    char keys[64][64], vals[64][64], crc[16], wcrc[16];
    size_t n = 0;
    kv[2 * n] = "format", kv[2 * n + 1] = "plc-checkpoint", n++;
    kv[2 * n] = "version", kv[2 * n + 1] = PLC_CKPT_VERSION, n++;
    kv[2 * n] = "step", kv[2 * n + 1] = "3", n++;
    snprintf(wcrc, sizeof wcrc, "%08" PRIx32, plc_crc32(0, w, sizeof w));
    kv[2 * n] = "crc32.w", kv[2 * n + 1] = wcrc, n++;
    for (int i = 0; i < plc_ckpt_nsettings(); i++) {
        const char *name = plc_ckpt_setting_value(plan, i, vals[i], sizeof vals[i]);
        snprintf(keys[i], sizeof keys[i], "setting.%s", name);
        kv[2 * n] = keys[i], kv[2 * n + 1] = vals[i], n++;
    }
    snprintf(crc, sizeof crc, "%08" PRIx32, plc_ckpt_meta_crc(kv, n));
    plc_st_writer wr;
    plc_st_writer_init(&wr);
    char err[256];
    int64_t shape[2] = {2, 3};
    CU_ASSERT_EQUAL_FATAL(plc_st_writer_add(&wr, "w", PLC_ST_F32, 2, shape, w, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++) plc_st_writer_meta(&wr, kv[2 * i], kv[2 * i + 1]);
    plc_st_writer_meta(&wr, PLC_CKPT_META_CRC_KEY, crc);
    if (tamper_key) plc_st_writer_meta(&wr, tamper_key, tamper_value);
    CU_ASSERT_EQUAL_FATAL(plc_st_writer_save(&wr, path, err, sizeof err), 0);
    plc_st_writer_free(&wr);
}

static int check(const char *path, const plc_plan *plan, const char *const *allow, int nallow, char *err,
                 size_t errlen)
{
    plc_st_file f;
    if (plc_st_open(&f, path, err, errlen)) return -1;
    int64_t step = -1;
    int rc = plc_ckpt_check_file(&f, plan, path, allow, nallow, &step, err, errlen);
    if (!rc) rc = plc_ckpt_check_tensor(&f, "w", path, err, errlen);
    if (!rc) CU_ASSERT_EQUAL(step, 3);
    plc_st_close(&f);
    return rc;
}

static void test_checks(void)
{
    plc_plan plan, other;
    fill_plan(&plan);
    char path[128], err[1024];
    snprintf(path, sizeof path, "%s/ck.safetensors", dir);

    write_ckpt(path, &plan, NULL, NULL);
    CU_ASSERT_EQUAL(check(path, &plan, NULL, 0, err, sizeof err), 0);

    /* a metadata value changed after the checksum */
    write_ckpt(path, &plan, "setting.train.seed", "8");
    CU_ASSERT_EQUAL(check(path, &plan, NULL, 0, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "the metadata is corrupt"));
    write_ckpt(path, &plan, "extra", "x");
    CU_ASSERT_EQUAL(check(path, &plan, NULL, 0, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "the metadata is corrupt"));

    /* a flipped byte in the tensor */
    write_ckpt(path, &plan, NULL, NULL);
    FILE *f = fopen(path, "r+b");
    CU_ASSERT_FATAL(f != NULL);
    fseek(f, -3, SEEK_END);
    fputc(0x55, f);
    fclose(f);
    CU_ASSERT_EQUAL(check(path, &plan, NULL, 0, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "tensor w is corrupt"));

    /* a plan with another seed and learning rate: both named, unless allowed */
    write_ckpt(path, &plan, NULL, NULL);
    other = plan;
    other.train.seed = 8;
    other.train.lr_peak = 1e-3;
    CU_ASSERT_EQUAL(check(path, &other, NULL, 0, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "train.seed: checkpoint 7, plan 8"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "train.lr.peak: checkpoint 0.0003, plan 0.001"));
    const char *allow[] = {"train.seed", "train.lr.peak"};
    CU_ASSERT_EQUAL(check(path, &other, allow, 2, err, sizeof err), 0);
    CU_ASSERT_EQUAL(check(path, &other, allow, 1, err, sizeof err), -1);

    CU_ASSERT(plc_ckpt_setting_known("train.lr.peak"));
    CU_ASSERT(!plc_ckpt_setting_known("lr.peak"));
    CU_ASSERT(!plc_ckpt_setting_known("train.steps")); /* a run may be extended */
}

/* the order of the pairs does not matter; every byte of them does */
static void test_meta_crc(void)
{
    const char *a[] = {"k1", "v1", "k2", "v2"}, *b[] = {"k2", "v2", "k1", "v1"};
    const char *c[] = {"k1", "v1", "k2", "v3"}, *d[] = {"k1", "v1k2", "", "v2"};
    const char *e[] = {"k1", "v1", "k2", "v2", PLC_CKPT_META_CRC_KEY, "123"};
    CU_ASSERT_EQUAL(plc_ckpt_meta_crc(a, 2), plc_ckpt_meta_crc(b, 2));
    CU_ASSERT_NOT_EQUAL(plc_ckpt_meta_crc(a, 2), plc_ckpt_meta_crc(c, 2));
    CU_ASSERT_NOT_EQUAL(plc_ckpt_meta_crc(a, 2), plc_ckpt_meta_crc(d, 2));
    CU_ASSERT_EQUAL(plc_ckpt_meta_crc(a, 2), plc_ckpt_meta_crc(e, 3));
}

static void test_output_checks(void)
{
    char err[512], path[160];
    CU_ASSERT_EQUAL(plc_check_output_file("--trace", dir, err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "is a directory"));
    CU_ASSERT_EQUAL(plc_check_output_file("--trace", "/nonexistent/dir/t.json", err, sizeof err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "No such file or directory"));
    snprintf(path, sizeof path, "%s/t.json", dir);
    CU_ASSERT_EQUAL(plc_check_output_file("--trace", path, err, sizeof err), 0);
    CU_ASSERT_EQUAL(access(path, F_OK), -1); /* nothing left behind */
    snprintf(path, sizeof path, "%s/ckdir", dir);
    CU_ASSERT_EQUAL(plc_prepare_output_dir("--checkpoint-dir", path, err, sizeof err), 0);
    struct stat st;
    CU_ASSERT(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    CU_ASSERT_EQUAL(plc_prepare_output_dir("--checkpoint-dir", "/nonexistent/a/b", err, sizeof err), -1);
}

void register_test_runtime_ckpt_meta(void);
void register_test_runtime_ckpt_meta(void)
{
    CU_pSuite s = CU_add_suite("ckpt_meta", suite_init, suite_clean);
    CU_add_test(s, "resume checks", test_checks);
    CU_add_test(s, "metadata checksum", test_meta_crc);
    CU_add_test(s, "output checks", test_output_checks);
}
