// The system's SQLite 3 (libsqlite3-dev), with the few things its header has as macros or variadic functions,
// which Swift cannot call, as plain functions.
#ifndef CSQLITE_H
#define CSQLITE_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT: SQLite copies a bound text or blob before the call returns.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

/// Turns off SQLite's acceptance of "double-quoted" string literals in statements and schema, so that a
/// misspelt column name is an error instead of a string. Returns an SQLite result code.
static inline int csqlite_disable_double_quoted_strings(sqlite3 *db) {
    int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    if (rc != SQLITE_OK) return rc;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}

#endif
