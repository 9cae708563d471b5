/* memplan_slots.c: placement that uses the pipeline's structure: each
 * micro-batch's stash (what its forward keeps for its backward) in a ring
 * slot, the slots arranged so that the space a backward frees adjoins the
 * space its own buffers need, the other buffers placed around them. */
#include "compiler/lower/lower_int.h"

#include <stdlib.h>

typedef mp_item item;

/* A micro-batch's stash: the buffers a forward instruction of the
 * micro-batch creates on the compute stream and a later phase of the same
 * micro-batch (its recompute or backward) reads last. */
static bool is_stash(const plc_program *prog, int32_t first, int32_t last)
{
    const plc_instr *i0 = &prog->instrs[first], *i1 = &prog->instrs[last];
    return i0->micro >= 0 && i0->micro == i1->micro && i0->phase == PLC_PHASE_FORWARD &&
           i1->phase != PLC_PHASE_FORWARD && i0->stream == PLC_STREAM_COMPUTE;
}

#define MAX_SLOTS 64

/* Places the stashes in ring slots, the other buffers around them: where
 * at most k micro-batches hold a stash at once and the micro-batches of
 * each residue mod k hold theirs one after another, micro-batch m's stash
 * takes slot m mod k, its buffers side by side in order of first use, so
 * that a backward frees its slot from the end its last layer lies at.
 * Slots 0 to k - 2 are stacked with that end up, slot k - 1 hangs from the
 * ceiling (the region's top, at least the slots' sum) with that end down,
 * so that the space a backward frees joins the middle, where the buffers
 * it makes are placed (those of mp_orders[2], in its order; see below). With
 * a band, the long-lived ones among the others (mp_orders[2]'s) that share
 * time with a stash are first packed in a band below the slots, lowest gap
 * first, in the order band names, so that the middle is left to the
 * short-lived (those alive only before the first stash or after the last,
 * such as the gradient shards of the step's end, would raise the band
 * where no slot needs it: they are placed with the others). Returns 1
 * where the stashes do not form a ring (or need more than MAX_SLOTS
 * slots), -1 when out of memory. */
int mp_place_slots(const mp_prog *G, uint64_t ceiling, int32_t long_life, mp_band_order band, uint64_t *peak,
                   uint32_t *peak_instr)
{
    plc_program *prog = G->prog;
    const int32_t *first = G->first, *last = G->last;
    const bool *persistent = G->persistent;
    uint32_t nb = prog->nbuffers, ni = prog->ninstrs ? prog->ninstrs : 1, n = 0, ns = 0;
    int32_t nm = 0;
    for (uint32_t i = 0; i < prog->ninstrs; i++)
        if (prog->instrs[i].micro + 1 > nm) nm = prog->instrs[i].micro + 1;
    item *it = malloc(sizeof *it * (nb ? nb : 1));
    int32_t *mf = malloc(sizeof *mf * ((size_t)nm + 1)), *ml = malloc(sizeof *ml * ((size_t)nm + 1));
    uint64_t *msz = calloc((size_t)nm + 1, sizeof *msz), slot_sz[MAX_SLOTS] = {0}, slot_base[MAX_SLOTS] = {0};
    int rc = -1;
    if (!it || !mf || !ml || !msz) goto out;
    for (int32_t m = 0; m < nm; m++) mf[m] = INT32_MAX, ml[m] = -1;
    /* the stashes first, keyed by micro-batch and first use; the others
     * keyed as mp_orders[2] keys them, long-lived only where they share time
     * with a stash (see above) */
    int32_t sf = INT32_MAX, sl = -1; /* the stashes' first and last use */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t b = 0; b < nb; b++) {
            if (persistent[b] || first[b] < 0) continue;
            bool stash = is_stash(prog, first[b], last[b]);
            if (stash != (pass == 0)) continue;
            uint64_t size = mp_align_up(prog->buffers[b].bytes);
            bool lng = last[b] - first[b] >= long_life && first[b] <= sl && last[b] >= sf;
            int32_t m = prog->instrs[first[b]].micro;
            it[n++] = stash ? (item){(int32_t)b, first[b], last[b], size, 0, m, first[b]}
                            : (item){(int32_t)b, first[b], last[b], size, 0, lng ? 0 : 1, lng ? first[b] : 0};
            if (!stash) continue;
            ns++;
            msz[m] += size;
            if (first[b] < mf[m]) mf[m] = first[b];
            if (last[b] > ml[m]) ml[m] = last[b];
            if (first[b] < sf) sf = first[b];
            if (last[b] > sl) sl = last[b];
        }
    /* k: the most stashes alive at the start of one */
    int32_t k = 1;
    for (int32_t m = 0; m < nm; m++) {
        int32_t c = 0;
        for (int32_t q = 0; q < nm && ml[m] >= 0; q++) c += ml[q] >= 0 && mf[q] <= mf[m] && ml[q] >= mf[m];
        if (c > k) k = c;
    }
    rc = 1;
    if (k > MAX_SLOTS) goto out;
    for (int32_t m = 0; m < nm; m++) /* a slot's stashes one after another */
        for (int32_t q = m + k; q < nm && ml[m] >= 0; q += k)
            if (ml[q] >= 0 && ml[m] >= mf[q] && ml[q] >= mf[m]) goto out;
    for (int32_t m = 0; m < nm; m++)
        if (msz[m] > slot_sz[m % k]) slot_sz[m % k] = msz[m];
    qsort(it + ns, n - ns, sizeof *it, mp_cmp_keys);
    int32_t pf = 0;
    uint32_t npre = ns;
    uint64_t band_top = 0;
    if (band != MP_BAND_NONE) {
        while (npre < n && it[npre].k1 == 0) npre++;
        rc = -1;
        if (band == MP_BAND_BY_SIZE) qsort(it + ns, npre - ns, sizeof *it, mp_cmp_start);
        if (mp_place_items(it + ns, npre - ns, 0, ni, true, &band_top, &pf)) goto out;
    }
    for (int32_t j = 0; j < k; j++) slot_base[j] = j ? slot_base[j - 1] + slot_sz[j - 1] : band_top;
    ceiling = ceiling / PLC_PLAN_ALIGN * PLC_PLAN_ALIGN; /* the slot hanging from it keeps its buffers aligned */
    if (ceiling < slot_base[k - 1] + slot_sz[k - 1]) ceiling = slot_base[k - 1] + slot_sz[k - 1];
    qsort(it, ns, sizeof *it, mp_cmp_keys);
    uint64_t in = 0; /* bytes of the micro-batch's stash placed */
    for (uint32_t q = 0; q < ns; q++) {
        int32_t m = (int32_t)it[q].k1, j = m % k;
        if (q == 0 || it[q - 1].k1 != it[q].k1) in = 0;
        it[q].off = k > 1 && j == k - 1 ? ceiling - in - it[q].size : slot_base[j] + in;
        in += it[q].size;
    }
    rc = -1;
    if (mp_place_items(it, n, npre, ni, false, peak, &pf)) goto out;
    if (ns && *peak < ceiling) *peak = ceiling;
    *peak_instr = (uint32_t)pf;
    for (uint32_t q = 0; q < n; q++) prog->buffers[it[q].buf].offset = G->base + it[q].off;
    rc = 0;
out:
    free(it);
    free(mf);
    free(ml);
    free(msz);
    return rc;
}
