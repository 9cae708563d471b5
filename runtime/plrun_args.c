/* plrun_args.c: parsing plrun's command line. */
#include "runtime/plrun_args.h"

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
            "  --checkpoint-dir DIR   periodic checkpoints DIR/step-NNNNNNNN.safetensors and\n"
            "                         DIR/latest, written atomically, also at the end\n"
            "  --checkpoint-every N   a checkpoint every N steps (default: only at the end)\n"
            "  --checkpoint-keep K    keep the newest K checkpoints in DIR (default 3)\n"
            "  --resume FILE|DIR      start from a checkpoint (DIR: its latest), any layout\n"
            "  --export-hf DIR        write the weights at the end as a Hugging Face checkpoint\n"
            "                         (DIR/model.safetensors, DIR/config.json) for transformers\n"
            "  --init-from DIR|FILE   start at step 0 from the weights of a Hugging Face Llama or\n"
            "                         GPT-2 checkpoint (a directory or a .safetensors file)\n"
            "  --allow-changed KEY    resume although KEY (e.g. train.lr.peak) differs from\n"
            "                         the checkpoint's (repeatable)\n"
            "  --timeout SECONDS      watchdog: a transfer waiting longer ends the job with\n"
            "                         the instruction and the peer (default: 10x the\n"
            "                         predicted step time, at least 30 s; 0 = off)\n"
            "  --data-root DIR        the directory the plan's token file (train.data) is\n"
            "                         relative to, i.e. the spec's directory (default: the\n"
            "                         plan's directory, then the working directory)\n"
            "  --export-oracle DIR    write initial weights, batches, losses and the first\n"
            "                         step's gradients for tests/oracle/torch_oracle.py\n"
            "  --threads N            CPU threads per rank (default OMP_NUM_THREADS or all)\n"
            "  --no-graph             run every step eagerly (the CUDA backend otherwise\n"
            "                         replays each step's stretches as recorded graphs)\n"
            "  --help, --version\n"
            "\n"
            "SIGINT or SIGTERM: the current step finishes, checkpoints are written if\n"
            "asked, and plrun exits with status 1.\n"
            "Exit status: 0 ok; 1 an error of input, usage or environment (options, files,\n"
            "a diverged loss, a rank that stopped answering, a signal); 3 an internal error.\n");
}


int plrun_parse_args(int argc, char **argv, plrun_args *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->backend = "cpu";
    a->steps = -1;
    a->checkpoint_keep = 3;
    a->timeout_s = -1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) { a->help = 1; return 0; }
        if (!strcmp(o, "--version")) { a->version = 1; return 0; }
        if (!strcmp(o, "--no-graph")) { a->no_graph = 1; continue; }
        if (o[0] == '-' && o[1]) {
            static const char *const with_value[] = {"--backend", "--steps", "--metrics", "--trace",
                                                     "--checkpoint", "--resume", "--export-oracle",
                                                     "--threads", "--checkpoint-dir", "--checkpoint-every",
                                                     "--checkpoint-keep", "--allow-changed", "--timeout",
                                                     "--data-root", "--export-hf", "--init-from"};
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
                if (plc_parse_int(v, 0, INT32_MAX, &n)) {
                    snprintf(err, errlen, "--steps %s: expected a number of steps >= 0", v);
                    return -1;
                }
                a->steps = n;
            } else if (!strcmp(o, "--threads")) {
                if (plc_parse_int(v, 1, 4096, &n)) {
                    snprintf(err, errlen, "--threads %s: expected a number from 1 to 4096", v);
                    return -1;
                }
                a->threads = (int)n;
            } else if (!strcmp(o, "--checkpoint-every")) {
                if (plc_parse_int(v, 1, INT32_MAX, &n)) {
                    snprintf(err, errlen, "--checkpoint-every %s: expected a number of steps >= 1", v);
                    return -1;
                }
                a->checkpoint_every = n;
            } else if (!strcmp(o, "--checkpoint-keep")) {
                if (plc_parse_int(v, 1, 1000000, &n)) {
                    snprintf(err, errlen, "--checkpoint-keep %s: expected a number of checkpoints >= 1", v);
                    return -1;
                }
                a->checkpoint_keep = n;
            } else if (!strcmp(o, "--timeout")) {
                if (plc_parse_real(v, "", 0, 1e6, &a->timeout_s)) {
                    snprintf(err, errlen, "--timeout %s: expected seconds from 0 (off) to 1e6, e.g. 60 or 2.5", v);
                    return -1;
                }
            } else if (!strcmp(o, "--allow-changed")) {
                if (a->nallow_changed == (int)(sizeof a->allow_changed / sizeof a->allow_changed[0])) {
                    snprintf(err, errlen, "--allow-changed: at most %d settings",
                             (int)(sizeof a->allow_changed / sizeof a->allow_changed[0]));
                    return -1;
                }
                a->allow_changed[a->nallow_changed++] = v;
            } else if (!strcmp(o, "--checkpoint-dir")) a->checkpoint_dir = v;
            else if (!strcmp(o, "--metrics")) a->metrics_path = v;
            else if (!strcmp(o, "--trace")) a->trace_path = v;
            else if (!strcmp(o, "--checkpoint")) a->checkpoint_path = v;
            else if (!strcmp(o, "--resume")) a->resume_path = v;
            else if (!strcmp(o, "--export-oracle")) a->oracle_dir = v;
            else if (!strcmp(o, "--data-root")) a->data_root = v;
            else if (!strcmp(o, "--export-hf")) a->export_hf_dir = v;
            else if (!strcmp(o, "--init-from")) a->init_from = v;
            continue;
        }
        if (a->plan_path) {
            snprintf(err, errlen, "more than one plan given ('%s' and '%s')", a->plan_path, o);
            return -1;
        }
        a->plan_path = o;
    }
    if (a->checkpoint_every && !a->checkpoint_dir) {
        snprintf(err, errlen, "--checkpoint-every needs --checkpoint-dir DIR (where the checkpoints go)");
        return -1;
    }
    if (a->init_from && a->resume_path) {
        snprintf(err, errlen, "--init-from and --resume both give the starting state; choose one");
        return -1;
    }
    if (!a->plan_path) {
        snprintf(err, errlen, "no plan given (usage: plrun PLAN [options]; see --help)");
        return -1;
    }
    return 0;
}
