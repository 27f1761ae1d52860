public import Storage

/// The settings one process writes and another reads, in the cross-process settings test and the
/// crash writer's `setting` workload.
public final class CrossProcessSettings: Settings, @unchecked Sendable {
    /// The value the child process sets.
    @Setting public var greeting = "none"
}
