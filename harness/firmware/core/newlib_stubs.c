/* newlib_stubs.c - the system calls newlib's C library may ask a bare-metal program for.
 *
 * The firmware links with --specs=nano.specs and no libnosys, so a library that calls abort()
 * (newlib's abort raises SIGABRT: _kill, _getpid, _exit), malloc (_sbrk) or printf (_write, ...)
 * would not link. Each stub here is weak: a glue or a library that defines its own wins.
 *
 *   abort      reports {"t":"fault","kind":"abort","pc":<caller>} on the console and ends the image
 *              (the host stores the image's remaining cells as failed, with that line)
 *   _exit      ends the image through the HAL (semihosting exit, or parks the core); a code other
 *              than 0 (a library's exit(111) when malloc failed, say) first reports
 *              {"t":"fault","kind":"exit","code":<code>,"pc":<caller>}, so the host stops at once
 *              instead of waiting for its watchdog on a parked core
 *   _sbrk      no heap: fails with ENOMEM (libraries allocate from fw_calloc, see fw.h)
 *   _write     output is discarded: the console carries the protocol only
 *   _kill, _getpid, _close, _fstat, _isatty, _lseek, _read   minimal answers
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "hal.h"

#define WEAK __attribute__((weak))

static void put_dec(char *p, uint32_t v)
{
    char tmp[11];
    int n = 0;

    do {
        tmp[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    while (n > 0)
        *p++ = tmp[--n];
    *p++ = '}';
    *p++ = '\n';
    *p = '\0';
}

static void report_fault(const char *head, size_t head_len, uint32_t pc)
{
    char line[80];
    size_t i;

    for (i = 0; i < head_len && i < sizeof line - 14; i++)
        line[i] = head[i];
    put_dec(line + i, pc);
    hal_puts(line);
}

WEAK __attribute__((noreturn)) void _exit(int code)
{
    if (code != 0 && code != 134) {     /* 134: abort, which has reported already */
        static const char head[] = "{\"t\":\"fault\",\"kind\":\"exit\",\"code\":";
        char buf[sizeof head + 24];      /* the code (10 digits at most) and ",\"pc\":" */
        size_t i, n = 0;
        uint32_t v = (uint32_t)code;
        char tmp[11];
        for (i = 0; i < sizeof head - 1; i++)
            buf[i] = head[i];
        do {
            tmp[n++] = (char)('0' + v % 10u);
            v /= 10u;
        } while (v != 0u);
        while (n > 0)
            buf[i++] = tmp[--n];
        static const char pc[] = ",\"pc\":";
        for (n = 0; n < sizeof pc - 1; n++)
            buf[i++] = pc[n];
        report_fault(buf, i, (uint32_t)(uintptr_t)__builtin_return_address(0));
    }
    hal_exit(code);
    for (;;) {
    }
}

WEAK __attribute__((noreturn)) void abort(void)
{
    static const char head[] = "{\"t\":\"fault\",\"kind\":\"abort\",\"pc\":";
    char line[sizeof head + 14];
    size_t i;

    for (i = 0; i < sizeof head - 1; i++)
        line[i] = head[i];
    put_dec(line + i, (uint32_t)(uintptr_t)__builtin_return_address(0));
    hal_puts(line);
    _exit(134);
}

WEAK void *_sbrk(ptrdiff_t incr)
{
    (void)incr;
    errno = ENOMEM;
    return (void *)-1;
}

WEAK int _write(int fd, const void *buf, size_t len)
{
    (void)fd;
    (void)buf;
    return (int)len;
}

WEAK int _read(int fd, void *buf, size_t len)
{
    (void)fd;
    (void)buf;
    (void)len;
    return 0;
}

WEAK int _kill(int pid, int sig)
{
    (void)pid;
    (void)sig;
    errno = EINVAL;
    return -1;
}

WEAK int _getpid(void)
{
    return 1;
}

WEAK int _close(int fd)
{
    (void)fd;
    return -1;
}

WEAK int _fstat(int fd, struct stat *st)
{
    (void)fd;
    st->st_mode = S_IFCHR;
    return 0;
}

WEAK int _isatty(int fd)
{
    (void)fd;
    return 1;
}

WEAK int _lseek(int fd, int off, int whence)
{
    (void)fd;
    (void)off;
    (void)whence;
    return 0;
}
