// Matching the engines' own codes as a user writes it: a switch over a result code with
// leading-dot cases (which the store's `StorageError.Code ~= any Error` must not make
// ambiguous), and catch clauses mixing the store's codes and an engine's.
import Foundation
import LMDBBackend
import SQLiteBackend
import Storage

func kind(of code: SQLiteResultCode) -> String {
    switch code {
    case .busy: return "busy"
    case .constraint: return "constraint"
    case .readOnly: return "read-only"
    default: return "other"
    }
}

func outcome(of body: () throws -> Void) -> String {
    do {
        try body()
        return "done"
    } catch StorageError.Code.constraintViolation {
        return "constraint"
    } catch SQLiteResultCode.busy {
        return "busy"
    } catch LMDBResultCode.mapFull {
        return "map full"
    } catch {
        return "failed"
    }
}
