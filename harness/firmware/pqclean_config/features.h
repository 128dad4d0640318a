/* features.h - for PQClean's common/compat.h on newlib (the pqclean recipe's config_dir).
 *
 * compat.h includes glibc's <features.h> under GCC only to test __GNUC_PREREQ(7, 1), which decides
 * whether to declare AVX vector types the clean code never uses; newlib has no features.h. This
 * file gives that one macro, as glibc defines it (compiler version at least maj.min). */
#ifndef CB_PQCLEAN_FEATURES_H
#define CB_PQCLEAN_FEATURES_H
#ifndef __GNUC_PREREQ
#define __GNUC_PREREQ(maj, min) ((__GNUC__ << 16) + __GNUC_MINOR__ >= ((maj) << 16) + (min))
#endif
#endif
