import Synchronization
import TripKit

/// The references a graph reader removed from the objects that made them because they name no object
/// it gives (no object has that key or value, or the one that has it was refused): how many, and the
/// places and reasons of the first `kept`, for `-v`. Shared by a reader's passes, which may run on a
/// thread of their own (`ObjectReadAhead`); the run reads it when the reader has ended.
///
/// Held: a count and at most `kept` short messages, whatever the input's size.
package final class ObjectReferenceRemovals: Sendable {
    private struct State {
        var count = 0
        var first: [String] = []
    }
    private let state = Mutex(State())
    /// How many removals keep their message.
    package static let kept = 10

    package init() {}

    /// Counts one removal: the reference in `member` of the object at `origin` (the member's place,
    /// when known), which names no object for `reason`.
    package func add(_ origin: RecordOrigin, member: String, place: (line: Int, column: Int)?, reason: String) {
        state.withLock { s in
            s.count += 1
            if s.first.count < Self.kept {
                s.first.append("\(origin.at(place)): \(member.quotedForMessage): \(reason); the reference is removed, the object kept")
            }
        }
    }

    /// The removals counted so far.
    package var count: Int { state.withLock { $0.count } }
    /// The messages of the first removals, in the order they were counted.
    package var firstMessages: [String] { state.withLock { $0.first } }

    /// Counts `other`'s removals too, after what is counted now: those a reader made before its objects,
    /// counted by each of its reads (a tables directory's join files, read once per run).
    package func include(_ other: ObjectReferenceRemovals) {
        let (count, first) = other.state.withLock { ($0.count, $0.first) }
        state.withLock { s in
            s.count += count
            s.first += first.prefix(max(0, Self.kept - s.first.count))
        }
    }

    /// Forgets every removal counted: a plan's run counts those of its second read only (its first
    /// reads the same objects for their duplicates).
    package func reset() { state.withLock { $0 = State() } }
}
