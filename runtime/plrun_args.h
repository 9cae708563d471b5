/* plrun_args.h: the command line of plrun. */
#ifndef PLC_PLRUN_ARGS_H
#define PLC_PLRUN_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct plrun_args {
    const char *plan_path;
    const char *backend;       /* "cpu" (default) or "cuda" */
    int64_t steps;             /* -1: the plan's train.steps */
    const char *metrics_path;  /* --metrics FILE: JSON lines, rank 0 */
    const char *trace_path;    /* --trace FILE: measured timeline */
    const char *checkpoint_path; /* --checkpoint FILE: written at the end */
    const char *checkpoint_dir;  /* --checkpoint-dir DIR: periodic checkpoints */
    int64_t checkpoint_every;    /* --checkpoint-every N: 0 = only at the end */
    int64_t checkpoint_keep;     /* --checkpoint-keep K: newest kept (default 3) */
    const char *resume_path;   /* --resume FILE|DIR: start from a checkpoint */
    const char *export_hf_dir; /* --export-hf DIR: Hugging Face checkpoint at the end */
    const char *init_from;     /* --init-from DIR|FILE: weights of a Hugging Face checkpoint */
    const char *allow_changed[32]; /* --allow-changed SETTING (repeatable) */
    int nallow_changed;
    double timeout_s;          /* --timeout SECONDS: watchdog deadline; -1 default, 0 off */
    const char *oracle_dir;    /* --export-oracle DIR */
    const char *data_root;     /* --data-root DIR: what train.data is relative to */
    int threads;               /* --threads N, 0: OMP_NUM_THREADS or all cores */
    int no_graph;              /* --no-graph: every step eagerly (no step graphs) */
    int help, version;
} plrun_args;

/* 0 on success (help/version set when asked), -1 with a message in err */
int plrun_parse_args(int argc, char **argv, plrun_args *a, char *err, size_t errlen);
void plrun_usage(FILE *out);

#endif
