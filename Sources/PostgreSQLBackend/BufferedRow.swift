internal import CPostgreSQL
import Foundation
import Storage

/// A row of values copied out of a result: what a stream keeps when it must hand its connection
/// to another statement before its rows are read.
struct BufferedRow: StorageRow {
    let values: [StorageValue]

    func value(at index: Int) -> StorageValue {
        index < values.count ? values[index] : .null
    }
}
