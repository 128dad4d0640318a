/* features.h - the one glibc macro PQClean's common/compat.h (c3e6861 and later) asks of <features.h>,
 * which newlib does not have: __GNUC_PREREQ(major, minor), true when GCC is at least that version. */
#ifndef CRYPTOBENCH_FEATURES_H
#define CRYPTOBENCH_FEATURES_H
#define __GNUC_PREREQ(major, minor) ((__GNUC__ << 16) + __GNUC_MINOR__ >= ((major) << 16) + (minor))
#endif
