/* data_file.c: the token file a spec names in train.data, checked as plrun
 * will check it at launch (docs/data.md), so that a plan plrun would refuse
 * is never written: the file exists and is readable, its header is one
 * plrun reads, its length matches the header, its vocabulary fits the
 * model's and it holds at least one sample. With read_all (plc compile and
 * plc check) the whole file is read once more: its size and CRC-32 go into
 * the plan, and its largest token id must be below the model's vocab.
 * Every error points at the data = "..." value. */
#include "compiler/frontend/frontend_int.h"

#include <string.h>

#include "common/tokfile_format.h"

void plc_data_file_check(plc_diag *d, plc_loc at, const char *written, const char *open_path, const plc_model *m,
                         bool read_all, plc_train *t)
{
    char why[512];
    plc_tokfile_survey s;
    memset(&s, 0, sizeof s);
    int rc = read_all ? plc_tokfile_survey_file(open_path, &s, why, sizeof why)
                      : plc_tokfile_read_head(open_path, &s.head, &s.size, why, sizeof why);
    if (rc) {
        plc_diag_error(d, at, "token file \"%s\": %s", written, why);
        if (strcmp(written, open_path) != 0) plc_diag_hint(d, "looked for at %s", open_path);
        return;
    }
    if (read_all) {
        t->data_size = s.size;
        t->data_crc32 = s.crc32;
    }
    if (!m) return; /* the model block has errors of its own */
    if (plc_tokfile_fits_model(&s.head, m->vocab, m->seq_len, why, sizeof why)) {
        plc_diag_error(d, at, "token file \"%s\": %s", written, why);
        if (s.head.vocab > (uint64_t)m->vocab)
            plc_diag_hint(d, "plrun refuses it: use a file tokenised for this model's vocabulary, or set vocab = %u",
                          s.head.vocab);
        return;
    }
    if (read_all && (int64_t)s.max_token >= m->vocab) {
        plc_diag_error(d, at, "token file \"%s\": token id %u (at index %llu) is outside the model's vocab of %lld",
                       written, s.max_token, (unsigned long long)s.max_token_at, (long long)m->vocab);
        plc_diag_hint(d, "the file was tokenised for a vocabulary of at least %llu: use one made for this model, "
                         "or set vocab = %llu",
                      (unsigned long long)s.max_token + 1, (unsigned long long)s.max_token + 1);
    }
}
