/// The objects each relationship of an object points at, in the order of its entity's relationships
/// (`ObjectModel.allRelationships(of:)`), all in one buffer: an object of any number of
/// relationships costs one allocation for them, none when it has none (docs/DESIGN-NOTES.md, "An
/// object's relationships in one buffer").
///
/// A collection of `ObjectReferenceList`s, one per relationship, indexed from zero; a list is read
/// without copying, and a relationship is replaced by assigning to its subscript. Equal values have
/// equal buffers.
///
/// The buffer of n > 0 relationships starts with n headers: header i is
/// `ObjectReference(entity: n, key: end of list i)`, ends counted from the buffer's start, so list i
/// is `buffer[(i == 0 ? n : end of list i-1) ..< end of list i]`. No relationships: an empty buffer.
public struct ObjectRelationships: Sendable, Hashable, RandomAccessCollection, ExpressibleByArrayLiteral, CustomStringConvertible {
    @usableFromInline var buffer: [ObjectReference]

    /// No relationships.
    @inlinable public init() { buffer = [] }

    /// `count` relationships, every one empty.
    public init(empty count: Int) {
        buffer = []
        reset(count: count)
    }

    /// The relationships of these lists, in order.
    public init<S: Sequence>(_ lists: S) where S.Element: Collection, S.Element.Element == ObjectReference {
        buffer = []
        let lists = Array(lists)
        let n = lists.count
        guard n > 0 else { return }
        buffer.reserveCapacity(n + lists.reduce(0) { $0 + $1.count })
        var end = n
        for list in lists {
            end += list.count
            buffer.append(ObjectReference(entity: n, key: Int64(end)))
        }
        for list in lists { buffer.append(contentsOf: list) }
    }

    /// The relationships of these lists, in order.
    public init(arrayLiteral lists: [ObjectReference]...) {
        if lists.isEmpty { self.init() } else { self.init(lists) }
    }

    /// The first relationship's position: 0.
    public var startIndex: Int { 0 }
    /// The number of relationships.
    public var endIndex: Int { buffer.isEmpty ? 0 : buffer[0].entity }
    /// The number of relationships.
    @inlinable public var count: Int { buffer.isEmpty ? 0 : buffer[0].entity }
    /// The position after `i`.
    public func index(after i: Int) -> Int { i + 1 }
    /// The position before `i`.
    public func index(before i: Int) -> Int { i - 1 }

    /// Where list `i` starts and ends in the buffer.
    @inlinable
    func bounds(_ i: Int) -> Range<Int> {
        precondition(i >= 0 && i < count, "relationship \(i) of \(count)")
        let start = i == 0 ? buffer[0].entity : Int(buffer[i - 1].key)
        return start..<Int(buffer[i].key)
    }

    /// The references of relationship `i`; assigning replaces them.
    @inlinable
    public subscript(i: Int) -> ObjectReferenceList {
        get { ObjectReferenceList(buffer: buffer, bounds: bounds(i)) }
        set { replace(i, with: newValue) }
    }

    /// Replaces the references of relationship `i` with `references`.
    public mutating func replace<C: Collection>(_ i: Int, with references: C) where C.Element == ObjectReference {
        let old = bounds(i)
        let delta = references.count - old.count
        buffer.replaceSubrange(old, with: references)
        if delta != 0 { for j in i..<count { buffer[j].key += Int64(delta) } }
    }

    /// Adds an empty relationship after the last.
    public mutating func appendEmpty() { resize(to: count + 1) }

    /// Removes the last relationship.
    public mutating func removeLast() {
        precondition(count > 0, "no relationship to remove")
        resize(to: count - 1)
    }

    /// Keeps the first `newCount` relationships, adding empty ones or removing the last ones, in place.
    public mutating func resize(to newCount: Int) {
        precondition(newCount >= 0, "\(newCount) relationships")
        let n = count
        guard newCount != n else { return }
        guard newCount > 0 else { buffer = []; return }
        guard n > 0 else { self = ObjectRelationships(empty: newCount); return }
        if newCount < n {
            // The lists removed are the buffer's last references; then their headers go.
            buffer.removeSubrange(Int(buffer[newCount - 1].key)...)
            buffer.removeSubrange(newCount..<n)
            let shift = Int64(n - newCount)
            for i in 0..<newCount { buffer[i].entity = newCount; buffer[i].key -= shift }
        } else {
            let added = newCount - n, end = Int64(buffer.count + added)
            buffer.insert(contentsOf: repeatElement(ObjectReference(entity: newCount, key: end), count: added), at: n)
            for i in 0..<n { buffer[i].entity = newCount; buffer[i].key += Int64(added) }
        }
    }

    /// Empties every relationship and makes `count` of them, keeping the buffer's room: for a reader
    /// that fills one object's relationships after another's, in order (`append(_:to:)`).
    public mutating func reset(count: Int) {
        buffer.removeAll(keepingCapacity: true)
        for _ in 0..<count { buffer.append(ObjectReference(entity: count, key: Int64(count))) }
    }

    /// Appends `reference` to relationship `i`; the relationships after it must be empty (filled in order).
    public mutating func append(_ reference: ObjectReference, to i: Int) {
        let n = count
        precondition(i >= 0 && i < n && buffer[i].key == Int64(buffer.count), "relationship \(i) of \(n) is not the last filled")
        buffer.append(reference)
        for j in i..<n { buffer[j].key += 1 }
    }

    /// Whether every reference of every relationship satisfies `predicate` (read in place, no slice made).
    public func allReferences(satisfy predicate: (ObjectReference) throws -> Bool) rethrows -> Bool {
        var i = count
        while i < buffer.count {
            if !(try predicate(buffer[i])) { return false }
            i += 1
        }
        return true
    }

    /// Every reference of every relationship, in order.
    public var allReferences: ArraySlice<ObjectReference> { buffer.isEmpty ? [] : buffer[buffer[0].entity...] }

    /// Every reference changed by `transform` in place, those it gives nil for removed from their
    /// list: the number removed. The buffer is not copied when it is not shared.
    public mutating func updateReferences(_ transform: (ObjectReference) throws -> ObjectReference?) rethrows -> Int {
        let n = count
        guard n > 0 else { return 0 }
        var removed = 0
        var write = n
        var read = n
        for i in 0..<n {
            let end = Int(buffer[i].key)
            while read < end {
                if let changed = try transform(buffer[read]) {
                    buffer[write] = changed
                    write += 1
                } else {
                    removed += 1
                }
                read += 1
            }
            buffer[i].key = Int64(write)
        }
        if removed > 0 { buffer.removeLast(removed) }
        return removed
    }

    /// Whether the relationships are these lists.
    public static func == (a: ObjectRelationships, b: [[ObjectReference]]) -> Bool { a.elementsEqual(b) { $0 == $1 } }
    /// Whether these lists are the relationships.
    public static func == (a: [[ObjectReference]], b: ObjectRelationships) -> Bool { b == a }

    /// The lists as arrays.
    public var lists: [[ObjectReference]] { map { Array($0) } }

    /// The lists, as an array of arrays prints.
    public var description: String { lists.description }
}

/// The references of one relationship of an object: a view of its `ObjectRelationships`' buffer,
/// indexed from zero.
public struct ObjectReferenceList: Sendable, Hashable, RandomAccessCollection, ExpressibleByArrayLiteral, CustomStringConvertible {
    @usableFromInline let buffer: [ObjectReference]
    @usableFromInline let bounds: Range<Int>

    @inlinable init(buffer: [ObjectReference], bounds: Range<Int>) { self.buffer = buffer; self.bounds = bounds }

    /// No references.
    public init() { buffer = []; bounds = 0..<0 }

    /// These references.
    public init<C: Collection>(_ references: C) where C.Element == ObjectReference {
        buffer = Array(references); bounds = 0..<buffer.count
    }

    /// These references.
    public init(arrayLiteral references: ObjectReference...) { self.init(references) }

    /// The first reference's position: 0.
    @inlinable public var startIndex: Int { 0 }
    /// The number of references.
    @inlinable public var endIndex: Int { bounds.count }
    /// The number of references.
    @inlinable public var count: Int { bounds.count }
    /// Whether there is none.
    @inlinable public var isEmpty: Bool { bounds.isEmpty }
    /// The position after `i`.
    @inlinable public func index(after i: Int) -> Int { i + 1 }
    /// The position before `i`.
    @inlinable public func index(before i: Int) -> Int { i - 1 }

    /// The reference at `i`, counted from zero.
    @inlinable
    public subscript(i: Int) -> ObjectReference {
        precondition(i >= 0 && i < bounds.count, "reference \(i) of \(bounds.count)")
        return buffer[bounds.lowerBound + i]
    }

    /// The references in a buffer of their own.
    public var array: [ObjectReference] { Array(buffer[bounds]) }

    /// Whether the two have the same references in the same order.
    public static func == (a: ObjectReferenceList, b: ObjectReferenceList) -> Bool { a.elementsEqual(b) }
    /// Whether the list has these references in this order.
    public static func == (a: ObjectReferenceList, b: [ObjectReference]) -> Bool { a.elementsEqual(b) }
    /// Whether the list has these references in this order.
    public static func == (a: [ObjectReference], b: ObjectReferenceList) -> Bool { a.elementsEqual(b) }

    /// Hashes the references in order (equal lists, equal hashes, wherever they lie).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for r in self { hasher.combine(r) }
    }

    /// The references, as an array prints.
    public var description: String { array.description }
}
