/* cbsim.c - native cycle accounting for the Unicorn-based Cortex-M simulator.
 *
 * Python (src/cryptobench/targets/mcu/sim/) decides what every instruction costs (targets/mcu/sim/timing.py, from the
 * ARM Technical Reference Manuals); this file only adds the costs up at emulation speed:
 *
 *  - a block hook: the static cost of each translated block, computed once per block by a
 *    Python callback and cached here, plus the extra cost of a conditional branch that ended the
 *    previous block when it was taken (detected as: this block is not the previous one's
 *    fall-through);
 *  - code hooks on the few instructions whose cost depends on data (divides, long multiplies
 *    on the Cortex-M3), evaluated from their operand registers before they execute;
 *  - a memory hook on data reads from flash: `ws_data` wait states each.
 *
 * For `cryptobench sim run` (any image): an alarm (cbsim_set_alarm) that stops the engine before
 * the block that would take the count past a given cycle (SysTick's next wrap: the executor then
 * takes the exception), cbsim_add_cycles for what the executor charges itself, and watched
 * functions (cbsim_watch) whose entries and returns are logged with the count before their block.
 *
 * The hooks only call the cbsim_account_* functions, which another executor can call directly
 * (cbsim_new with no engine).
 *
 * Everything here is deterministic: the same ELF and profile give the same counts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <unicorn/unicorn.h>

#include "cbsim_int.h"

/* The watched-call events kept (24 bytes each): an image that calls a watched function in a
 * tight loop must not grow the log without bound (`cryptobench sim run` is a sandbox). */
#define MAX_EVENTS (1u << 17)

/* A watched call's entry (kind 1) or return (kind 2): the count before that block ran. */
typedef struct cbsim_event {
    uint32_t kind, addr;
    uint64_t cycles, insns;
} cbsim_event;

static size_t slot_of(const cbsim *s, uint32_t addr, uint32_t size)
{
    uint64_t h = ((uint64_t)addr * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)size << 17);
    return (size_t)(h >> 20) & (s->cap - 1);
}

static int grow(cbsim *s)
{
    size_t cap = s->cap ? s->cap * 2 : 4096;
    cbsim_block *old = s->table, *t = calloc(cap, sizeof *t);
    size_t oldcap = s->cap;
    if (t == NULL)
        return -1;
    s->table = t;
    s->cap = cap;
    s->used = 0;
    for (size_t i = 0; i < oldcap; i++) {
        if (old[i].size == 0)
            continue;
        size_t j = slot_of(s, old[i].addr, old[i].size);
        while (t[j].size != 0)
            j = (j + 1) & (cap - 1);
        t[j] = old[i];
        if (old[i].line_off == old[i].inline_off)
            t[j].line_off = t[j].inline_off;
        s->used++;
    }
    free(old);
    return 0;
}

/* The waits of a block's lines after its first and after its second (cbsim_block.wait_after): line
 * k is reached off[k] - off[k-1] cycles after line k-1 was started and its successor requested, so
 * it waits for what is left of the read_cycles that request takes. */
static void prefetch_waits(const cbsim_flash *f, cbsim_block *b)
{
    int64_t w[2] = {0, 0};
    for (uint32_t k = 1; k < b->nlines; k++) {
        int64_t left = (int64_t)f->read_cycles - ((int64_t)b->line_off[k] - (int64_t)b->line_off[k - 1]);
        if (left > 0) {
            w[0] += left;
            if (k >= 2)
                w[1] += left;
        }
    }
    b->wait_after[0] = (uint32_t)w[0];
    b->wait_after[1] = (uint32_t)w[1];
}

static cbsim_block *lookup(cbsim *s, uint32_t addr, uint32_t size)
{
    if (s->used * 2 >= s->cap && grow(s) != 0)
        return NULL;
    size_t j = slot_of(s, addr, size);
    while (s->table[j].size != 0) {
        if (s->table[j].addr == addr && s->table[j].size == size)
            return &s->table[j];
        j = (j + 1) & (s->cap - 1);
    }
    cbsim_block *b = &s->table[j];
    memset(b, 0, sizeof *b);
    b->addr = addr;
    b->size = size;
    if (s->flash.on) {
        b->line_shift = s->flash.line_shift;
        b->nlines = ((addr + size - 1) >> b->line_shift) - (addr >> b->line_shift) + 1;
        b->line_off = b->nlines <= INLINE_LINES ? b->inline_off : calloc(b->nlines, sizeof *b->line_off);
        if (b->line_off == NULL) {
            b->size = 0;
            return NULL;
        }
    }
    if (s->miss(b) != 0) {
        if (b->line_off != b->inline_off)
            free(b->line_off);
        b->size = 0;
        return NULL;
    }
    if (s->flash.on && s->flash.prefetch_only)
        prefetch_waits(&s->flash, b);
    s->used++;
    return b;
}

/* ---- the flash memory system ------------------------------------------------------------------ */

static int cache_init(cbsim_cache *c, uint32_t sets, uint32_t ways)
{
    free(c->tag);
    free(c->used);
    memset(c, 0, sizeof *c);
    if (sets == 0 || ways == 0)
        return 0;
    c->tag = malloc((size_t)sets * ways * sizeof *c->tag);
    c->used = calloc((size_t)sets * ways, sizeof *c->used);
    if (c->tag == NULL || c->used == NULL)
        return -1;
    memset(c->tag, 0xFF, (size_t)sets * ways * sizeof *c->tag);
    c->sets = sets;
    c->ways = ways;
    return 0;
}

/* Looks `line` up; on a miss it replaces the least recently used way of its set. 1: hit. */
static int cache_access(cbsim_cache *c, uint32_t line)
{
    uint32_t *tag = c->tag + (size_t)(line % c->sets) * c->ways;
    uint64_t *used = c->used + (tag - c->tag);
    uint32_t victim = 0;
    c->clock++;
    for (uint32_t w = 0; w < c->ways; w++) {
        if (tag[w] == line) {
            used[w] = c->clock;
            c->hits++;
            return 1;
        }
        if (used[w] < used[victim])
            victim = w;
    }
    tag[victim] = line;
    used[victim] = c->clock;
    c->misses++;
    return 0;
}

/* The fetches of a block at [addr, addr + size) (its record b) that the previous block did (seq)
 * or did not fall through to, the block starting at the current count. Per line, the core reaches
 * it at the block's start plus b->line_off[k] plus the stalls so far; then:
 *  - the line the fetch unit holds is there: free;
 *  - the line after it, reached in sequence with prefetch on, arrives at next_ready (requested when
 *    the core started the line before, read_cycles later): a core that reaches it earlier stalls
 *    until it arrives (a fetch unit W bytes wide delivers W / read_cycles bytes per cycle);
 *  - a line in the instruction cache is free (a hit);
 *  - any other line is read from flash: miss_cycles (the wait states: the instruction's own fetch
 *    cycle is in its table cost), copied into the instruction cache (a miss, ST's RM).
 * With prefetch on, the line after the one just started is requested at that moment. */
void cbsim_flash_fetch(cbsim *s, const cbsim_block *b, int seq, int cont)
{
    cbsim_flash *f = &s->flash;
    uint32_t addr = b->addr;
    if (!cbsim_fetch_start(f, addr, cont))
        return;
    uint32_t first = addr >> f->line_shift, last = (addr + b->size - 1) >> f->line_shift;
    uint64_t t0 = s->cycles - f->data_since, stall = 0;
    f->last_fill = 0;
    for (uint32_t line = first, k = 0; line <= last; line++, k++) {
        uint64_t reach = t0 + stall + (k < b->nlines ? b->line_off[k] : 0);
        if (line == f->cur_line)
            continue;
        int ahead = f->prefetch && line == f->cur_line + 1 && (seq || line != first);
        if (ahead && f->next_ready <= reach) {
            /* prefetched in time: free (not looked up in the cache, as before) */
        } else if (f->icache.sets && cache_access(&f->icache, line)) {
            /* a hit */
        } else if (ahead) {
            stall += f->next_ready - reach;     /* prefetched, still on its way */
            reach = f->next_ready;
        } else {
            stall += f->miss_cycles;
            reach += f->miss_cycles;
            if (f->icache.sets)
                f->last_fill += f->miss_cycles;
        }
        f->cur_line = line;
        f->next_ready = reach + f->read_cycles;
    }
    s->cycles += stall;
}

/* ---- accounting, shared by the Unicorn hooks below and any other executor ------------------- */

/* For an executor that keeps each block's record with its own decoded block: the record of
 * [addr, addr + size), costed on first sight (NULL: the cost could not be had, and the run has
 * failed). The pointer is good until the next block is costed (the table may move then): the
 * executor copies the record, which does not change once made (a line_off of its own, not
 * inline_off, stays the table's until cbsim_free). */
cbsim_block *cbsim_block_of(cbsim *s, uint32_t addr, uint32_t size)
{
    cbsim_block *b = lookup(s, addr, size);
    if (b == NULL)
        s->failed = 1;
    return b;
}

/* Entry into the block [addr, addr + size). Returns 0, or -1 when the block's cost could not be
 * had (the miss callback failed; the run must stop). */
int cbsim_account_block(cbsim *s, uint32_t addr, uint32_t size)
{
    cbsim_block *b = cbsim_block_of(s, addr, size);
    if (b == NULL)
        return -1;
    cbsim_account(s, b);
    return 0;
}

/* A data read of `size` bytes at `addr` from flash (the caller checked the range): through the
 * data cache where there is one (a hit costs nothing more), else the wait states
 * (cbsim_flash_data_read, cbsim_int.h). */
void cbsim_account_flash_read(cbsim *s, uint32_t addr, uint32_t size)
{
    cbsim_flash *f = &s->flash;
    if (!f->dcache.sets) {
        cbsim_flash_data_read(s, addr, size);
        return;
    }
    if (!cache_access(&f->dcache, addr >> f->line_shift))
        cbsim_flash_read_delay(s, f->miss_cycles);
}

static void profile_block(cbsim *s, uint32_t addr, uint64_t before, uint64_t insns, uint32_t fall, cbsim_lr_fn lr,
                          void *ctx);
static int watched_block(cbsim *s, uint32_t addr, uint64_t cycles, uint64_t insns, cbsim_lr_fn lr, void *ctx);

/* Entry into the block [addr, addr + size) for an executor that honours the alarm and the
 * watched functions (`cryptobench sim run`): 0 to run it, 1 when the alarm took it back (the
 * executor stops before its first instruction; it is counted when it runs again; also when the
 * instruction limit is reached: cbsim_limit_hit), -1 when the run
 * must stop (no cost for the block, or a watched call nested too deep: `failed` is set). `lr`
 * reads the executor's LR, only when a watched function is entered. */
int cbsim_enter(cbsim *s, uint32_t addr, uint32_t size, cbsim_lr_fn lr, void *ctx)
{
    if (s->insns >= s->insn_limit) {        /* the instruction limit: stop before the block */
        s->limit_hit = 1;
        return 1;
    }
    if (s->alarm == UINT64_MAX && s->nwatch == 0 && s->nret == 0 && s->prof == NULL)   /* cryptobench's own images */
        return cbsim_account_block(s, addr, size);
    uint64_t c0 = s->cycles, i0 = s->insns, b0 = s->blocks;
    uint32_t pe = s->prev_end, pf = s->prev_fall, pt = s->prev_taken_extra, line = s->flash.cur_line;
    uint32_t pi = s->prev_insns;
    uint64_t ready = s->flash.next_ready, pending = s->flash.pending, data_since = s->flash.data_since;
    if (cbsim_account_block(s, addr, size) != 0)
        return -1;
    if (s->alarm_skip > 0) {
        s->alarm_skip--;
    } else if (s->cycles > s->alarm) {
        /* the alarm: the block is taken back and the executor stops before it runs, so no read
         * inside it sees a count past the alarm before the caller has acted on it */
        s->cycles = c0;
        s->insns = i0;
        s->blocks = b0;
        s->prev_end = pe;
        s->prev_fall = pf;
        s->prev_taken_extra = pt;
        s->prev_insns = pi;
        /* the flash caches keep the lines it filled: the misses it was charged for them are owed
         * instead (the other fetches and the stalls are counted again when it runs) */
        s->flash.cur_line = line;
        s->flash.next_ready = ready;
        s->flash.pending = pending;
        s->flash.data_since = data_since;
        s->flash.debt = s->flash.last_fill;
        s->alarm = UINT64_MAX;
        s->alarm_fired = 1;
        return 1;
    }
    if (s->prof != NULL)
        profile_block(s, addr, c0 + ((pe == END_COND && addr != pf) ? pt : 0), s->insns - i0,
                      pe == END_ALWAYS ? pf : UINT32_MAX, lr, ctx);
    if ((s->nwatch || s->nret) && watched_block(s, addr, c0, i0, lr, ctx) != 0)
        return -1;
    return 0;
}

static uint32_t unicorn_lr(void *uc)
{
    uint32_t lr = 0;
    uc_reg_read(uc, UC_ARM_REG_LR, &lr);
    return lr;
}

static void on_block(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
    /* Unicorn stops a block whose hook asks it to before its first instruction */
    if (cbsim_enter(user, (uint32_t)address, size, unicorn_lr, uc) != 0)
        uc_emu_stop(uc);
}

static uint32_t bitlen(uint32_t x)
{
    return x ? 32u - (uint32_t)__builtin_clz(x) : 0u;
}

/* UDIV/SDIV: 2 to 12 cycles with early termination (ARM DDI 0337, Cortex-M3 TRM, 3.3.1; the
 * same in the M4 TRM, 3.3.1). Our reading: 2 cycles plus one per 3 quotient bits, at most 12;
 * a zero divisor costs 2. */
static uint32_t div_cycles(uint32_t n, uint32_t d)
{
    if (d == 0)
        return 2;
    int q = (int)bitlen(n) - (int)bitlen(d) + 1;
    if (q < 0)
        q = 0;
    uint32_t c = 2 + ((uint32_t)q + 2) / 3;
    return c > 12 ? 12 : c;
}

/* UMULL/SMULL 3-5, UMLAL/SMLAL 4-7 cycles on the Cortex-M3 (TRM 3.3.1), terminating early on
 * small operands: one more cycle per significant byte of the smaller operand beyond the first. */
static uint32_t lmul_cycles(uint32_t a, uint32_t b, int signed_op, int accumulate)
{
    if (signed_op) {
        a = (int32_t)a < 0 ? (uint32_t)-(int32_t)a : a;
        b = (int32_t)b < 0 ? (uint32_t)-(int32_t)b : b;
    }
    uint32_t m = a < b ? a : b;
    uint32_t bytes = (bitlen(m) + 7) / 8;
    uint32_t extra = bytes > 1 ? bytes - 1 : 0;
    if (accumulate)
        return 4 + (extra > 3 ? 3 : extra);
    return 3 + (extra > 2 ? 2 : extra);
}

/* A data-dependent instruction of `kind` (DYN_* | signed << 8) about to execute with operands a, b. */
void cbsim_account_dynamic(cbsim *s, int kind, uint32_t a, uint32_t b)
{
    switch (kind & 0xff) {
    case DYN_UDIV: s->cycles += div_cycles(a, b); break;
    case DYN_SDIV:
        s->cycles += div_cycles((int32_t)a < 0 ? (uint32_t)-(int32_t)a : a,
                                (int32_t)b < 0 ? (uint32_t)-(int32_t)b : b);
        break;
    case DYN_LMUL: s->cycles += lmul_cycles(a, b, kind >> 8, 0); break;
    case DYN_LMLA: s->cycles += lmul_cycles(a, b, kind >> 8, 1); break;
    }
}

static void on_dyn(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
    cbsim_dyn *d = user;
    uint32_t a = 0, b = 0;
    (void)address;
    (void)size;
    uc_reg_read(uc, d->reg_a, &a);
    uc_reg_read(uc, d->reg_b, &b);
    cbsim_account_dynamic(d->sim, d->kind, a, b);
}

static void on_flash_read(uc_engine *uc, uc_mem_type type, uint64_t address, int size, int64_t value,
                          void *user)
{
    (void)uc;
    (void)type;
    (void)value;
    cbsim_account_flash_read(user, (uint32_t)address, (uint32_t)size);
}

/* ---- the API used from Python (ctypes) ------------------------------------------------------ */

/* The accounting, with its hooks installed on `uc`; with uc == NULL, detached: another executor
 * calls the cbsim_account_* functions itself. */
cbsim *cbsim_new(uc_engine *uc, cbsim_miss_fn miss, uint32_t ws_data, uint64_t flash_lo, uint64_t flash_hi,
                 size_t max_dyn)
{
    cbsim *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->uc = uc;
    s->miss = miss;
    s->ws_data = ws_data;
    s->dyncap = max_dyn;
    s->alarm = UINT64_MAX;
    s->insn_limit = UINT64_MAX;
    s->dyn = calloc(max_dyn ? max_dyn : 1, sizeof *s->dyn);
    uc_hook h;
    if (s->dyn == NULL || grow(s) != 0
        || (uc != NULL && uc_hook_add(uc, &h, UC_HOOK_BLOCK, (void *)on_block, s, 1, 0) != UC_ERR_OK)) {
        free(s->dyn);
        free(s);
        return NULL;
    }
    if (uc != NULL && ws_data > 0 && flash_hi > flash_lo
        && uc_hook_add(uc, &h, UC_HOOK_MEM_READ, (void *)on_flash_read, s, flash_lo, flash_hi) != UC_ERR_OK) {
        free(s->dyn);
        free(s);
        return NULL;
    }
    return s;
}

/* The flash memory system (see cbsim_flash): lines of 2^line_shift bytes over [code_lo, code_hi],
 * miss_cycles per line read (a read takes miss_cycles + 1), prefetch on or off, caches of sets x
 * ways lines (0 x 0: none), data reads sharing the fetch unit's port or not.
 * Returns 0, or -1 when out of memory or when a block was costed already (its lines are the model's). */
int cbsim_set_flash(cbsim *s, uint32_t line_shift, uint32_t miss_cycles, int prefetch, uint32_t code_lo,
                    uint32_t code_hi, uint32_t i_sets, uint32_t i_ways, uint32_t d_sets, uint32_t d_ways,
                    int shared_port)
{
    cbsim_flash *f = &s->flash;
    if (s->used != 0)           /* the records' lines (and their offsets) are the flash model's */
        return -1;
    f->line_shift = line_shift;
    f->miss_cycles = miss_cycles;
    f->read_cycles = miss_cycles + 1;
    f->prefetch = prefetch;
    f->shared_port = shared_port;
    f->next_ready = 0;
    f->pending = 0;
    f->data_since = 0;
    f->code_lo = code_lo;
    f->code_hi = code_hi;
    f->cur_line = UINT32_MAX;
    if (cache_init(&f->icache, i_sets, i_ways) != 0 || cache_init(&f->dcache, d_sets, d_ways) != 0)
        return -1;
    f->prefetch_only = prefetch && f->icache.sets == 0;
    f->on = 1;
    return 0;
}

/* Hits and misses of the flash caches: out[0..3] = I hits, I misses, D hits, D misses. */
void cbsim_flash_stats(const cbsim *s, uint64_t out[4])
{
    out[0] = s->flash.icache.hits;
    out[1] = s->flash.icache.misses;
    out[2] = s->flash.dcache.hits;
    out[3] = s->flash.dcache.misses;
}

/* A data-dependent instruction at `addr`: kind = DYN_* | (signed << 8). */
int cbsim_add_dynamic(cbsim *s, uint32_t addr, int kind, int reg_a, int reg_b)
{
    if (s->ndyn >= s->dyncap)
        return -1;
    cbsim_dyn *d = &s->dyn[s->ndyn++];
    d->kind = kind;
    d->reg_a = reg_a;
    d->reg_b = reg_b;
    d->sim = s;
    if (s->uc == NULL)          /* detached: the executor evaluates it (cbsim_account_dynamic) */
        return 0;
    uc_hook h;
    return uc_hook_add(s->uc, &h, UC_HOOK_CODE, (void *)on_dyn, d, addr, addr) == UC_ERR_OK ? 0 : -1;
}

/* sizeof(cbsim_block), for the ctypes mirror's self-check (targets/mcu/sim/cstructs.py) */
size_t cbsim_block_size(void) { return sizeof(cbsim_block); }

uint64_t cbsim_cycles(const cbsim *s) { return s->cycles; }
uint64_t cbsim_insns(const cbsim *s) { return s->insns; }
uint64_t cbsim_blocks(const cbsim *s) { return s->blocks; }
size_t cbsim_distinct_blocks(const cbsim *s) { return s->used; }
int cbsim_failed(const cbsim *s) { return s->failed; }

void cbsim_profile_free(cbsim *s);

void cbsim_free(cbsim *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->cap; i++)
        if (s->table[i].line_off != s->table[i].inline_off)
            free(s->table[i].line_off);
    free(s->table);
    free(s->dyn);
    cache_init(&s->flash.icache, 0, 0);
    cache_init(&s->flash.dcache, 0, 0);
    free(s->events);
    cbsim_profile_free(s);
    free(s);
}

/* ---- the alarm and watched functions (`cryptobench sim run`) -------------------------------- */

/* Stop the engine before the first block (after `skip` more block entries) whose cost takes the
 * count past `cycles`; that block is not counted until it runs again. UINT64_MAX: no alarm. */
void cbsim_set_alarm(cbsim *s, uint64_t cycles, uint32_t skip)
{
    s->alarm = cycles;
    s->alarm_skip = skip;
    s->alarm_fired = 0;
}

/* Cycles the executor charges itself (an exception's entry), outside any block. */
void cbsim_add_cycles(cbsim *s, uint64_t cycles)
{
    s->cycles += cycles;
}

/* 1 when the last stop was the alarm's (and clears it). */
int cbsim_alarm_fired(cbsim *s)
{
    int fired = s->alarm_fired;
    s->alarm_fired = 0;
    return fired;
}

/* Log every call of the function at `entry`: its entry and its return (the block at the return
 * address LR held on entry), each with the count before that block ran. */
int cbsim_watch(cbsim *s, uint32_t entry)
{
    if (s->nwatch >= sizeof s->watch / sizeof s->watch[0])
        return -1;
    s->watch[s->nwatch++] = entry & ~1u;
    return 0;
}

static int log_event(cbsim *s, uint32_t kind, uint32_t addr, uint64_t cycles, uint64_t insns)
{
    if (s->nevents >= MAX_EVENTS) {
        s->events_dropped++;
        return 0;
    }
    if (s->nevents == s->evcap) {
        size_t cap = s->evcap ? s->evcap * 2 : 1024;
        cbsim_event *e = realloc(s->events, cap * sizeof *e);
        if (e == NULL) {
            s->failed = 1;
            return -1;
        }
        s->events = e;
        s->evcap = cap;
    }
    s->events[s->nevents++] = (cbsim_event){kind, addr, cycles, insns};
    return 0;
}

static int watched_block(cbsim *s, uint32_t addr, uint64_t cycles, uint64_t insns, cbsim_lr_fn lr, void *ctx)
{
    if (s->nret && addr == s->ret_stack[s->nret - 1]) {
        s->nret--;
        if (log_event(s, 2, addr, cycles, insns) != 0)
            return -1;
    }
    for (size_t i = 0; i < s->nwatch; i++) {
        if (s->watch[i] != addr)
            continue;
        if (s->nret >= sizeof s->ret_stack / sizeof s->ret_stack[0]) {
            s->failed = 1;          /* deeper than we follow: the run stops, said so */
            return -1;
        }
        s->ret_stack[s->nret++] = lr(ctx) & ~1u;
        return log_event(s, 1, addr, cycles, insns);
    }
    return 0;
}

size_t cbsim_events(const cbsim *s) { return s->nevents; }
uint64_t cbsim_events_dropped(const cbsim *s) { return s->events_dropped; }

/* Stops the run before the first block entered once `limit` instructions have been counted (the
 * count may pass it by the last block's instructions); UINT64_MAX: no limit. Only executors that
 * enter blocks through cbsim_enter (`cryptobench sim run`'s) honour it. */
void cbsim_set_insn_limit(cbsim *s, uint64_t limit)
{
    s->insn_limit = limit;
    s->limit_hit = 0;
}

/* 1 once the instruction limit stopped the run. */
int cbsim_limit_hit(const cbsim *s) { return s->limit_hit; }

/* Event i: kind (1 entry, 2 return), address, cycles and instructions before its block. */
void cbsim_event_at(const cbsim *s, size_t i, uint32_t *kind, uint32_t *addr, uint64_t *cycles, uint64_t *insns)
{
    const cbsim_event *e = &s->events[i];
    *kind = e->kind;
    *addr = e->addr;
    *cycles = e->cycles;
    *insns = e->insns;
}

/* ---- a counter read's stamp (DWT CYCCNT, SysTick's current value) ---------------------------- */

/* The block under way: its address, and the count at its start (everything charged before its
 * static cost, plus what was charged inside it so far: the data-dependent instructions and flash
 * data reads before the reading instruction). The host adds the static cost of the block's
 * instructions up to the reading one (targets/mcu/sim/stamp.py). */
uint32_t cbsim_block_addr(const cbsim *s) { return s->cur_addr; }
uint64_t cbsim_block_base(const cbsim *s) { return s->cycles - s->cur_static; }

/* ---- the per-function profile (`cryptobench sim run --profile`) ------------------------------ */

/* Every cycle and instruction counted by cbsim_enter goes to the function (one of n ranges
 * [lo, hi), sorted, not overlapping) holding the block it belongs to; slot n holds what lies in
 * none. A block's cycles are its own (its fetch, entry and static cost, the data-dependent and
 * flash-read cycles inside it) plus the taken-branch extra its last instruction pays when the
 * next block is entered; cycles charged between blocks (an exception's entry) go to the block
 * before. A call is an entry into a function's first address from a block that ended in an
 * unconditional branch, with LR holding the address after that block (what BL/BLX at its end
 * wrote; `fall` is UINT32_MAX when the block before did not end so). */
typedef struct cbsim_profile {
    uint32_t n, cur;
    uint32_t *lo, *hi;
    uint64_t *cycles, *insns, *calls;
    uint64_t mark;             /* the count up to which cycles were given out */
} cbsim_profile;

static uint32_t profile_find(const cbsim_profile *p, uint32_t addr)
{
    uint32_t a = 0, b = p->n;
    while (a < b) {                       /* the last range starting at or below addr */
        uint32_t m = (a + b) / 2;
        if (p->lo[m] <= addr)
            a = m + 1;
        else
            b = m;
    }
    return (a > 0 && addr < p->hi[a - 1]) ? a - 1 : p->n;
}

static void profile_block(cbsim *s, uint32_t addr, uint64_t before, uint64_t insns, uint32_t fall, cbsim_lr_fn lr,
                          void *ctx)
{
    cbsim_profile *p = s->prof;
    p->cycles[p->cur] += before - p->mark;      /* the block before, with its taken branch */
    p->mark = before;
    uint32_t f = profile_find(p, addr);
    p->cur = f;
    p->insns[f] += insns;
    if (f < p->n && addr == p->lo[f] && fall != UINT32_MAX && (lr(ctx) & ~1u) == fall)
        p->calls[f]++;
}

void cbsim_profile_free(cbsim *s)
{
    cbsim_profile *p = s->prof;
    if (p == NULL)
        return;
    free(p->lo); free(p->hi); free(p->cycles); free(p->insns); free(p->calls); free(p);
    s->prof = NULL;
}

/* The profile over the n functions [lo[i], hi[i]) (sorted by lo, not overlapping), from now on.
 * Returns 0, or -1 when out of memory. */
int cbsim_profile_on(cbsim *s, uint32_t n, const uint32_t *lo, const uint32_t *hi)
{
    cbsim_profile_free(s);
    cbsim_profile *p = calloc(1, sizeof *p);
    if (p == NULL)
        return -1;
    p->lo = malloc((n + 1) * sizeof *p->lo);
    p->hi = malloc((n + 1) * sizeof *p->hi);
    p->cycles = calloc(n + 1, sizeof *p->cycles);
    p->insns = calloc(n + 1, sizeof *p->insns);
    p->calls = calloc(n + 1, sizeof *p->calls);
    s->prof = p;
    if (!p->lo || !p->hi || !p->cycles || !p->insns || !p->calls) {
        cbsim_profile_free(s);
        return -1;
    }
    memcpy(p->lo, lo, n * sizeof *lo);
    memcpy(p->hi, hi, n * sizeof *hi);
    p->n = n;
    p->cur = n;
    p->mark = s->cycles;
    return 0;
}

/* Function i's (i == n: outside every function) cycles, instructions and calls so far. */
void cbsim_profile_at(cbsim *s, uint32_t i, uint64_t *cycles, uint64_t *insns, uint64_t *calls)
{
    cbsim_profile *p = s->prof;
    p->cycles[p->cur] += s->cycles - p->mark;   /* the block under way, to the count now */
    p->mark = s->cycles;
    *cycles = p->cycles[i];
    *insns = p->insns[i];
    *calls = p->calls[i];
}

/* A counter read's cut of the profile (`cryptobench run --profile`): the function under way is
 * given its cycles up to `at`, the read's stamp (targets/mcu/sim/stamp.py: inside the block under
 * way, whose instructions were all counted when it was entered, as the read's instruction count
 * is), and every function's counts (n + 1 of each) are copied out. A timed window's profile is the
 * difference of the copies at its two reads: its cycles sum to the stamps' difference exactly.
 * Returns 0, 1 when `at` lay outside [the block's start, the count now] and was held there (the
 * sums are then not exact; the caller says so), -1 with the profile off. */
int cbsim_profile_snap(cbsim *s, uint64_t at, uint64_t *cycles, uint64_t *insns, uint64_t *calls)
{
    cbsim_profile *p = s->prof;
    if (p == NULL)
        return -1;
    int held = 0;
    if (at < p->mark || at > s->cycles) {
        at = at < p->mark ? p->mark : s->cycles;
        held = 1;
    }
    p->cycles[p->cur] += at - p->mark;
    p->mark = at;
    memcpy(cycles, p->cycles, (p->n + 1) * sizeof *cycles);
    memcpy(insns, p->insns, (p->n + 1) * sizeof *insns);
    memcpy(calls, p->calls, (p->n + 1) * sizeof *calls);
    return held;
}
