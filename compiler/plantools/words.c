/* words.c: plc's output vocabulary (see plantools.h). */
#include "compiler/plantools/plantools_int.h"

#include <math.h>
#include <stdio.h>

const char *plc_word_onoff(int64_t v) { return v ? "on" : "off"; }

const char *plc_word_plural(long long n) { return n == 1 ? "" : "s"; }

const char *plc_word_percent(double frac, char *buf, size_t size)
{
    snprintf(buf, size, "%.4g%%", 100.0 * frac);
    return buf;
}

double plc_word_shown(double v, int decimals)
{
    return fabs(v) < 0.5 * pow(10, -decimals) ? 0.0 : v;
}

/* the largest unit of the table the value reaches (at least the first) */
static const char *scaled(double v, const double *factor, const char *const *name, int n, char *buf, size_t size)
{
    int i = 0;
    while (i + 1 < n && fabs(v) >= factor[i + 1]) i++;
    snprintf(buf, size, "%.6g %s", v / factor[i], name[i]);
    return buf;
}

const char *plc_word_quantity(plc_unit_kind kind, double v, char *buf, size_t size)
{
    static const double sz[] = {1, 1024.0, 1048576.0, 1073741824.0, 1099511627776.0};
    static const char *const szn[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    static const double bw[] = {1, 1e3, 1e6, 1e9, 1e12};
    static const char *const bwn[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s"};
    static const double fl[] = {1e9, 1e12, 1e15};
    static const char *const fln[] = {"GFLOPS", "TFLOPS", "PFLOPS"};
    static const double tm[] = {1e-9, 1e-6, 1e-3, 1};
    static const char *const tmn[] = {"ns", "us", "ms", "s"};
    switch (kind) {
    case PLC_UNIT_SIZE: return scaled(v, sz, szn, 5, buf, size);
    case PLC_UNIT_BANDWIDTH: return scaled(v, bw, bwn, 5, buf, size);
    case PLC_UNIT_FLOPS: return scaled(v, fl, fln, 3, buf, size);
    case PLC_UNIT_TIME: return scaled(v, tm, tmn, 4, buf, size);
    case PLC_UNIT_PERCENT: return plc_word_percent(v, buf, size);
    case PLC_UNIT_COUNT:
    case PLC_UNIT_KIND_COUNT: break;
    }
    snprintf(buf, size, "%.6g", v);
    return buf;
}

const char *plc_word_choice(plc_layout_dim d, const plc_choice *c, char *buf, size_t size)
{
    char v[32], w[32];
    size_t n = 0;
    if (size) buf[0] = '\0';
    switch (c->kind) {
    case PLC_CHOICE_AUTO: snprintf(buf, size, "auto"); break;
    case PLC_CHOICE_RANGE:
        snprintf(buf, size, "%s..%s", plc_layout_value_text(d, c->lo, v, sizeof v),
                 plc_layout_value_text(d, c->hi, w, sizeof w));
        break;
    case PLC_CHOICE_SET:
        if (c->n == 1) {
            snprintf(buf, size, "%s", plc_layout_value_text(d, c->v[0], v, sizeof v));
            break;
        }
        for (int i = 0; i < c->n && n < size; i++) {
            int k = snprintf(buf + n, size - n, "%s%s%s", i ? ", " : "{", plc_layout_value_text(d, c->v[i], v, sizeof v),
                             i + 1 == c->n ? "}" : "");
            if (k < 0) break;
            n += (size_t)k;
        }
        break;
    }
    return buf;
}
