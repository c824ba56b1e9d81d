/// The objects of a reader with the model's required to-one relationships enforced (a relationship
/// whose `isOptional` is false: Swift's `var guide: Guide`, Core Data's `optional="NO"`): an object
/// whose required to-one names no object (given as null or absent, or removed by its reader or a
/// plan's run as naming no object written) is rejected, not written with it empty; so is an object
/// whose required to-one names an object rejected so, at any depth; and every other reference to a
/// rejected object is removed from the object that makes it, which is kept (as a reference to an
/// object its reader refuses is).
///
/// Objects come entity by entity, so an object may be given before one it names is known rejected.
/// The input is therefore read first (`open` is called again for each read) to find the rejected
/// objects, until a read finds none that the read before it did not; the last read gives the objects.
/// Within a read, an object found rejected counts at once for the objects after it, so a read adds to
/// the rejected only where an object was given before one it names that the same read then rejected
/// (per entity: the first such object and the last rejected one are compared), and most inputs take
/// one read to find them and one to give them.
///
/// ```swift
/// if let required = ObjectRequiredRelationships(model) {
///     var reader = try ObjectRequiredRelationshipReader(required) { try openInput() }
///     try ObjectPipeline.run(&reader, into: &writer, summary: &summary) { log($0) }
/// }
/// ```
///
/// Held: the rejected objects' references, in `rejected` (a run's under its budget; in memory when
/// nil), from the first read to the run's end, and two integers per entity for the current read.
public struct ObjectRequiredRelationships: Sendable {
    public let model: ObjectModel
    /// Per entity, its required to-one relationships: their positions in its relationships, and names.
    public let required: [[(Int, String)]]

    /// The required to-one relationships of `model`'s entities; nil when it has none (its readers are
    /// then read as they are).
    public init?(_ model: ObjectModel) {
        let required = model.entities.indices.map { e in
            model.allRelationships(of: e).enumerated().filter { !$0.element.isToMany && !$0.element.isOptional }.map { ($0.offset, $0.element.name) }
        }
        guard required.contains(where: { !$0.isEmpty }) else { return nil }
        self.model = model; self.required = required
    }

    /// Whether `object` must be rejected, given the objects known rejected: the position of its first
    /// required to-one that names no object or a rejected one.
    func fault(of object: ObjectRecord, _ rejected: any ObjectReferenceSet) throws -> (position: Int, name: String, names: ObjectReference?)? {
        guard object.entity >= 0, object.entity < required.count else { return nil }
        for (position, name) in required[object.entity] {
            guard position < object.relationships.count, let target = object.relationships[position].first else {
                return (position, name, nil)
            }
            if !rejected.isEmpty, try rejected.contains(target) { return (position, name, target) }
        }
        return nil
    }

    /// The reason an object of `entity` is rejected for the relationship `name`: it names no object,
    /// or `names`, a rejected one.
    func reason(_ entity: Int, _ name: String, names: ObjectReference?) -> String {
        let own = "\(model.entities[entity].name).\(name)"
        guard let names else { return "\(own): names no object, and the model requires one" }
        let other = names.entity >= 0 && names.entity < model.entities.count ? model.entities[names.entity].name : "object"
        return "\(own): names a \(other) that is rejected, and the model requires one"
    }
}

/// A reader enforcing `ObjectRequiredRelationships` on the objects `open()` reads (see there).
public struct ObjectRequiredRelationshipReader: ObjectRecordReader {
    public let required: ObjectRequiredRelationships
    /// The objects rejected for a required relationship, known before the last read gives any object.
    public let rejected: any ObjectReferenceSet
    /// How many times the input was read (the reads that found the rejected objects, and the last).
    public private(set) var reads = 0
    private var input: any ObjectRecordReader
    /// Told of each reference removed from a kept object because it names a rejected one: the
    /// object, the relationship's name, and the object it named.
    private let removed: (ObjectRecord, String, ObjectReference) -> Void
    /// Per entity, its relationships' names.
    private let names: [[String]]

    public var model: ObjectModel { required.model }

    /// Finds the rejected objects of what `open()` reads (each call a reader of the same objects from
    /// the start), keeping them in `rejected` (in memory when nil), and opens the read that gives them;
    /// each reference removed from a kept object is told to `removed`.
    public init(_ required: ObjectRequiredRelationships, rejected: (any ObjectReferenceSet)? = nil,
                removed: @escaping (ObjectRecord, String, ObjectReference) -> Void = { _, _, _ in },
                open: () throws -> any ObjectRecordReader) throws {
        self.required = required; self.removed = removed
        names = required.model.entities.indices.map { required.model.allRelationships(of: $0).map(\.name) }
        let set = rejected ?? InMemoryReferenceSet()
        self.rejected = set
        let entities = required.model.entities.count
        while true {
            var reader = try open()
            reads += 1
            // Per entity: the first object (in this read) kept whose required to-one names an object of it,
            // and the last object of it rejected in this read.
            var firstNaming = Array(repeating: Int.max, count: entities), lastRejected = Array(repeating: -1, count: entities)
            var at = 0
            while let item = try reader.next() {
                guard case .object(let object) = item else { continue }
                at += 1
                guard object.entity >= 0, object.entity < entities, try !set.contains(object.reference) else { continue }
                if try required.fault(of: object, set) != nil {
                    try set.insert(object.reference)
                    if object.entity >= 0, object.entity < entities { lastRejected[object.entity] = at }
                    continue
                }
                for (position, _) in required.required[object.entity] {
                    let e = object.relationships[position][0].entity
                    if e >= 0, e < entities, firstNaming[e] == Int.max { firstNaming[e] = at }
                }
            }
            // Another read only where an object kept was given before one it names that this read rejected.
            if !(0..<entities).contains(where: { lastRejected[$0] > firstNaming[$0] }) { break }
        }
        input = try open()
        reads += 1
    }

    /// The next object, with references to rejected objects removed; an object rejected for a required
    /// relationship is a rejected record naming it, with the object's origin.
    public mutating func next() throws -> ObjectReadItem? {
        while let item = try input.next() {
            guard case .object(var object) = item else { return item }
            if try rejected.contains(object.reference) {
                let fault = try required.fault(of: object, rejected)
                let reason = fault.map { required.reason(object.entity, $0.name, names: $0.names) }
                    ?? "\(required.model.entities[object.entity].name): names a rejected object through a required relationship"
                return .rejected(SetAsideRecord(origin: object.origin, reason: reason))
            }
            if rejected.isEmpty { return .object(object) }
            let names = self.names[object.entity], removed = self.removed, given = object
            try object.removeReferences(where: { try rejected.contains($0) }) { r, reference in
                removed(given, r < names.count ? names[r] : "", reference)
            }
            return .object(object)
        }
        return nil
    }
}

extension ObjectRecord {
    /// Removes each reference `isGone` says names an object not written, telling `removed` its
    /// relationship's position and the reference; a relationship's array is copied only when one goes.
    public mutating func removeReferences(where isGone: (ObjectReference) throws -> Bool,
                                          removed: (Int, ObjectReference) -> Void) rethrows {
        for r in relationships.indices {
            let references = relationships[r]
            var kept: [ObjectReference]?
            for (i, reference) in references.enumerated() {
                if try isGone(reference) {
                    if kept == nil { kept = Array(references[..<i]) }
                    removed(r, reference)
                } else {
                    kept?.append(reference)
                }
            }
            if let kept { relationships.replace(r, with: kept) }
        }
    }
}
