/* util.c - kv lists, hex, a tiny JSON reader and the reply writer.
 *
 * The JSON reader accepts exactly what docs/protocol.md allows in a request: one object whose
 * values are strings, non-negative integers, or objects (one level deep) of strings and integers.
 * Anything else is rejected with a reason; it parses in place and never allocates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "util.h"

/* ---------------------------------------------------------------- kv lists */

const uint8_t *cb_kv_input(const cb_kv *kv, const char *name, size_t *len)
{
    static const uint8_t none[1];
    const uint8_t *v = cb_kv_get(kv, name, len);
    if (v == NULL) {
        *len = 0;
        return none;
    }
    return v;
}

const uint8_t *cb_kv_get(const cb_kv *kv, const char *name, size_t *len)
{
    for (int i = 0; i < kv->n; i++) {
        if (strcmp(kv->name[i], name) == 0) {
            if (len)
                *len = kv->len[i];
            return kv->val[i];
        }
    }
    if (len)
        *len = 0;
    return NULL;
}

int cb_kv_put(cb_kv *kv, const char *name, const uint8_t *val, size_t len)
{
    if (strlen(name) >= sizeof kv->name[0])
        return -1;
    /* malloc(1) for empty values so that a present-but-empty input is not NULL */
    uint8_t *copy = malloc(len ? len : 1);
    if (copy == NULL)
        return -1;
    if (len)
        memcpy(copy, val, len);

    int i;
    for (i = 0; i < kv->n; i++)         /* a second put of a name replaces the first */
        if (strcmp(kv->name[i], name) == 0)
            break;
    if (i == kv->n) {
        if (kv->n == CB_MAXKV) {
            free(copy);
            return -1;
        }
        kv->n++;
        strcpy(kv->name[i], name);
    } else {
        free(kv->val[i]);
    }
    kv->val[i] = copy;
    kv->len[i] = len;
    return 0;
}

void cb_kv_free(cb_kv *kv)
{
    for (int i = 0; i < kv->n; i++) {
        free(kv->val[i]);
        kv->val[i] = NULL;
        kv->len[i] = 0;
    }
    kv->n = 0;
}

/* ---------------------------------------------------------------- hex */

void cb_hex_encode(char *out, const uint8_t *in, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * len] = '\0';
}

static int hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int cb_hex_decode(uint8_t *out, const char *hex, size_t hexlen)
{
    if (hexlen % 2)
        return -1;
    for (size_t i = 0; i < hexlen / 2; i++) {
        int hi = hex_digit((unsigned char)hex[2 * i]);
        int lo = hex_digit((unsigned char)hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

/* ---------------------------------------------------------------- UTF-8 */

/* Length of the well-formed UTF-8 sequence at p (at most avail bytes), or 0 if ill-formed.
 * Rejects overlong forms, surrogates and code points above U+10FFFF. */
static size_t utf8_len(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    size_t n;
    unsigned min;
    if (c < 0x80)
        return 1;
    else if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000;
    else
        return 0;
    if (avail < n)
        return 0;
    unsigned cp = c & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

static size_t utf8_put(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* ---------------------------------------------------------------- JSON reader */

typedef struct {
    char *start;
    char *p;            /* read cursor */
    char *end;
    cb_json *doc;
    char *err;
    size_t errlen;
} jreader;

static int jfail(jreader *r, const char *what)
{
    /* the byte offset helps whoever wrote the request by hand */
    snprintf(r->err, r->errlen, "bad json at byte %zu: %s", (size_t)(r->p - r->start), what);
    return -1;
}

static void skip_ws(jreader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\n'))
        r->p++;
}

static int read_hex4(jreader *r, unsigned *v)
{
    if (r->end - r->p < 4)
        return jfail(r, "truncated \\u escape");
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit((unsigned char)r->p[i]);
        if (d < 0)
            return jfail(r, "bad \\u escape");
        *v = *v << 4 | (unsigned)d;
    }
    r->p += 4;
    return 0;
}

/* Escape sequence after the backslash; writes its UTF-8 bytes at *w. */
static int read_escape(jreader *r, char **w)
{
    if (r->p >= r->end)
        return jfail(r, "unterminated string");
    char c = *r->p++;
    switch (c) {
    case '"': *(*w)++ = '"'; return 0;
    case '\\': *(*w)++ = '\\'; return 0;
    case '/': *(*w)++ = '/'; return 0;
    case 'b': *(*w)++ = '\b'; return 0;
    case 'f': *(*w)++ = '\f'; return 0;
    case 'n': *(*w)++ = '\n'; return 0;
    case 'r': *(*w)++ = '\r'; return 0;
    case 't': *(*w)++ = '\t'; return 0;
    case 'u': break;
    default: return jfail(r, "unknown escape in string");
    }
    unsigned cp;
    if (read_hex4(r, &cp))
        return -1;
    if (cp >= 0xdc00 && cp <= 0xdfff)
        return jfail(r, "lone low surrogate in string");
    if (cp >= 0xd800 && cp <= 0xdbff) {
        unsigned lo;
        if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
            return jfail(r, "lone high surrogate in string");
        r->p += 2;
        if (read_hex4(r, &lo))
            return -1;
        if (lo < 0xdc00 || lo > 0xdfff)
            return jfail(r, "bad surrogate pair in string");
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    if (cp == 0)
        return jfail(r, "\\u0000 is not allowed in strings");
    /* the escape took >= 6 input bytes and yields <= 4 (12 -> 4 for pairs): the write cursor
     * never passes the read cursor */
    *w += utf8_put(*w, cp);
    return 0;
}

/* A string starting after its opening quote, unescaped in place and NUL-terminated. */
static int read_string(jreader *r, const char **out, size_t *outlen)
{
    char *start = r->p, *w = r->p;
    for (;;) {
        if (r->p >= r->end)
            return jfail(r, "unterminated string");
        unsigned char c = (unsigned char)*r->p;
        if (c == '"') {
            r->p++;
            break;
        }
        if (c == '\\') {
            r->p++;
            if (read_escape(r, &w))
                return -1;
        } else if (c < 0x20) {
            return jfail(r, "control character in string");
        } else {
            size_t n = utf8_len((const unsigned char *)r->p, (size_t)(r->end - r->p));
            if (n == 0)
                return jfail(r, "invalid UTF-8 in string");
            memmove(w, r->p, n);
            w += n;
            r->p += n;
        }
    }
    *w = '\0';          /* w <= the closing quote, already consumed */
    *out = start;
    *outlen = (size_t)(w - start);
    return 0;
}

static int read_uint(jreader *r, uint64_t *v)
{
    char *s = r->p;
    *v = 0;
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
        unsigned d = (unsigned)(*r->p - '0');
        if (*v > (UINT64_MAX - d) / 10)
            return jfail(r, "integer too large");
        *v = *v * 10 + d;
        r->p++;
    }
    if (r->p - s > 1 && *s == '0')
        return jfail(r, "leading zeros in integer");
    if (r->p < r->end && (*r->p == '.' || *r->p == 'e' || *r->p == 'E'))
        return jfail(r, "numbers must be non-negative integers");
    return 0;
}

static int read_object(jreader *r, int parent);

static int read_value(jreader *r, cb_jmember *m, int parent)
{
    if (r->p >= r->end)
        return jfail(r, "missing value");
    char c = *r->p;
    if (c == '"') {
        r->p++;
        m->type = CB_JSTR;
        return read_string(r, &m->str, &m->len);
    }
    if (c >= '0' && c <= '9') {
        m->type = CB_JINT;
        return read_uint(r, &m->num);
    }
    if (c == '{') {
        if (parent >= 0)
            return jfail(r, "objects nest one level at most");
        m->type = CB_JOBJ;
        return read_object(r, (int)(m - r->doc->m));
    }
    if (c == '-')
        return jfail(r, "negative numbers are not allowed");
    if (c == '[')
        return jfail(r, "arrays are not allowed");
    if (c == 't' || c == 'f' || c == 'n')
        return jfail(r, "true/false/null are not allowed; use integers or strings");
    return jfail(r, "unexpected character where a value should be");
}

/* An object starting at '{'; its members get `parent` as their parent index. */
static int read_object(jreader *r, int parent)
{
    r->p++;                                     /* '{' */
    skip_ws(r);
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        return 0;
    }
    for (;;) {
        skip_ws(r);
        if (r->p >= r->end || *r->p != '"')
            return jfail(r, "expected a quoted key");
        r->p++;
        const char *key;
        size_t keylen;
        if (read_string(r, &key, &keylen))
            return -1;
        if (cb_json_get(r->doc, parent, key) != NULL) {
            char what[96];
            snprintf(what, sizeof what, "duplicate key '%.60s'", key);
            return jfail(r, what);
        }
        if (r->doc->n == CB_JSON_MAX)
            return jfail(r, "too many members");
        cb_jmember *m = &r->doc->m[r->doc->n++];
        memset(m, 0, sizeof *m);
        m->key = key;
        m->parent = parent;
        skip_ws(r);
        if (r->p >= r->end || *r->p != ':')
            return jfail(r, "expected ':' after key");
        r->p++;
        skip_ws(r);
        if (read_value(r, m, parent))
            return -1;
        skip_ws(r);
        if (r->p >= r->end)
            return jfail(r, "unterminated object");
        if (*r->p == ',') {
            r->p++;
            continue;
        }
        if (*r->p == '}') {
            r->p++;
            return 0;
        }
        return jfail(r, "expected ',' or '}'");
    }
}

int cb_json_parse(char *text, size_t len, cb_json *doc, char *err, size_t errlen)
{
    jreader r = { text, text, text + len, doc, err, errlen };
    doc->n = 0;
    skip_ws(&r);
    if (r.p >= r.end || *r.p != '{')
        return jfail(&r, "a request must be one JSON object");
    if (read_object(&r, -1))
        return -1;
    skip_ws(&r);
    if (r.p != r.end)
        return jfail(&r, "trailing characters after the object");
    return 0;
}

const cb_jmember *cb_json_get(const cb_json *doc, int parent, const char *key)
{
    for (int i = 0; i < doc->n; i++)
        if (doc->m[i].parent == parent && doc->m[i].key && strcmp(doc->m[i].key, key) == 0)
            return &doc->m[i];
    return NULL;
}

/* ---------------------------------------------------------------- JSON writer */

/* Escaped form of the character(s) at s into piece; returns bytes consumed from s. */
static size_t escape_one(const char *s, char piece[8])
{
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
        piece[0] = '\\', piece[1] = (char)c, piece[2] = '\0';
        return 1;
    }
    if (c == '\n') { strcpy(piece, "\\n"); return 1; }
    if (c == '\r') { strcpy(piece, "\\r"); return 1; }
    if (c == '\t') { strcpy(piece, "\\t"); return 1; }
    if (c < 0x20) {
        snprintf(piece, 8, "\\u%04x", c);
        return 1;
    }
    size_t n = utf8_len((const unsigned char *)s, strnlen(s, 4));
    if (n == 0) {
        strcpy(piece, "\\ufffd");
        return 1;
    }
    memcpy(piece, s, n);
    piece[n] = '\0';
    return n;
}

void cb_json_escape(char *out, size_t outlen, const char *s)
{
    size_t w = 0;
    if (outlen == 0)
        return;
    while (*s) {
        char piece[8];
        size_t used = escape_one(s, piece);
        size_t n = strlen(piece);
        if (w + n + 1 > outlen)
            break;
        memcpy(out + w, piece, n);
        w += n;
        s += used;
    }
    out[w] = '\0';
}

void cb_member_str(char *out, size_t outlen, const char *key, const char *val)
{
    size_t w = strlen(out);
    if (w + 1 >= outlen)
        return;
    int n = snprintf(out + w, outlen - w, "%s\"%s\":\"", w ? "," : "", key);
    if (n < 0 || (size_t)n + 2 >= outlen - w) {   /* no room for even an empty value: undo */
        out[w] = '\0';
        return;
    }
    w += (size_t)n;
    cb_json_escape(out + w, outlen - w - 1, val); /* keep one byte for the closing quote */
    w += strlen(out + w);
    out[w++] = '"';
    out[w] = '\0';
}

void cb_member_int(char *out, size_t outlen, const char *key, uint64_t val)
{
    size_t w = strlen(out);
    if (w + 1 >= outlen)
        return;
    int n = snprintf(out + w, outlen - w, "%s\"%s\":%llu", w ? "," : "", key,
                     (unsigned long long)val);
    if (n < 0 || (size_t)n >= outlen - w)
        out[w] = '\0';
}

/* ---------------------------------------------------------------- reply buffer */

void cb_buf_init(cb_buf *b)
{
    b->p = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}

void cb_buf_free(cb_buf *b)
{
    free(b->p);
    cb_buf_init(b);
}

static int buf_reserve(cb_buf *b, size_t more)
{
    if (b->oom)
        return -1;
    if (b->len + more + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static void buf_mem(cb_buf *b, const char *s, size_t n)
{
    if (buf_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void cb_buf_raw(cb_buf *b, const char *s)
{
    buf_mem(b, s, strlen(s));
}

void cb_buf_jstr(cb_buf *b, const char *s)
{
    buf_mem(b, "\"", 1);
    while (*s) {
        char piece[8];
        s += escape_one(s, piece);
        buf_mem(b, piece, strlen(piece));
    }
    buf_mem(b, "\"", 1);
}

void cb_buf_u64(cb_buf *b, uint64_t v)
{
    char tmp[24];
    snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    cb_buf_raw(b, tmp);
}

void cb_buf_hex(cb_buf *b, const uint8_t *p, size_t n)
{
    buf_mem(b, "\"", 1);
    if (buf_reserve(b, 2 * n + 1))
        return;
    cb_hex_encode(b->p + b->len, p, n);
    b->len += 2 * n;
    buf_mem(b, "\"", 1);
}

void cb_obj_begin(cb_buf *b, const char *type)
{
    b->len = 0;
    b->oom = 0;
    cb_buf_raw(b, "{\"t\":");
    cb_buf_jstr(b, type);
}

void cb_obj_str(cb_buf *b, const char *key, const char *val)
{
    cb_buf_raw(b, ",");
    cb_buf_jstr(b, key);
    cb_buf_raw(b, ":");
    cb_buf_jstr(b, val);
}

void cb_obj_u64(cb_buf *b, const char *key, uint64_t val)
{
    cb_buf_raw(b, ",");
    cb_buf_jstr(b, key);
    cb_buf_raw(b, ":");
    cb_buf_u64(b, val);
}

void cb_obj_end(cb_buf *b)
{
    cb_buf_raw(b, "}\n");
}

int cb_say(char *err, int code, const char *msg)
{
    snprintf(err, CB_ERRLEN, "%s", msg);
    return code;
}

void *cb_slot_new(size_t size, char *err)
{
    void *s = calloc(1, size);
    if (s == NULL)
        cb_say(err, CB_ERR, "out of memory");
    return s;
}
