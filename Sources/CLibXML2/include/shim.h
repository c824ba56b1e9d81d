/* The headers only: libxml2 is opened when a run first reads XML (LibXML2.swift), never linked, so
   that a run without XML maps neither it nor ICU and liblzma. Its headers include one another as
   <libxml/…>, under /usr/include/libxml2 on Debian (libxml2-dev), which pkg-config's cflags would
   add, but SwiftPM gives a system library's cflags only with its libs. So this is a C target, whose
   include/ directory every dependent gets with -I, and include/libxml is a link to the headers. */
#include <libxml/xmlversion.h>
/* Debian's libxml2 is built with ICU, so encoding.h would include ICU's headers, whose UErrorCode
   clashes with Foundation's own ICU in a module that imports both (the test targets). The only
   declarations that hang on it are two pointer fields at the end of xmlCharEncodingHandler, a
   struct tripconv never touches (libxml2 hands it over by pointer only). */
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
