import TripKit

/// What a run shows its caller as it goes: the command line's progress bar, its `-v` lines and a
/// bulk run's failed inputs. Each method has a default that does nothing.
public protocol RunObserver: Sendable {
    /// An input's turn has come: its reader is about to be opened (a conversion into one output),
    /// or its conversion to start (a bulk run, on its worker's thread).
    func starting(_ input: RunInput)
    /// Each reader, as it is opened; what this returns is read instead (the command line counts
    /// the trips for its progress bar).
    func reading(_ reader: any RecordReader) -> any RecordReader
    /// A record set aside, just before it goes to the rejects file.
    func settingAside(_ record: SetAsideRecord)
    /// A bulk run's input failed (the others go on): called as it fails, on one thread at a time.
    func failed(_ input: RunInput, error: TripError)
    /// The trips held passed half of `memoryLimit`: the run goes on with temporary files in
    /// `directory` (called once per output, on the thread that spills).
    func spilling(memoryLimit: Int, directory: String)
    /// An archive held no member to read: `passedOver` regular files had no format's extension.
    func foundNothing(in archive: RunInput, passedOver: Int)
    /// The run has moved on from reading the input last started: to its stages, then (after the last
    /// input) to deduplicating and writing; the next input's `starting` means reading again.
    func entering(_ phase: RunPhase)
}

extension RunObserver {
    /// Shows nothing.
    public func starting(_ input: RunInput) {}
    /// Reads the reader as it is.
    public func reading(_ reader: any RecordReader) -> any RecordReader { reader }
    /// Shows nothing; the record still goes to the rejects file, if the run has one.
    public func settingAside(_ record: SetAsideRecord) {}
    /// Shows nothing; the input's outcome still carries the error.
    public func failed(_ input: RunInput, error: TripError) {}
    /// Shows nothing; the summary still counts what was spilled.
    public func spilling(memoryLimit: Int, directory: String) {}
    /// Shows nothing; the summary counts no input for it.
    public func foundNothing(in archive: RunInput, passedOver: Int) {}
    /// Shows nothing.
    public func entering(_ phase: RunPhase) {}
}

/// An observer that sees nothing.
public struct SilentRunObserver: RunObserver {
    /// The observer a run has when its caller wants to see nothing (also `.silent`).
    public init() {}
}

extension RunObserver where Self == SilentRunObserver {
    /// An observer that sees nothing.
    public static var silent: SilentRunObserver { SilentRunObserver() }
}
