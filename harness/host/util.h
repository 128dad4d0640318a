/* util.h - helpers shared by the protocol loop and the engines.
 *
 * Hex strings, a tiny JSON reader for requests (docs/protocol.md: a flat object whose values are
 * strings, non-negative integers or one level of nested object), and a growable output buffer
 * with a JSON string escaper for replies.
 */
#ifndef CBH_UTIL_H
#define CBH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

#define CB_LINE_MAX 65536   /* longest request line, without its '\n' */

/* ---- hex ---- */

/* Write 2*len lowercase hex digits and a NUL to out. */
void cb_hex_encode(char *out, const uint8_t *in, size_t len);
/* Decode hexlen digits (either case) into out (hexlen/2 bytes).
 * 0 ok, -1 odd length or bad digit. */
int cb_hex_decode(uint8_t *out, const char *hex, size_t hexlen);

/* ---- JSON reader ---- */

#define CB_JSON_MAX 64      /* members in one request, nested ones included */

enum { CB_JSTR = 1, CB_JINT = 2, CB_JOBJ = 3 };

typedef struct {
    const char *key;        /* NUL-terminated, unescaped in place */
    int type;               /* CB_JSTR, CB_JINT or CB_JOBJ */
    const char *str;        /* CB_JSTR: NUL-terminated, unescaped in place */
    size_t len;             /* CB_JSTR: length in bytes */
    uint64_t num;           /* CB_JINT */
    int parent;             /* -1 at top level, else the index of the CB_JOBJ member holding it */
} cb_jmember;

typedef struct {
    int n;
    cb_jmember m[CB_JSON_MAX];
} cb_json;

/* Parse one request in place (text is modified; doc points into it).
 * 0 ok; -1 with a one-line reason in err (never crashes on any input). */
int cb_json_parse(char *text, size_t len, cb_json *doc, char *err, size_t errlen);
/* The member `key` directly inside `parent` (-1: top level), or NULL. */
const cb_jmember *cb_json_get(const cb_json *doc, int parent, const char *key);

/* ---- output ---- */

/* Escape s as the inside of a JSON string (no quotes) into out, always NUL-terminated, truncated
 * to fit. Invalid UTF-8 becomes U+FFFD so that replies stay valid JSON whatever was echoed. */
void cb_json_escape(char *out, size_t outlen, const char *s);

/* Append a member to an engine's describe() text, with a comma when out is not empty:
 * "key":"escaped value" or "key":123. Truncates rather than overflows. */
void cb_member_str(char *out, size_t outlen, const char *key, const char *val);
void cb_member_int(char *out, size_t outlen, const char *key, uint64_t val);

/* A growable reply line. On allocation failure it sets oom and stops growing. */
typedef struct {
    char *p;
    size_t len, cap;
    int oom;
} cb_buf;

void cb_buf_init(cb_buf *b);
void cb_buf_free(cb_buf *b);
void cb_buf_raw(cb_buf *b, const char *s);              /* appended as is */
void cb_buf_jstr(cb_buf *b, const char *s);             /* "escaped" */
void cb_buf_u64(cb_buf *b, uint64_t v);
void cb_buf_hex(cb_buf *b, const uint8_t *p, size_t n); /* "hex" */

/* Reply objects: begin writes {"t":"type", the members write ,"key":value, end writes }\n. */
void cb_obj_begin(cb_buf *b, const char *type);
void cb_obj_str(cb_buf *b, const char *key, const char *val);
void cb_obj_u64(cb_buf *b, const char *key, uint64_t val);
void cb_obj_end(cb_buf *b);

#endif
