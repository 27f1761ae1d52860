#ifndef STORAGE_CLMDB_SHIM_H
#define STORAGE_CLMDB_SHIM_H

#include <lmdb.h>

#endif
