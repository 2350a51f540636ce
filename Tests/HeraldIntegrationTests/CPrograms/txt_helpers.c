/* Checks the TXTRecord* helpers and DNSServiceConstructFullName of whatever libdns_sd it is run against.
 * Prints one line per failed check and "txt helpers: N checks, M failed"; exits 1 if any failed. */
#include <stdio.h>
#include <string.h>

#include <dns_sd.h>

static int checks, failures;

static void check(int condition, const char *what) {
    checks++;
    if (!condition) {
        failures++;
        printf("FAILED: %s\n", what);
    }
}

int main(void) {
    TXTRecordRef txt;
    char small[8];
    TXTRecordCreate(&txt, sizeof small, small);
    check(TXTRecordGetLength(&txt) == 0, "a new record is empty");
    check(TXTRecordSetValue(&txt, "path", 4, "/x/y") == kDNSServiceErr_NoError, "set path=/x/y");
    check(TXTRecordSetValue(&txt, "flag", 0, NULL) == kDNSServiceErr_NoError, "set flag (no value)");
    check(TXTRecordSetValue(&txt, "empty", 0, "") == kDNSServiceErr_NoError, "set empty= (empty value)");
    check(TXTRecordSetValue(&txt, "bad=key", 1, "x") == kDNSServiceErr_Invalid, "a key with '=' is Invalid");
    char long_value[255];
    memset(long_value, 'v', sizeof long_value);
    check(TXTRecordSetValue(&txt, "k", 254, long_value) == kDNSServiceErr_Invalid, "an item over 255 bytes is Invalid");
    const unsigned char expected[] = "\x09path=/x/y\x04" "flag\x06" "empty=";
    uint16_t length = TXTRecordGetLength(&txt);
    const void *bytes = TXTRecordGetBytesPtr(&txt);
    check(length == sizeof expected - 1, "length grows past the caller's 8-byte buffer");
    check(length == sizeof expected - 1 && memcmp(bytes, expected, length) == 0, "the exact rdata bytes");
    check(TXTRecordGetCount(length, bytes) == 3, "three items");
    check(TXTRecordContainsKey(length, bytes, "PATH"), "keys compare without case");
    check(!TXTRecordContainsKey(length, bytes, "pat"), "a key prefix is not the key");
    uint8_t value_length = 99;
    const char *value = TXTRecordGetValuePtr(length, bytes, "path", &value_length);
    check(value && value_length == 4 && memcmp(value, "/x/y", 4) == 0, "value of path");
    check(TXTRecordGetValuePtr(length, bytes, "flag", &value_length) == NULL, "a key without '=' has no value");
    value = TXTRecordGetValuePtr(length, bytes, "empty", &value_length);
    check(value != NULL && value_length == 0, "empty= has an empty value");
    char key[256];
    const void *item_value;
    check(TXTRecordGetItemAtIndex(length, bytes, 1, sizeof key, key, &value_length, &item_value) == 0 &&
              strcmp(key, "flag") == 0 && item_value == NULL,
          "item 1 is flag, without value");
    check(TXTRecordGetItemAtIndex(length, bytes, 3, sizeof key, key, &value_length, &item_value) ==
              kDNSServiceErr_Invalid,
          "no item 3");
    check(TXTRecordGetItemAtIndex(length, bytes, 0, 3, key, &value_length, &item_value) == kDNSServiceErr_NoMemory,
          "a key buffer too small is NoMemory");
    check(TXTRecordSetValue(&txt, "path", 1, "z") == 0 && TXTRecordGetCount(TXTRecordGetLength(&txt), TXTRecordGetBytesPtr(&txt)) == 3,
          "setting an existing key replaces it");
    check(TXTRecordRemoveValue(&txt, "flag") == 0, "remove flag");
    check(TXTRecordRemoveValue(&txt, "flag") == kDNSServiceErr_NoSuchKey, "removing twice is NoSuchKey");
    const unsigned char after[] = "\x06" "empty=\x06path=z";
    check(TXTRecordGetLength(&txt) == sizeof after - 1 && memcmp(TXTRecordGetBytesPtr(&txt), after, sizeof after - 1) == 0,
          "bytes after replace and remove");
    check(TXTRecordSetValue(&txt, "bare", 7, NULL) == 0 &&
              TXTRecordContainsKey(TXTRecordGetLength(&txt), TXTRecordGetBytesPtr(&txt), "bare") &&
              TXTRecordGetValuePtr(TXTRecordGetLength(&txt), TXTRecordGetBytesPtr(&txt), "bare", &value_length) == NULL,
          "a NULL value makes a key without '=', whatever the size says");
    TXTRecordDeallocate(&txt);
    const unsigned char broken[] = "\x03" "a=b\x09" "c";
    check(TXTRecordGetCount(sizeof broken - 1, broken) == 0, "a record whose last item runs past the end counts 0");

    char full[1005];
    check(DNSServiceConstructFullName(full, "My Printer.2\\x", "_ipp._tcp", "local.") == 0 &&
              strcmp(full, "My\\032Printer\\.2\\\\x._ipp._tcp.local.") == 0,
          "full name escapes spaces, dots and backslashes");
    check(DNSServiceConstructFullName(full, NULL, "_ipp._tcp.", "local") == 0 && strcmp(full, "_ipp._tcp.local.") == 0,
          "full name without an instance");
    char huge[2000];
    memset(huge, 'a', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    check(DNSServiceConstructFullName(full, "x", "_ipp._tcp", huge) == -1, "a name over the buffer size is refused");

    printf("txt helpers: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
