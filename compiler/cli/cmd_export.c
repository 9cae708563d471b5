/* cmd_export.c: plc export --megatron|--torchtitan SPEC|PLAN: hands the
 * spec's model and its layout to the training engine a team runs today.
 *
 * --megatron writes an executable Megatron-LM launch script (torchrun
 * pretrain_gpt.py) in the flags of the Megatron-Core release the modelled
 * profile describes: the current one (engine megatron), or r0.8 where the
 * spec names engine megatron_r0_8 (export_megatron.c); --torchtitan writes a
 * torchtitan configuration module (a function returning Trainer.Config)
 * that checks its base's model shape (export_torchtitan.c). Both carry the
 * model's block (Llama or GPT), dropout 0, AdamW, the learning-rate
 * schedule, steps, batch and precision with the layout. This file is the
 * command: which layout, from a spec or a plan, and whether the engine and
 * its output can take it.
 *
 * A spec is solved with the engine's profile (engines.yaml, read by
 * plc_engine_profile_load: what the search offers a spec with train.engine
 * = megatron or fsdp2), as plc solve -D train.engine=E would, unless it
 * names that engine itself (load_for_engine). What is written is checked
 * three ways, and refused with the reason where it fails, never dropped:
 * the profile's runs lists (cannot_run), what the output's flags or keys
 * can say of a layout (layout_unsaid) and of the model and training
 * (model_unsaid). For a spec the best layout that passes is exported, with
 * a note when it is not the solver's best. The flags and keys written are
 * checked against the engines' own argument definitions, listed in
 * docs/engines/ with the commit they were read from (tests/e2e/export.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/plan_io.h"
#include "compiler/cli/cli_int.h"
#include "compiler/frontend/frontend.h"
#include "compiler/plantools/plantools.h"
#include "plc/version.h"

typedef struct engine {
    const char *name;
    const char *option;
    plc_engine profile; /* whose engines.yaml profile says what it runs */
    /* unequal stages the output can write: 0 none, 1 over pp (vpp 1), 2 over
     * pp * vpp; the profile's uneven_stages is capped by it */
    int uneven;
    plc_export_unsaid_fn *model_unsaid;  /* the model or training settings, before any solve */
    plc_export_unsaid_fn *layout_unsaid; /* a layout the profile runs but the output cannot write */
    bool executable;                     /* -o FILE is written mode 0755 (a launch script) */
    const char *flags;                   /* whose flags or keys the output is written in */
    void (*write)(FILE *out, const plc_export_in *in);
} engine;

/* The first row of an option is its default; another row of the same
 * option is taken when the spec names its profile (train.engine =
 * megatron_r0_8 with --megatron: r0.8's flags, pick_generation). */
static const engine engines[] = {
    {"Megatron-LM", "--megatron", PLC_ENGINE_MEGATRON, 2, plc_export_megatron_model_unsaid, plc_export_megatron_unsaid,
     true, "Megatron-Core 0.19 (core_v0.19.0)", plc_export_megatron_write},
    {"torchtitan", "--torchtitan", PLC_ENGINE_FSDP2, 2, plc_export_torchtitan_model_unsaid,
     plc_export_torchtitan_unsaid, false, "torchtitan b5bcd76c6", plc_export_torchtitan_write},
    {"Megatron-LM", "--megatron", PLC_ENGINE_MEGATRON_R0_8, 0, plc_export_megatron_r0_8_model_unsaid,
     plc_export_megatron_r0_8_unsaid, true, "Megatron-Core r0.8 (core_v0.8.0)", plc_export_megatron_r0_8_write},
};
enum { NENGINES = sizeof engines / sizeof engines[0] };

static int uneven_of(const engine *e, const plc_engine_profile *p)
{
    return p->uneven_stages < e->uneven ? (int)p->uneven_stages : e->uneven;
}

/* why engine e, whose profile is p, cannot run layout l of model m, or NULL
 * when it can: unequal stages (plc_rank_layers) beyond what both the profile
 * and the output allow, the first dimension whose value the profile does not
 * offer, or what the output cannot write (e->layout_unsaid) */
static const char *cannot_run(const engine *e, const plc_engine_profile *p, const plc_model *m, const plc_train *t,
                              const plc_layout *l, char *buf, size_t size)
{
    int need = plc_uneven_stages_needed(m->layers, l), can = uneven_of(e, p);
    if (need > can) {
        if (need == 2 && can == 1)
            snprintf(buf, size,
                     "pp * vpp = %lld virtual stages of unequal layer counts (layers = %lld), which %s runs with vpp 1 "
                     "only (%s)",
                     (long long)(l->pp * l->vpp), (long long)m->layers, e->name, p->describes);
        else if (can < p->uneven_stages)
            snprintf(buf, size, "pp = %lld stages of unequal layer counts (layers = %lld), which the %s flags this "
                                "export writes cannot say, though the %s runs them",
                     (long long)l->pp, (long long)m->layers, e->flags, p->describes);
        else
            snprintf(buf, size, "pp = %lld stages of unequal layer counts (layers = %lld), which %s runs equal only (%s)",
                     (long long)l->pp, (long long)m->layers, e->name, p->describes);
        return buf;
    }
    static const char *const what[PLC_SCHED_COUNT] = {"GPipe", "1F1B", "interleaved 1F1B", "layered gradient accumulation",
                                                      "modular pipeline placement", "ZB-H1 zero bubble", "ZB-H2 zero bubble",
                                                      "ZB-V zero bubble", "DualPipe-V"};
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        int64_t v = plc_layout_get(l, (plc_layout_dim)d);
        if (plc_engine_offers(p, (plc_layout_dim)d, v)) continue;
        char val[32], how[64] = "";
        if (d == PLC_LD_schedule && v >= 0 && v < PLC_SCHED_COUNT) snprintf(how, sizeof how, " (%s)", what[v]);
        snprintf(buf, size, "%s = %s%s, which %s has no equivalent for (%s)", plc_layout_dim_key((plc_layout_dim)d),
                 plc_layout_value_text((plc_layout_dim)d, v, val, sizeof val), how, e->name, p->describes);
        return buf;
    }
    return e->layout_unsaid(m, t, l, p, buf, size);
}

/* ---- the command ------------------------------------------------------------------ */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: plc export --megatron|--torchtitan [OPTIONS] SPEC|PLAN\n"
            "\n"
            "Writes the spec's model and layout for a training engine: --megatron an\n"
            "executable Megatron-LM launch script in Megatron-Core 0.19's flags (r0.8's\n"
            "where the spec names train.engine = megatron_r0_8), --torchtitan a\n"
            "torchtitan configuration module. Both carry the model's\n"
            "block (Llama or GPT), dropout 0, AdamW, the learning-rate schedule,\n"
            "steps, batch and precision with the layout. A spec is solved with the\n"
            "engine's profile (engines.yaml: megatron, fsdp2; PLC_ENGINES names\n"
            "another file), as with -D train.engine=megatron or fsdp2, unless it\n"
            "names that engine itself; a spec naming another engine is refused. A\n"
            "plan (plrun's) is exported as compiled, with plrun's figures. What the\n"
            "engine or its flags cannot say is refused with the reason.\n"
            "Exit status: 0 written, 1 an error in the input or options, or a\n"
            "setting the engine cannot take, 2 no layout the engine can run fits.\n"
            "\n"
            "options:\n"
            "  --megatron            Megatron-LM launch script\n"
            "  --torchtitan          torchtitan configuration module\n"
            "  -o FILE               output file (default, and '-': standard output)\n"
            "  --base MODULE:FUNC    torchtitan: the configuration holding the model\n"
            "                        (default torchtitan.models.llama3.config_registry:llama3_8b)\n"
            "%s"
            "  -h, --help            this text\n",
            plc_spec_options_help);
}

/* the spec's layout block narrowed to what profile p runs: false when a
 * dimension keeps no value */
static bool restrict_to_profile(plc_layout_spec *ls, const plc_engine_profile *p)
{
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        if (!p->offers[d]) continue;
        plc_choice *c = plc_layout_spec_choice_mut(ls, (plc_layout_dim)d);
        plc_choice r = {.kind = PLC_CHOICE_SET};
        for (int64_t v = 0; v < 64 && r.n < PLC_CHOICE_MAX; v++)
            if ((p->offers[d] >> v & 1u) && plc_choice_allows(c, v)) r.v[r.n++] = v;
        if (!r.n) return false;
        *c = r;
    }
    return true;
}

/* "schedule 1f1b interleaved; ...; zero 0 1; ...": what profile p runs */
static void offers_text(FILE *out, const plc_engine_profile *p)
{
    const char *sep = "";
    for (int d = 0; d < PLC_LD_COUNT; d++) {
        if (!p->offers[d]) continue;
        fprintf(out, "%s%s", sep, plc_layout_dim_key((plc_layout_dim)d));
        for (int64_t v = 0; v < 64; v++) {
            char val[32];
            if (p->offers[d] >> v & 1u) fprintf(out, " %s", plc_layout_value_text((plc_layout_dim)d, v, val, sizeof val));
        }
        sep = "; ";
    }
}

/* the first fitting candidate of s, best first, that engine e can run
 * (cannot_run); *first_no says why the solver's best cannot, or NULL */
static const plc_candidate *best_runnable(const engine *e, const plc_engine_profile *p, const plc_job *job,
                                          const plc_solution *s, const char **first_no, char *why, size_t size)
{
    *first_no = NULL;
    char buf[256];
    if (s->pinned) {
        if (!s->single.fits) return NULL;
        const char *no = cannot_run(e, p, &job->model, &job->train, &s->single.layout, why, size);
        *first_no = no;
        return no ? NULL : &s->single;
    }
    for (int i = 0; i < s->nranked; i++) {
        const char *no = cannot_run(e, p, &job->model, &job->train, &s->ranked[i].layout, i ? buf : why, i ? sizeof buf : size);
        if (!no) return &s->ranked[i];
        if (!i) *first_no = no;
    }
    return NULL;
}

/* the engine the spec names (train.engine after the -D overrides), or
 * NULL when it names none or does not parse (the load that follows reports
 * that) */
static const char *named_engine(plc_arena *a, const char *path, const plc_spec_opts *opts)
{
    FILE *quiet = fopen("/dev/null", "w");
    if (!quiet) return NULL;
    plc_diag d;
    plc_diag_init(&d, quiet, 0);
    const char *name = NULL;
    plc_source *src = plc_source_read(a, &d, path);
    int nerrors = 0;
    plc_ast *ast = src ? plc_parse_source(a, &d, src, &nerrors) : NULL;
    if (ast && !nerrors && !plc_spec_apply_defines(a, &d, ast, opts->defines, opts->ndefines)) {
        plc_block *b = plc_ast_find_block(ast, "train");
        plc_pair *pr = b ? plc_block_find_pair(b, "engine") : NULL;
        if (pr && (pr->value->kind == PLC_VAL_IDENT || pr->value->kind == PLC_VAL_STRING))
            name = plc_arena_strndup(a, pr->value->text, pr->value->text_len);
    }
    plc_diag_flush(&d);
    fclose(quiet);
    return name;
}

/* the row of e's option whose profile the spec names (named, NULL when
 * none), else e: the release whose flags the output is written in */
static const engine *pick_generation(const engine *e, const char *named)
{
    for (size_t k = 0; named && k < NENGINES; k++)
        if (!strcmp(engines[k].option, e->option) && !strcmp(plc_engine_name(engines[k].profile), named)) return &engines[k];
    return e;
}

/* loads the spec for engine e: as the spec says when it names e's engine,
 * as with -D train.engine=E when it names none, refused when it names
 * another (plrun included: no export targets plc's own runtime) */
static int load_for_engine(plc_arena *a, const engine *e, const char *path, const plc_spec_opts *opts, plc_job *job)
{
    const char *ename = plc_engine_name(e->profile);
    const char *named = named_engine(a, path, opts);
    if (named && strcmp(named, ename)) {
        fprintf(stderr,
                "plc export: error: %s: train.engine = %s, but %s exports for engine %s\n"
                "  hint: export with the option of the spec's engine, or solve for %s with -D train.engine=%s\n",
                path, named, e->option, ename, ename, ename);
        return PLC_EXIT_INPUT;
    }
    plc_spec_opts o = *opts;
    if (!named) {
        if (o.ndefines >= PLC_MAX_DEFINES) {
            fprintf(stderr, "plc export: error: too many -D options (at most %d with the engine's)\n",
                    PLC_MAX_DEFINES - 1);
            return PLC_EXIT_INPUT;
        }
        o.defines[o.ndefines++] = plc_arena_printf(a, "train.engine=%s", ename);
    }
    if (plc_report_load(a, "export", path, &o, job)) {
        if (!named)
            fprintf(stderr, "  hint: %s solves as with -D train.engine=%s (the spec names no engine); where its layout "
                            "block pins a value that engine does not run, widen it (-D layout.KEY=auto)\n",
                    e->option, ename);
        return PLC_EXIT_INPUT;
    }
    fprintf(stderr, "plc export: modelling engine %s (%s): %s\n", ename, job->engine.describes,
            named ? "the spec's train.engine"
                  : plc_arena_printf(a, "the spec names none, so solved as with -D train.engine=%s", ename));
    return PLC_EXIT_OK;
}

/* the spec's best layout that engine e (profile p) can run, solved with
 * e's profile, into in */
static int from_spec(plc_arena *a, const engine *e, const plc_engine_profile *p, const char *path,
                     const plc_spec_opts *opts, plc_export_in *in)
{
    plc_job job;
    int rc = load_for_engine(a, e, path, opts, &job);
    if (rc) return rc;
    char why[256];
    const char *no = e->model_unsaid(&job.model, &job.train, NULL, p, why, sizeof why);
    if (no) {
        fprintf(stderr, "plc export: error: %s: %s cannot train this spec: %s\n", path, e->name, no);
        return PLC_EXIT_INPUT;
    }
    plc_solution s;
    if (plc_solve(&job, a, &s)) {
        fprintf(stderr, "plc export: error: %s: %s\n", path, s.error);
        return PLC_EXIT_INPUT;
    }
    const plc_candidate *best = s.pinned ? (s.single.fits ? &s.single : NULL) : s.nranked ? &s.ranked[0] : NULL;
    const plc_candidate *run = best_runnable(e, p, &job, &s, &no, why, sizeof why);
    if (best && !run) {
        /* the ranked list may be cut short: search again within what e runs */
        plc_job j2 = job;
        j2.engine.uneven_stages = uneven_of(e, p);
        plc_solution s2;
        const char *no2;
        char why2[256];
        if (restrict_to_profile(&j2.layout, p) && plc_solve(&j2, a, &s2) == 0)
            run = best_runnable(e, p, &j2, &s2, &no2, why2, sizeof why2);
        if (!run) {
            fprintf(stderr, "plc export: error: %s: the best layout uses %s, and no layout %s can run fits\n"
                            "  hint: %s runs ", path, no, e->name, e->name);
            offers_text(stderr, p);
            if (uneven_of(e, p) < p->uneven_stages && plc_uneven_stages_needed(job.model.layers, &best->layout))
                fprintf(stderr, ", with pp (pp * vpp) dividing layers = %lld\n", (long long)job.model.layers);
            else fputs("; widen the spec's layout block to let the solver use them\n", stderr);
            return PLC_EXIT_NO_LAYOUT;
        }
    }
    if (!best) {
        fprintf(stderr, "plc export: error: %s: no layout fits under engine %s's model%s%s\n", path,
                plc_engine_name(e->profile), s.pinned && s.single.reason && s.single.reason[0] ? ": " : "",
                s.pinned && s.single.reason ? s.single.reason : "");
        fprintf(stderr, "  hint: plc solve %s -D train.engine=%s shows the layouts it tried\n", path,
                plc_engine_name(e->profile));
        return PLC_EXIT_NO_LAYOUT;
    }
    if (run != best) {
        char lt[256];
        snprintf(in->note, sizeof in->note,
                 "plc's best layout (%s, %.4g s per step) uses %s; this is the best layout %s can run (%+.2f%% step time).",
                 plc_layout_text(&best->layout, lt, sizeof lt), best->step_time_s, no, e->name, 100.0 * (run->step_time_s / best->step_time_s - 1.0));
        fprintf(stderr, "plc export: note: %s\n", in->note);
    }
    in->model = job.model;
    in->train = job.train;
    in->nodes = job.cluster.nodes;
    in->gpus_per_node = job.cluster.gpus_per_node;
    in->layout = run->layout;
    in->step_time_s = run->step_time_s;
    in->mfu = run->mfu;
    in->peak_bytes = run->peak_bytes;
    in->limit_bytes = s.limit_bytes;
    in->predicted_by = plc_arena_printf(a, "engine %s's model (%s)", plc_engine_name(e->profile), p->describes);
    return PLC_EXIT_OK;
}

/* a compiled plan: plrun's program, its layout exported as compiled; the
 * figures are the plan's (plrun's), which the header says */
static int from_plan(plc_arena *a, const engine *e, const plc_engine_profile *prof, const char *path, plc_export_in *in)
{
    plc_plan p;
    if (plc_cmd_load_plan("export", a, path, &p)) return PLC_EXIT_INPUT;
    char why[256];
    const char *no = e->model_unsaid(&p.model, &p.train, NULL, prof, why, sizeof why);
    if (no) {
        fprintf(stderr, "plc export: error: %s: %s cannot train this plan's model: %s\n", path, e->name, no);
        return PLC_EXIT_INPUT;
    }
    no = cannot_run(e, prof, &p.model, &p.train, &p.layout, why, sizeof why);
    if (no) {
        fprintf(stderr,
                "plc export: error: %s: the plan's layout uses %s\n"
                "  hint: export the spec instead (plc export %s SPEC): it picks the best layout %s can run\n",
                path, no, e->option, e->name);
        return PLC_EXIT_INPUT;
    }
    fprintf(stderr, "plc export: note: %s is a plan for plrun: its figures are plrun's; export the spec for engine %s's\n",
            path, plc_engine_name(e->profile));
    in->model = p.model;
    in->train = p.train;
    in->nodes = p.nodes;
    in->gpus_per_node = p.gpus_per_node;
    in->layout = p.layout;
    in->step_time_s = p.pred.step_time_s;
    in->mfu = p.pred.mfu;
    in->peak_bytes = p.pred.peak_bytes_plan;
    in->limit_bytes = p.hw.mem_bytes; /* a plan keeps no memory_limit: the device's */
    in->predicted_by = "the plan (plrun's)";
    return PLC_EXIT_OK;
}

int plc_cmd_export(int argc, char **argv)
{
    plc_spec_opts opts;
    if (plc_spec_take_options(&argc, argv, &opts)) return PLC_EXIT_INPUT;
    const char *path = NULL, *outp = NULL;
    const engine *e = NULL;
    plc_export_in in;
    memset(&in, 0, sizeof in);
    in.base = "torchtitan.models.llama3.config_registry:llama3_8b";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return PLC_EXIT_OK; }
        const engine *pick = NULL;
        for (size_t k = 0; k < NENGINES && !pick; k++)
            if (!strcmp(argv[i], engines[k].option)) pick = &engines[k];
        if (pick) {
            if (e && e != pick) {
                fprintf(stderr, "plc export: error: one engine at a time (%s and %s)\n", e->option, pick->option);
                return PLC_EXIT_INPUT;
            }
            e = pick;
            continue;
        }
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--base")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "plc export: error: %s needs a value\n", argv[i]);
                return PLC_EXIT_INPUT;
            }
            if (!strcmp(argv[i], "-o")) outp = argv[++i];
            else in.base = argv[++i];
            continue;
        }
        if (plc_cmd_take_input("export", "spec or plan", argv[i], &path, usage)) return PLC_EXIT_INPUT;
    }
    if (!e) {
        fprintf(stderr, "plc export: error: name the engine: --megatron or --torchtitan\n");
        usage(stderr);
        return PLC_EXIT_INPUT;
    }
    if (plc_cmd_need_input("export", "spec or plan", path, usage)) return PLC_EXIT_INPUT;
    const char *colon = strchr(in.base, ':');
    if (!colon || colon == in.base || !colon[1] || strchr(colon + 1, ':')) {
        fprintf(stderr, "plc export: error: --base takes MODULE:FUNCTION, not '%s'\n", in.base);
        return PLC_EXIT_INPUT;
    }
    in.source = path;
    plc_arena a;
    plc_arena_init(&a);
    if (!plc_cmd_is_plan_file(path)) e = pick_generation(e, named_engine(&a, path, &opts));
    plc_engine_profile prof;
    plc_diag d;
    plc_diag_init(&d, stderr, 0);
    in.profile = &prof;
    const char *env_catalog = getenv("PLC_CATALOG");
    const char *catalog = opts.catalog_path ? opts.catalog_path : env_catalog && env_catalog[0] ? env_catalog : NULL;
    int rc = plc_engine_profile_load(&a, &d, e->profile, NULL, catalog, &prof) ? PLC_EXIT_INPUT
             : plc_cmd_is_plan_file(path) ? from_plan(&a, e, &prof, path, &in)
                             : from_spec(&a, e, &prof, path, &opts, &in);
    if (rc == PLC_EXIT_OK) {
        plc_cmd_out o;
        if (plc_cmd_out_open("export", outp ? outp : "-", &o)) {
            rc = PLC_EXIT_INPUT;
        } else if (!o.to_stdout && e->executable && fchmod(fileno(o.f), 0755)) {
            /* a launch script is run: rwxr-xr-x, whatever the umask */
            fprintf(stderr, "plc export: error: cannot make %s executable\n", outp);
            plc_cmd_out_abort(&o);
            rc = PLC_EXIT_INPUT;
        } else {
            e->write(o.f, &in);
            if (plc_cmd_out_close("export", &o)) rc = PLC_EXIT_INPUT;
        }
    }
    plc_arena_free(&a);
    return rc;
}

