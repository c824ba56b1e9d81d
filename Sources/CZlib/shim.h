#include <zlib.h>

/* inflateInit2 is a macro over inflateInit2_, which Swift cannot import as such. */
static inline int tripconv_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
