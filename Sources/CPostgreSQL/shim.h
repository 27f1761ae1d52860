#ifndef STORAGE_CPOSTGRESQL_SHIM_H
#define STORAGE_CPOSTGRESQL_SHIM_H

#include <libpq-fe.h>

#endif
