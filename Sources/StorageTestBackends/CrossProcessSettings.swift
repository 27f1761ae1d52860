package import Storage

/// The settings one process writes and another reads, in the cross-process settings test and the
/// crash writer's `setting` workload.
package final class CrossProcessSettings: Settings, @unchecked Sendable {
    /// The value the child process sets.
    @Setting package var greeting = "none"
}
