/* newlib_stubs.c - the system calls newlib's C library may ask a bare-metal program for.
 *
 * The firmware links with --specs=nano.specs and no libnosys, so a library that calls abort()
 * (newlib's abort raises SIGABRT: _kill, _getpid, _exit), malloc (_sbrk) or printf (_write, ...)
 * would not link. Each stub here is weak: a glue or a library that defines its own wins.
 *
 *   abort      reports {"t":"fault","kind":"abort","pc":<caller>} on the console and ends the image
 *              (the host stores the image's remaining cells as failed, with that line)
 *   _exit      ends the image through the HAL (semihosting exit, or parks the core)
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

WEAK __attribute__((noreturn)) void _exit(int code)
{
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
