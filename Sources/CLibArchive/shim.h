#include <archive.h>
#include <archive_entry.h>

/* AE_IF* are cast macros ((__LA_MODE_T)0100000), which Swift does not import. */
static const unsigned int tripconv_AE_IFMT = AE_IFMT;
static const unsigned int tripconv_AE_IFREG = AE_IFREG;
static const unsigned int tripconv_AE_IFDIR = AE_IFDIR;
static const unsigned int tripconv_AE_IFLNK = AE_IFLNK;
