/* cbsim_int.h - the accounting's records and its per-block hot path, shared by cbsim.c and the
 * native executor (cbcpu.c), which calls cbsim_account on every block it enters: in the executor's
 * own loop, without a call. Not an API: Python sees cbsim_block through binding.py's CbBlock (its
 * size is checked at load) and everything else through cbsim.c's functions. */
#ifndef CBSIM_INT_H
#define CBSIM_INT_H

#include <stdint.h>
#include <stddef.h>

struct uc_struct;               /* unicorn's uc_engine; NULL for an executor without one */

enum { END_NONE = 0, END_COND = 1, END_ALWAYS = 2 };
enum { DYN_UDIV = 1, DYN_SDIV = 2, DYN_LMUL = 3, DYN_LMLA = 4 };

#define INLINE_LINES 4

typedef struct cbsim_block {
    uint32_t addr, size;
    uint32_t cycles, insns;
    uint32_t end, taken_extra;
    uint32_t entry_extra;      /* extra cycles when entered by a taken branch (not by falling through) */
    /* the fetch-bandwidth model (flash on): for each flash line the block touches, in order, the
     * cycles of its instructions before the first one in that line (when the core reaches it).
     * cbsim.c sets line_shift, nlines and line_off (zeroed) before the miss callback fills them. */
    uint32_t line_shift, nlines;
    uint32_t *line_off;        /* inline_off for a block of up to INLINE_LINES lines, else its own array */
    uint32_t inline_off[INLINE_LINES];   /* in the record itself: read with it, no second cache miss */
    /* With prefetch on and no instruction cache, each line of the block after the first one the
     * fetch unit starts is the line prefetched when the core started the line before, off[k] -
     * off[k-1] cycles earlier in the block's own schedule: its wait does not depend on the state
     * the block is entered in. wait_after[0] sums the waits of lines 1.., wait_after[1] those of
     * lines 2.. (cbsim.c prefetch_waits, when the record is made). */
    uint32_t wait_after[2];
} cbsim_block;

/* Fills *b (addr and size are set) with the block's cost; returns 0, or -1 to stop. */
typedef int (*cbsim_miss_fn)(cbsim_block *b);

typedef struct {
    int kind;
    int reg_a, reg_b;          /* unicorn register ids of the operands */
    struct cbsim *sim;
} cbsim_dyn;

/* A set-associative cache of flash lines with LRU replacement (ways == lines: fully associative). */
typedef struct {
    uint32_t sets, ways;
    uint32_t *tag;             /* sets * ways line numbers; UINT32_MAX: empty */
    uint64_t *used;            /* when each way was last used (LRU) */
    uint64_t clock, hits, misses;
} cbsim_cache;

/* The flash memory system in front of the core when the device profile models it (flash caches
 * such as ST's ART accelerator, the Cortex-M7's L1 caches in front of flash): instruction fetch
 * is charged here, per flash line a block touches, instead of by the block's static cost. */
typedef struct {
    int on;
    uint32_t line_shift;       /* log2 of the flash line (fetch unit) in bytes */
    uint32_t miss_cycles;      /* what a line read from flash costs beyond a hit */
    uint32_t read_cycles;      /* one flash access: wait states + 1 (+ miss_extra): a prefetch's latency */
    int prefetch;              /* the next sequential line is requested when the core starts a line */
    int prefetch_only;         /* prefetch on, no instruction cache: cbsim_prefetched_fetch's case */
    int shared_port;           /* data reads from flash occupy the port the fetch unit uses */
    uint32_t code_lo, code_hi; /* the flash range, inclusive */
    uint32_t cur_line;         /* the line the fetch unit holds (UINT32_MAX: none) */
    uint64_t next_ready;       /* when the prefetched line cur_line + 1 arrives (absolute cycles) */
    uint64_t last_fill;        /* miss cycles of the last block's lines copied into the I-cache */
    uint64_t debt;             /* fetch cycles of a block taken back (the alarm), owed when it runs */
    /* Both executors cut straight-line code into blocks at a 1 KiB page and after 512 instructions
     * (QEMU's rules, which the native decoder follows: cbcpu_int.h), and there the data reads' delay
     * on the prefetch lands (below). Unicorn also cuts where its op buffer fills, anywhere: the
     * fetches must not depend on that. A block entered by falling through such a cut continues the
     * one before it: its lines are timed as if there were no cut (data_since: the data-read cycles
     * the one uncut block's fetch schedule does not see) and its reads' delays (pending) wait for
     * the next cut both executors make or the next branch. */
    uint64_t data_since;       /* data-read cycles counted since that block's start */
    uint64_t pending;          /* prefetch delays of those reads (shared port), owed at the next real cut */
    cbsim_cache icache, dcache;    /* sets == 0: that cache is absent or off */
} cbsim_flash;

typedef struct cbsim {
    struct uc_struct *uc;
    uint64_t cycles, insns, blocks;
    uint32_t prev_end, prev_fall, prev_taken_extra;
    uint32_t prev_insns;       /* the block before's instructions (a cut at 512: both executors cut there) */
    uint32_t ws_data;
    cbsim_flash flash;
    cbsim_miss_fn miss;
    cbsim_block *table;        /* open addressing on (addr, size) */
    size_t cap, used;
    cbsim_dyn *dyn;
    size_t ndyn, dyncap;
    int failed;
    /* the alarm and the watched functions (`cryptobench sim run`: cbsim_set_alarm, cbsim_watch) */
    uint64_t alarm;            /* stop before the first block that takes the count past it */
    uint32_t alarm_skip;       /* block entries to let pass before the alarm is checked */
    int alarm_fired;
    uint32_t watch[16];        /* function entries whose calls are logged, entry to return */
    size_t nwatch;
    uint32_t ret_stack[256];   /* return addresses of the watched calls under way */
    size_t nret;
    struct cbsim_event *events;
    size_t nevents, evcap;
    uint64_t events_dropped;   /* watched-call events past MAX_EVENTS: counted, not kept */
    uint64_t insn_limit;       /* cbsim_set_insn_limit: no block is entered once the count reaches it */
    int limit_hit;
    /* the block under way, for a counter read's stamp (cbsim_block_addr, cbsim_block_base) */
    uint32_t cur_addr, cur_static;
    struct cbsim_profile *prof;    /* the per-function profile (cbsim_profile_*); NULL: off */
} cbsim;

/* what the executor calls in cbsim.c */
typedef uint32_t (*cbsim_lr_fn)(void *ctx);
int cbsim_account_block(cbsim *s, uint32_t addr, uint32_t size);
uint64_t cbsim_cycles(const cbsim *s);
cbsim_block *cbsim_block_of(cbsim *s, uint32_t addr, uint32_t size);
int cbsim_enter(cbsim *s, uint32_t addr, uint32_t size, cbsim_lr_fn lr, void *ctx);
void cbsim_account_flash_read(cbsim *s, uint32_t addr, uint32_t size);

/* A data read that went to the flash, `cycles` long. Where data and instructions share its port
 * (the profile's fetch_shared_port), the prefetch under way waits for it (RM0090 3.5.2: D-Code
 * accesses have priority over I-Code). When in the block the read happened is not known here: the
 * line after the block's last arrives read_cycles later, which only matters if it had not arrived. */
static inline __attribute__((always_inline)) void cbsim_flash_read_delay(cbsim *s, uint32_t cycles)
{
    cbsim_flash *f = &s->flash;
    s->cycles += cycles;
    if (f->on) {
        f->data_since += cycles;
        if (f->shared_port && f->prefetch)
            f->pending += f->read_cycles;
    }
}

/* cbsim_account_flash_read in the executor's own loads: the data cache's lookup stays a call
 * (cbsim.c); without one the wait states are charged here, without a call per read */
static inline __attribute__((always_inline)) void cbsim_flash_data_read(cbsim *s, uint32_t addr, uint32_t size)
{
    if (s->flash.dcache.sets) {             /* (only set when the flash model is on) */
        cbsim_account_flash_read(s, addr, size);
        return;
    }
    cbsim_flash_read_delay(s, s->ws_data);
}
void cbsim_account_dynamic(cbsim *s, int kind, uint32_t a, uint32_t b);
void cbsim_flash_fetch(cbsim *s, const cbsim_block *b, int seq, int cont);

/* The start of a block's fetches (both fetch rules): after a branch or a cut both executors make
 * (not `cont`), the delays the data reads before it owe the prefetch land now. Returns whether
 * the block is in the flash's code range (outside it, nothing is fetched from flash). */
static inline __attribute__((always_inline)) int cbsim_fetch_start(cbsim_flash *f, uint32_t addr, int cont)
{
    if (!cont) {
        f->next_ready += f->pending;
        f->pending = 0;
        f->data_since = 0;
    }
    return addr >= f->code_lo && addr <= f->code_hi;
}

/* cbsim_flash_fetch's rules where the flash has prefetch and no instruction cache (the record's
 * waits inside the block are its wait_after): only the first line the fetch unit starts depends on
 * the state the block is entered in. `now`: the count at the block's start. Returns the stall. */
static inline __attribute__((always_inline)) uint64_t cbsim_prefetched_fetch(cbsim_flash *f, const cbsim_block *b, int seq, int cont, uint64_t now)
{
    if (!cbsim_fetch_start(f, b->addr, cont))
        return 0;
    uint32_t first = b->addr >> f->line_shift, n = b->nlines;
    uint64_t t0 = now - f->data_since, stall;      /* (no I-cache: last_fill stays 0) */
    if (first == f->cur_line) {                 /* the line is held: the next one is the first fetched */
        if (n == 1)
            return 0;
        uint64_t reach = t0 + b->line_off[1];
        stall = (f->next_ready > reach ? f->next_ready - reach : 0) + b->wait_after[1];
    } else if (first == f->cur_line + 1 && seq) {   /* the prefetched line, perhaps still on its way */
        uint64_t reach = t0 + b->line_off[0];
        stall = (f->next_ready > reach ? f->next_ready - reach : 0) + b->wait_after[0];
    } else {                                    /* a line read from flash */
        stall = f->miss_cycles + b->wait_after[0];
    }
    f->cur_line = first + n - 1;
    f->next_ready = t0 + stall + b->line_off[n - 1] + f->read_cycles;
    return stall;
}

/* Entry into the block b (its record): its static cost, the taken-branch extra of the block before
 * it when this one is not that block's fall-through, the cost of entering it by a branch, and its
 * fetches when the flash is modelled. */
static inline __attribute__((always_inline)) void cbsim_account(cbsim *s, const cbsim_block *b)
{
    uint32_t addr = b->addr, pe = s->prev_end;
    int fell = addr == s->prev_fall;
    int taken = pe == END_COND && !fell;            /* the conditional branch that ended it was taken */
    int branched = taken || pe == END_ALWAYS;
    /* masks, not branches: whether a block was entered by a branch is what a predictor guesses worst */
    uint64_t now = s->cycles + (s->prev_taken_extra & -(uint32_t)taken) + (b->entry_extra & -(uint32_t)branched);
    if (s->flash.on) {          /* the fetches, timed from the block's start (the count now) */
        int cont = pe == END_NONE && fell && (addr & ((1u << 10) - 1)) != 0 && s->prev_insns < 512;
        if (s->flash.prefetch_only) {
            now += cbsim_prefetched_fetch(&s->flash, b, fell, cont, now);
        } else {
            s->cycles = now;
            cbsim_flash_fetch(s, b, fell, cont);
            now = s->cycles;
        }
        now += s->flash.debt;
        s->flash.debt = 0;
    }
    s->cur_addr = addr;
    s->cur_static = b->cycles;
    s->cycles = now + b->cycles;
    s->insns += b->insns;
    s->blocks++;
    s->prev_end = b->end;
    s->prev_fall = addr + b->size;
    s->prev_taken_extra = b->taken_extra;
    s->prev_insns = b->insns;
}

#endif
