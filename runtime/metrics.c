/* metrics.c: per-step log line, terminal progress line, JSON-lines file. */
#include "runtime/metrics.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/errmsg.h"

#define PROGRESS_BAR 20

int plc_format_si(char *buf, size_t n, double v)
{
    static const char prefix[] = " kMGTPE";
    if (!isfinite(v)) return snprintf(buf, n, "%g", v);
    int i = 0;
    double a = fabs(v);
    while (a >= 999.95 && i < 6) {
        a /= 1000;
        v /= 1000;
        i++;
    }
    if (i == 0) return snprintf(buf, n, "%.0f", v);
    return snprintf(buf, n, a < 9.995 ? "%.2f%c" : a < 99.95 ? "%.1f%c" : "%.0f%c", v, prefix[i]);
}

int plc_format_duration(char *buf, size_t n, double s)
{
    if (!isfinite(s) || s < 0) return snprintf(buf, n, "?");
    long long t = (long long)(s + 0.5);
    if (t < 60) return snprintf(buf, n, "%llds", t);
    if (t < 3600) return snprintf(buf, n, "%lldm%02llds", t / 60, t % 60);
    return snprintf(buf, n, "%lldh%02lldm", t / 3600, (t % 3600) / 60);
}

int plc_metrics_format_line(char *buf, size_t n, const plc_step_metrics *m, int64_t total_steps)
{
    char tok[32], flops[32];
    plc_format_si(tok, sizeof tok, m->tokens_per_s);
    plc_format_si(flops, sizeof flops, m->model_flops_per_s);
    /* "3.21G" + "FLOP/s" reads best as "3.21 GFLOP/s" */
    size_t fl = strlen(flops);
    if (fl > 0 && flops[fl - 1] >= 'A' && fl + 2 < sizeof flops) {
        flops[fl + 1] = '\0';
        flops[fl] = flops[fl - 1];
        flops[fl - 1] = ' ';
    } else if (fl + 2 < sizeof flops) {
        flops[fl] = ' ';
        flops[fl + 1] = '\0';
    }
    int width = snprintf(NULL, 0, "%lld", (long long)total_steps);
    char dropped[40] = "";
    if (m->moe_capped) snprintf(dropped, sizeof dropped, "  dropped %lld", (long long)m->moe_dropped);
    return snprintf(buf, n, "step %*lld/%lld  loss %.6f  lr %.3e  grad norm %.4f  %s tok/s  %sFLOP/s  %.1f ms%s", width,
                    (long long)m->step + 1, (long long)total_steps, m->loss, m->lr, m->grad_norm, tok, flops,
                    m->step_time_s * 1e3, dropped);
}

/* a JSON number, or null where JSON has none */
static int json_num(char *buf, size_t n, double v)
{
    return isfinite(v) ? snprintf(buf, n, "%.17g", v) : snprintf(buf, n, "null");
}

int plc_metrics_format_json(char *buf, size_t n, const plc_step_metrics *m)
{
    char v[6][40];
    json_num(v[0], sizeof v[0], m->loss);
    json_num(v[1], sizeof v[1], m->lr);
    json_num(v[2], sizeof v[2], m->grad_norm);
    json_num(v[3], sizeof v[3], m->tokens_per_s);
    json_num(v[4], sizeof v[4], m->model_flops_per_s);
    json_num(v[5], sizeof v[5], m->step_time_s);
    char dropped[48] = "";
    if (m->moe_capped) snprintf(dropped, sizeof dropped, ",\"moe_dropped\":%lld", (long long)m->moe_dropped);
    return snprintf(buf, n,
                    "{\"step\":%lld,\"loss\":%s,\"lr\":%s,\"grad_norm\":%s,\"tokens_per_s\":%s,"
                    "\"model_flops_per_s\":%s,\"step_time_s\":%s%s}",
                    (long long)m->step, v[0], v[1], v[2], v[3], v[4], v[5], dropped);
}

int plc_metrics_format_progress(char *buf, size_t n, int64_t done, int64_t total, double eta_s)
{
    double frac = total > 0 ? (double)done / (double)total : 1.0;
    if (frac > 1) frac = 1;
    int fill = (int)(frac * PROGRESS_BAR);
    char bar[PROGRESS_BAR + 1];
    for (int i = 0; i < PROGRESS_BAR; i++) bar[i] = i < fill ? '#' : '-';
    bar[PROGRESS_BAR] = '\0';
    char eta[32];
    plc_format_duration(eta, sizeof eta, eta_s);
    return snprintf(buf, n, "[%s] %3d%%  step %lld/%lld  ETA %s", bar, (int)(frac * 100), (long long)done,
                    (long long)total, eta);
}

int plc_metrics_open(plc_metrics_log *l, FILE *out, FILE *progress, const char *json_path, int64_t total_steps,
                     char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    l->out = out;
    l->progress = progress;
    l->total_steps = total_steps;
    if (json_path) {
        l->json = fopen(json_path, "w");
        if (!l->json) return plc_fail(err, errlen, "--metrics %s: cannot create: %s", json_path, strerror(errno));
        l->json_path = strdup(json_path);
        if (!l->json_path) {
            fclose(l->json);
            l->json = NULL;
            return plc_fail(err, errlen, "--metrics %s: out of memory", json_path);
        }
    }
    return 0;
}

int plc_metrics_open_default(plc_metrics_log *l, const char *json_path, int64_t total_steps, char *err, size_t errlen)
{
    return plc_metrics_open(l, stdout, isatty(STDERR_FILENO) ? stderr : NULL, json_path, total_steps, err, errlen);
}

static void clear_progress(plc_metrics_log *l)
{
    if (l->progress && l->progress_shown) {
        fputs("\r\033[K", l->progress);
        fflush(l->progress);
        l->progress_shown = false;
    }
}

int plc_metrics_step(plc_metrics_log *l, const plc_step_metrics *m, char *err, size_t errlen)
{
    char line[512];
    /* the first step carries the warm-up; the ETA uses the steps after it */
    if (l->steps_seen > 0) l->time_seen += m->step_time_s;
    l->steps_seen++;
    clear_progress(l);
    if (l->out) {
        plc_metrics_format_line(line, sizeof line, m, l->total_steps);
        fprintf(l->out, "%s\n", line);
        fflush(l->out);
    }
    int64_t done = m->step + 1;
    if (l->progress && done < l->total_steps) {
        double per_step = l->steps_seen > 1 ? l->time_seen / (double)(l->steps_seen - 1) : m->step_time_s;
        plc_metrics_format_progress(line, sizeof line, done, l->total_steps, per_step * (double)(l->total_steps - done));
        fputs(line, l->progress);
        fflush(l->progress);
        l->progress_shown = true;
    }
    if (l->json) {
        plc_metrics_format_json(line, sizeof line, m);
        if (fprintf(l->json, "%s\n", line) < 0 || fflush(l->json) != 0)
            return plc_fail(err, errlen, "--metrics %s: write failed: %s", l->json_path, strerror(errno));
    }
    return 0;
}

int plc_metrics_close(plc_metrics_log *l, char *err, size_t errlen)
{
    clear_progress(l);
    int rc = 0;
    if (l->json && fclose(l->json) != 0)
        rc = plc_fail(err, errlen, "--metrics %s: close failed: %s", l->json_path, strerror(errno));
    free(l->json_path);
    memset(l, 0, sizeof *l);
    return rc;
}
