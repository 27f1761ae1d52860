#ifndef STORAGE_CSQLITE_SHIM_H
#define STORAGE_CSQLITE_SHIM_H

#include <sqlite3.h>

// Swift cannot import SQLITE_TRANSIENT (a cast macro) nor call the variadic sqlite3_db_config,
// so these small inline helpers expose what the backend needs.

static inline sqlite3_destructor_type storage_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// Turns off double-quoted string literals in DDL and DML, so a misquoted identifier is an
/// error instead of silently becoming a string.
static inline int storage_sqlite_disable_dqs(sqlite3 *db) {
    int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
    if (rc != SQLITE_OK) return rc;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
}

/// Turns on defensive mode: no writes to sqlite_master through PRAGMA writable_schema.
static inline int storage_sqlite_enable_defensive(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
}

#endif
