import Testing
import TripKit

/// The one resolver of `--dedupe`: each policy against each side a duplicate can meet.
@Suite("Duplicate resolver")
struct DuplicateResolverTests {
    static let key = DuplicateResolver.Key(attribute: "name", value: "Rome")
    static let first = RecordOrigin(source: "a.json", record: 1, line: 2)
    static let standing = RecordOrigin(source: "a.json", record: 3, line: 4)
    static let incoming = RecordOrigin(source: "b.csv", record: 7, line: 8)
    static let earlier = DuplicateResolver.Kept.earlier(firstSeen: first, standing: standing)
    static let storedBefore = DuplicateResolver.Kept.stored(rowID: 42, writtenThisRun: false)
    static let storedThisRun = DuplicateResolver.Kept.stored(rowID: 42, writtenThisRun: true)

    func decide(_ policy: DeduplicationPolicy, _ kept: DuplicateResolver.Kept) -> DuplicateResolver.Decision {
        DuplicateResolver(policy: policy).resolve(Self.key, kept: kept, incoming: Self.incoming)
    }

    @Test("each policy's outcome is the same whoever meets the duplicate", arguments: [
        (DeduplicationPolicy.first, DuplicateResolver.Outcome.keepKept), (.last, .takeIncoming), (.merge, .mergeIncomingIntoKept), (.fail, .refuse),
    ])
    func outcome(policy: DeduplicationPolicy, expected: DuplicateResolver.Outcome) {
        #expect(DuplicateResolver(policy: policy).outcome == expected)
        for kept in [Self.earlier, Self.storedBefore, Self.storedThisRun] {
            #expect(decide(policy, kept).outcome == expected)
        }
    }

    @Test("an earlier trip of the inputs: first drops the duplicate, last the standing record, merge merges it")
    func againstEarlierTrip() {
        let first = decide(.first, Self.earlier)
        #expect(first.setAside == SetAsideRecord(kind: .dropped, origin: Self.incoming,
                                                 reason: "duplicate name 'Rome': dropped, the first occurrence (a.json:2:1) wins"))
        let last = decide(.last, Self.earlier)
        #expect(last.setAside == SetAsideRecord(kind: .dropped, origin: Self.standing,
                                                reason: "duplicate name 'Rome': dropped, a later occurrence (b.csv:8:1) wins"))
        let merge = decide(.merge, Self.earlier)
        #expect(merge.setAside == SetAsideRecord(kind: .merged, origin: Self.incoming,
                                                 reason: "duplicate name 'Rome': merged into the trip first seen at a.json:2:1"))
        #expect(decide(.fail, Self.earlier).setAside == nil)
        #expect([first, last, merge].allSatisfy { !$0.replacesStoredTrip })
    }

    @Test("a trip the store held before the run: last replaces it and sets nothing aside")
    func againstStoredTrip() {
        #expect(decide(.first, Self.storedBefore).setAside == SetAsideRecord(
            kind: .dropped, origin: Self.incoming, reason: "duplicate name 'Rome': dropped, the trip the store holds (row id 42) stays"))
        let last = decide(.last, Self.storedBefore)
        #expect(last.setAside == nil && last.replacesStoredTrip)
        #expect(decide(.merge, Self.storedBefore).setAside == SetAsideRecord(
            kind: .merged, origin: Self.incoming, reason: "duplicate name 'Rome': merged into the trip the store holds (row id 42)"))
        let fail = decide(.fail, Self.storedBefore)
        #expect(fail.setAside == nil && !fail.replacesStoredTrip)
    }

    @Test("a row this run wrote: last counts the two as one written, one merged")
    func againstRowOfThisRun() {
        let last = decide(.last, Self.storedThisRun)
        #expect(!last.replacesStoredTrip)
        #expect(last.setAside == SetAsideRecord(kind: .merged, origin: Self.incoming,
                                                reason: "duplicate name 'Rome': replaced the trip written before it in this run (row id 42)"))
        #expect(decide(.first, Self.storedThisRun) == decide(.first, Self.storedBefore))
        #expect(decide(.merge, Self.storedThisRun) == decide(.merge, Self.storedBefore))
    }

    @Test("an object of any model: merged or dropped, naming the survivor; nothing under fail")
    func objects() {
        let described = "Trip with name 'Rome' (unique from 2.0.0)"
        func record(_ policy: DeduplicationPolicy) -> SetAsideRecord? {
            DuplicateResolver(policy: policy).setAsideObject(at: Self.incoming, described: described, survivor: Self.first)
        }
        #expect(record(.merge) == SetAsideRecord(kind: .merged, origin: Self.incoming,
                                                 reason: "another Trip with name 'Rome' (unique from 2.0.0): merged into the one at a.json:2:1"))
        #expect(record(.first) == SetAsideRecord(kind: .dropped, origin: Self.incoming, reason:
            "another Trip with name 'Rome' (unique from 2.0.0): dropped under --dedupe first, which keeps the one at a.json:2:1"))
        #expect(record(.last)?.reason == "another Trip with name 'Rome' (unique from 2.0.0): dropped under --dedupe last, which keeps the one at a.json:2:1")
        #expect(record(.fail) == nil)
    }

    @Test("fail's errors: among the inputs, against a store (with and without the incoming count), for objects")
    func refusals() {
        let r = DuplicateResolver(policy: .fail)
        let one = r.inputsRefusal(attribute: "name", names: ["'Rome'"], nameCount: 1, duplicateCount: 1)
        #expect(one.kind == .data && one.message == "1 name occurs more than once ('Rome'); --dedupe fail writes nothing")
        #expect(one.notes == ["1 duplicate record; use --dedupe merge, last or first to keep one per name"])
        let many = r.inputsRefusal(attribute: "name", names: ["'A'", "'B'", "'C'", "'D'", "'E'"], nameCount: 7, duplicateCount: 9)
        #expect(many.message == "7 names occur more than once ('A', 'B', 'C', 'D', 'E' and 2 more); --dedupe fail writes nothing")
        #expect(many.notes == ["9 duplicate records; use --dedupe merge, last or first to keep one per name"])

        let store = r.storeRefusal(place: "s.sqlite", attribute: "name", names: ["A", "B", "C", "D", "E", "F"], nameCount: 6, incomingCount: 6)
        #expect(store.message == "s.sqlite: 6 names are already in the store ('A', 'B', 'C', 'D', 'E' and 1 more); --dedupe fail writes nothing")
        #expect(store.notes == ["6 incoming trips would have changed stored ones; use --dedupe merge, last or first to let them"])
        let pg = r.storeRefusal(place: "postgresql:///db", attribute: "name", names: ["Rome"], nameCount: 1, incomingCount: nil)
        #expect(pg.message == "postgresql:///db: 1 name is already in the store ('Rome'); --dedupe fail writes nothing")
        #expect(pg.notes == ["use --dedupe merge, last or first to let them change stored trips"])

        let object = r.objectRefusal(at: Self.incoming, described: "Trip with name 'Rome' (unique from 2.0.0)", first: Self.first)
        #expect(object.kind == .data)
        #expect(object.message == "b.csv:8:1: a second Trip with name 'Rome' (unique from 2.0.0); the first is at a.json:2:1 (--dedupe fail: nothing is written)")
    }

    @Test("the merge of two trips: the later scalars, lists united by title, the later accommodation unless it has none")
    func mergeOfTwoTrips() {
        let earlier = object(TestTrip(name: "Paris", destination: "France", items: [("Louvre", "old", false, false), ("Eiffel", "", true, false)],
                                      accommodation: ("1 Rue", "Hotel A")))
        let later = object(TestTrip(name: "Paris", destination: "FR", start: "2024-07-01T00:00:00Z",
                                    items: [("Louvre", "new", true, true), ("Orsay", "", false, false)], accommodation: nil))
        let merged = DuplicateResolver.merge(earlier, with: later, entity: TripSchemaV3.rootEntity)
        #expect(merged == object(TestTrip(name: "Paris", destination: "FR", start: "2024-07-01T00:00:00Z",
                                          items: [("Louvre", "new", true, true), ("Eiffel", "", true, false), ("Orsay", "", false, false)],
                                          accommodation: ("1 Rue", "Hotel A"))))
    }
}
