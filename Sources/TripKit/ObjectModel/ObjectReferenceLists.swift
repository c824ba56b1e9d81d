/// Lists of object references in memory, per list space and object: in the order appended, or in
/// reference order (`ObjectReference`'s `<`) once a space is sorted. What an
/// `InMemoryDeduplicationState` notes under `first` and `last` (a space per `OwnershipList`) and what
/// the run's key table holds in its list spaces before it spills; each counts its own bytes (an
/// object's first reference costs more: `append` says which it was). Used by one thread at a time.
package struct ObjectReferenceLists {
    private var spaces: [[ObjectReference: [ObjectReference]]]

    /// No lists, in `spaces` spaces to start with (more come as they are appended to).
    package init(spaces: Int = 0) { self.spaces = Array(repeating: [:], count: spaces) }

    /// Appends `reference` to `object`'s list in `space` (one hash of the object): true where it is
    /// the object's first.
    package mutating func append(_ reference: ObjectReference, to object: ObjectReference, in space: Int) -> Bool {
        if space >= spaces.count { spaces += Array(repeating: [:], count: space + 1 - spaces.count) }
        return spaces[space].findOrInsert(object, default: []) { references in
            defer { references.append(reference) }
            return references.isEmpty
        }
    }

    /// `object`'s list in `space`; nil where none was appended to.
    package func references(of object: ObjectReference, in space: Int) -> [ObjectReference]? {
        space < spaces.count ? spaces[space][object] : nil
    }

    /// How many objects have a list in `space`.
    package func count(in space: Int) -> Int { space < spaces.count ? spaces[space].count : 0 }

    /// Sorts each list of `space` in reference order, in place.
    package mutating func sort(_ space: Int) {
        guard space < spaces.count else { return }
        var i = spaces[space].values.startIndex
        while i != spaces[space].values.endIndex {
            spaces[space].values[i].sort()
            spaces[space].values.formIndex(after: &i)
        }
    }

    /// `body` on every list: its space, object and references (what a spill copies).
    package func forEach(_ body: (Int, ObjectReference, [ObjectReference]) throws -> Void) rethrows {
        for (space, lists) in spaces.enumerated() {
            for (object, references) in lists { try body(space, object, references) }
        }
    }
}

extension Dictionary {
    /// `body` on `self[key]`, which holds `initial` first where it held nothing: one hash of the key
    /// (`subscript(_:default:)`'s modify finds or inserts).
    @inline(__always)
    mutating func findOrInsert<Result>(_ key: Key, default initial: @autoclosure () -> Value, _ body: (inout Value) -> Result) -> Result {
        body(&self[key, default: initial()])
    }
}
