// libexpat, the XML parser that Avahi and D-Bus use (Debian: libexpat1-dev). Sources/HeraldXML reads documents
// with it.
#include <expat.h>
