/* The header only: libpq is opened when a run needs it (LibPQ.swift), never linked. Debian's
   libpq-dev puts libpq-fe.h under postgresql/ (pkg-config's cflags would add that directory, and
   its libs would link libpq, so Package.swift does not use pkg-config for it). */
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>
#endif
