/* kernels/cpu/moe.c: a mixture-of-experts layer's own kernels (the
 * contract is kernels/kernels.h's MoE section): the router's top-k, the
 * permutation of token copies into per-expert row blocks and back, the
 * experts' grouped matmuls over row counts known only at run time, and the
 * backwards of each.
 *
 * Every kernel is sequential over tokens and experts (the work of one
 * token is a few rows; the matmuls are plc_k_matmul's, per expert), so the
 * results do not depend on the thread count. Sums over the k copies of a
 * token run in j order; the router's sums over experts in double. */
#include "kernels/kernels.h"

#include <math.h>
#include <string.h>

/* the k highest of s[0..E) (+ nothing else), ties to the lower index */
static void top_k(int32_t *out, const float *s, int64_t E, int64_t k)
{
    for (int64_t j = 0; j < k; j++) {
        int64_t best = -1;
        for (int64_t e = 0; e < E; e++) {
            int taken = 0;
            for (int64_t i = 0; i < j; i++) taken |= out[i] == (int32_t)e;
            if (!taken && (best < 0 || s[e] > s[best])) best = e;
        }
        out[j] = (int32_t)best;
    }
}

int64_t plc_k_moe_route(float *scores, int32_t *expert, int32_t *pos, float *weight, int32_t *counts,
                        const float *logits, int64_t rows, int64_t E, int64_t k, int router,
                        int64_t capacity, float scale)
{
    memset(counts, 0, (size_t)E * sizeof *counts);
    for (int64_t t = 0; t < rows; t++) {
        const float *z = logits + t * E;
        float *p = scores + t * E;
        if (router == 0) {
            float mx = z[0];
            for (int64_t e = 1; e < E; e++) mx = z[e] > mx ? z[e] : mx;
            double sum = 0;
            for (int64_t e = 0; e < E; e++) sum += exp((double)z[e] - mx);
            for (int64_t e = 0; e < E; e++) p[e] = (float)(exp((double)z[e] - mx) / sum);
        } else {
            for (int64_t e = 0; e < E; e++) p[e] = (float)(1.0 / (1.0 + exp(-(double)z[e])));
        }
        int32_t *x = expert + t * k;
        top_k(x, p, E, k);
        double sel = 0;
        for (int64_t j = 0; j < k; j++) sel += p[x[j]];
        for (int64_t j = 0; j < k; j++) weight[t * k + j] = (float)((double)scale * p[x[j]] / sel);
        /* a copy's place in its expert's block, before the blocks' offsets */
        for (int64_t j = 0; j < k; j++) pos[t * k + j] = counts[x[j]]++;
    }
    int64_t dropped = 0, off = 0;
    int64_t start[E > 0 ? E : 1];
    for (int64_t e = 0; e < E; e++) {
        if (counts[e] > capacity) dropped += counts[e] - capacity, counts[e] = (int32_t)capacity;
        start[e] = off;
        off += counts[e];
    }
    for (int64_t i = 0; i < rows * k; i++)
        pos[i] = pos[i] < capacity ? (int32_t)(start[expert[i]] + pos[i]) : -1;
    return dropped;
}

void plc_k_moe_seq_counts(float *choices, const int32_t *expert, int64_t rows, int64_t E, int64_t k,
                          int64_t seq_rows)
{
    memset(choices, 0, (size_t)(rows / seq_rows * E) * sizeof *choices);
    for (int64_t i = 0; i < rows * k; i++) choices[(i / k) / seq_rows * E + expert[i]] += 1.0f;
}

void plc_k_moe_route_backward(float *dlogits, const float *dweight, const float *scores,
                              const int32_t *expert, const float *choices, int64_t rows, int64_t E,
                              int64_t k, int router, int64_t seq_rows, int64_t seq_full, float scale,
                              float aux)
{
    double f[E > 0 ? E : 1], g[E > 0 ? E : 1];
    for (int64_t t = 0; t < rows; t++) {
        if (t % seq_rows == 0) { /* the sequence's share of copies per expert */
            for (int64_t e = 0; e < E; e++) f[e] = choices ? choices[t / seq_rows * E + e] : 0;
            for (int64_t u = t; !choices && u < t + seq_rows; u++)
                for (int64_t j = 0; j < k; j++) f[expert[u * k + j]] += 1.0;
            for (int64_t e = 0; e < E; e++) f[e] /= (double)(seq_full * k);
        }
        const float *p = scores + t * E;
        const int32_t *x = expert + t * k;
        const float *dw = dweight + t * k;
        /* g = d loss / d p: the combine weights w_j = scale p_xj / sum_i p_xi */
        for (int64_t e = 0; e < E; e++) g[e] = 0;
        double sel = 0, qg = 0;
        for (int64_t j = 0; j < k; j++) sel += p[x[j]];
        for (int64_t j = 0; j < k; j++) qg += p[x[j]] / sel * dw[j];
        for (int64_t j = 0; j < k; j++) g[x[j]] += (double)scale * (dw[j] - qg) / sel;
        /* the load-balancing loss: aux E f_e through p_te (sigmoid: the
         * score over the token's sum of scores) */
        if (aux != 0) {
            if (router == 0) {
                for (int64_t e = 0; e < E; e++) g[e] += (double)aux * (double)E * f[e];
            } else {
                double all = 0, sa = 0;
                for (int64_t e = 0; e < E; e++) all += p[e];
                for (int64_t e = 0; e < E; e++) sa += p[e] / all * (double)aux * (double)E * f[e];
                for (int64_t e = 0; e < E; e++) g[e] += ((double)aux * (double)E * f[e] - sa) / all;
            }
        }
        float *dz = dlogits + t * E;
        if (router == 0) { /* softmax: dz_e = p_e (g_e - sum p g) */
            double pg = 0;
            for (int64_t e = 0; e < E; e++) pg += p[e] * g[e];
            for (int64_t e = 0; e < E; e++) dz[e] = (float)(p[e] * (g[e] - pg));
        } else { /* sigmoid: dz_e = g_e p_e (1 - p_e) */
            for (int64_t e = 0; e < E; e++) dz[e] = (float)(g[e] * p[e] * (1.0 - p[e]));
        }
    }
}

void plc_k_moe_permute(float *xp, const float *x, const int32_t *pos, int64_t rows, int64_t h,
                       int64_t k, int64_t prow)
{
    memset(xp, 0, (size_t)(prow * h) * sizeof *xp);
    for (int64_t t = 0; t < rows; t++)
        for (int64_t j = 0; j < k; j++)
            if (pos[t * k + j] >= 0) memcpy(xp + pos[t * k + j] * h, x + t * h, (size_t)h * sizeof *xp);
}

void plc_k_moe_permute_backward(float *dx, const float *dxp, const int32_t *pos, int64_t rows,
                                int64_t h, int64_t k)
{
    for (int64_t t = 0; t < rows; t++)
        for (int64_t j = 0; j < k; j++) {
            if (pos[t * k + j] < 0) continue;
            const float *s = dxp + pos[t * k + j] * h;
            for (int64_t c = 0; c < h; c++) dx[t * h + c] += s[c];
        }
}

void plc_k_moe_unpermute(float *out, const float *y, const int32_t *pos, const float *weight,
                         int64_t rows, int64_t h, int64_t k)
{
    for (int64_t t = 0; t < rows; t++) {
        float *o = out + t * h;
        for (int64_t c = 0; c < h; c++) o[c] = 0;
        for (int64_t j = 0; j < k; j++) {
            if (pos[t * k + j] < 0) continue;
            const float *s = y + pos[t * k + j] * h;
            float w = weight[t * k + j];
            for (int64_t c = 0; c < h; c++) o[c] += w * s[c];
        }
    }
}

void plc_k_moe_unpermute_backward(float *dy, float *dweight, const float *dout, const float *y,
                                  const int32_t *pos, const float *weight, int64_t rows,
                                  int64_t h, int64_t k, int64_t prow)
{
    memset(dy, 0, (size_t)(prow * h) * sizeof *dy);
    for (int64_t t = 0; t < rows; t++) {
        const float *d = dout + t * h;
        for (int64_t j = 0; j < k; j++) {
            int32_t r = pos[t * k + j];
            if (r < 0) {
                dweight[t * k + j] = 0;
                continue;
            }
            float w = weight[t * k + j];
            double dot = 0;
            for (int64_t c = 0; c < h; c++) {
                dy[r * h + c] = w * d[c];
                dot += (double)d[c] * y[r * h + c];
            }
            dweight[t * k + j] = (float)dot;
        }
    }
}

void plc_k_moe_matmul(float *C, const float *A, const float *W, const int32_t *counts, int64_t E,
                      int64_t prow, int64_t K, int64_t N, int transw, float beta)
{
    int64_t r = 0;
    for (int64_t e = 0; e < E; e++) {
        int64_t n = counts[e];
        if (n > 0) plc_k_matmul(C + r * N, A + r * K, W + e * K * N, n, N, K, 0, transw, 1.0f, beta);
        r += n;
    }
    if (beta == 0 && r < prow) memset(C + r * N, 0, (size_t)((prow - r) * N) * sizeof *C);
}

void plc_k_moe_matmul_dw(float *dW, const float *A, const float *B, const int32_t *counts,
                         int64_t E, int64_t K, int64_t N)
{
    int64_t r = 0;
    for (int64_t e = 0; e < E; e++) {
        int64_t n = counts[e];
        if (n > 0) plc_k_matmul(dW + e * K * N, A + r * K, B + r * N, K, N, n, 1, 0, 1.0f, 1.0f);
        r += n;
    }
}
