/* plrun_args.c: parsing plrun's command line. */
#include "runtime/plrun_args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse_num.h"

void plrun_usage(FILE *out)
{
    fprintf(out,
            "usage: plrun PLAN [options]\n"
            "\n"
            "Runs a plan written by `plc compile`: one process per rank. Alone it runs\n"
            "as one rank; across ranks start it with a launcher, e.g.\n"
            "  mpirun -np N plrun job.bin      or      srun -n N plrun job.bin\n"
            "The number of ranks must be the plan's world size.\n"
            "\n"
            "options:\n"
            "  --backend cpu|cuda     compute backend (default cpu; cuda needs a GPU per rank)\n"
            "  --steps N              number of steps to run to (default: the spec's train.steps)\n"
            "  --metrics FILE         one JSON object per step (rank 0)\n"
            "  --trace FILE           measured timeline, Chrome trace-event JSON\n"
            "  --checkpoint FILE      write a checkpoint (safetensors) at the end\n"
            "  --resume FILE          start from a checkpoint, under any layout\n"
            "  --export-oracle DIR    write initial weights, batches, losses and the first\n"
            "                         step's gradients for tests/oracle/torch_oracle.py\n"
            "  --threads N            CPU threads per rank (default OMP_NUM_THREADS or all)\n"
            "  --help, --version\n");
}

static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out) { return plc_parse_int(s, lo, hi, out); }

int plrun_parse_args(int argc, char **argv, plrun_args *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->backend = "cpu";
    a->steps = -1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) { a->help = 1; return 0; }
        if (!strcmp(o, "--version")) { a->version = 1; return 0; }
        if (o[0] == '-' && o[1]) {
            static const char *const with_value[] = {"--backend", "--steps", "--metrics", "--trace",
                                                     "--checkpoint", "--resume", "--export-oracle",
                                                     "--threads"};
            int known = 0;
            for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
                if (!strcmp(o, with_value[k])) known = 1;
            if (!known) {
                snprintf(err, errlen, "unknown option '%s' (see plrun --help)", o);
                return -1;
            }
            if (!v) {
                snprintf(err, errlen, "option %s needs a value", o);
                return -1;
            }
            i++;
            int64_t n;
            if (!strcmp(o, "--backend")) {
                if (strcmp(v, "cpu") && strcmp(v, "cuda")) {
                    snprintf(err, errlen, "--backend %s: valid backends are cpu and cuda", v);
                    return -1;
                }
                a->backend = v;
            } else if (!strcmp(o, "--steps")) {
                if (parse_int(v, 0, INT32_MAX, &n)) {
                    snprintf(err, errlen, "--steps %s: expected a number of steps >= 0", v);
                    return -1;
                }
                a->steps = n;
            } else if (!strcmp(o, "--threads")) {
                if (parse_int(v, 1, 4096, &n)) {
                    snprintf(err, errlen, "--threads %s: expected a number from 1 to 4096", v);
                    return -1;
                }
                a->threads = (int)n;
            } else if (!strcmp(o, "--metrics")) a->metrics_path = v;
            else if (!strcmp(o, "--trace")) a->trace_path = v;
            else if (!strcmp(o, "--checkpoint")) a->checkpoint_path = v;
            else if (!strcmp(o, "--resume")) a->resume_path = v;
            else if (!strcmp(o, "--export-oracle")) a->oracle_dir = v;
            continue;
        }
        if (a->plan_path) {
            snprintf(err, errlen, "more than one plan given ('%s' and '%s')", a->plan_path, o);
            return -1;
        }
        a->plan_path = o;
    }
    if (!a->plan_path) {
        snprintf(err, errlen, "no plan given (usage: plrun PLAN [options]; see --help)");
        return -1;
    }
    return 0;
}
